package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
	"github.com/rs/zerolog"
)

func TestModuleRun(t *testing.T) {
	t.Parallel()
	out := moduletest.Run(t, module{}, moduletest.File("hello.txt", "hello"))
	o := out[0]
	if !o.Ran || string(o.Fields["note"]) != `"hello"` || string(o.Content) != `"hello world"` {
		t.Errorf("outcome %+v", o)
	}
	if v, err := parseVersion(o.Files["version.json"]); err != nil || v != 1 {
		t.Errorf("version.json %q: %d, %v", o.Files["version.json"], v, err)
	}
}

func TestModuleCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string // "" for no version.json
		want    bool
	}{{"", true}, {`{"version": 1}`, false}, {`{"version": 0}`, true}, {`not json`, true}} {
		dir := t.TempDir()
		if tc.version != "" {
			if err := os.WriteFile(filepath.Join(dir, "version.json"), []byte(tc.version), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := module{}.Check(context.Background(), &sdk.Job{MetadataDir: dir, Log: zerolog.Nop()})
		if err != nil || got != tc.want {
			t.Errorf("version.json %q: Check = %v, %v; want %v", tc.version, got, err, tc.want)
		}
	}
}
