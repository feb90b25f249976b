package main

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/sdk"
)

// CRASH_ON: the module dies only on files whose path contains the text.
func TestCrashOnMatchingPathOnly(t *testing.T) {
	t.Parallel()
	exits := 0
	m := module{crashOn: "poison", exit: func(int) { exits++ }}
	for _, c := range []struct {
		path  string
		exits int
	}{{"/files/a.txt", 0}, {"/files/archive/usb/poison.bin", 1}, {"/files/b.txt", 1}} {
		job := &sdk.Job{Path: c.path, MetadataDir: t.TempDir(), Log: zerolog.Nop()}
		if _, err := m.Run(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		if exits != c.exits {
			t.Fatalf("after %s: %d exits, want %d", c.path, exits, c.exits)
		}
	}
}
