package logging

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestNewJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l, err := New(&buf, "INFO", "json")
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UTC().Truncate(time.Second)
	cl := Component(l, "reaper")
	cl.Info().Int("n", 3).Msg("requeued")
	after := time.Now().UTC()

	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("output %q is not one JSON object: %v", buf.String(), err)
	}
	for k, want := range map[string]any{"level": "info", "message": "requeued", "component": "reaper", "n": 3.0} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v (line %s)", k, got[k], want, buf.String())
		}
	}
	ts, _ := got["time"].(string)
	when, err := time.Parse(time.RFC3339, ts)
	if err != nil || !strings.HasSuffix(ts, "Z") {
		t.Fatalf("time %q is not RFC 3339 in UTC: %v", ts, err)
	}
	if when.Before(before) || when.After(after) {
		t.Errorf("time %v not within [%v, %v]", when, before, after)
	}
}

func TestNewLevels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level string
		want  []string // messages that get through, of debug, info, warn, error
	}{
		{"", []string{"i", "w", "e"}},
		{"debug", []string{"d", "i", "w", "e"}},
		{"Info", []string{"i", "w", "e"}},
		{"WARNING", []string{"w", "e"}},
		{"warn", []string{"w", "e"}},
		{"error", []string{"e"}},
	}
	for _, tt := range tests {
		t.Run(tt.level, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			l, err := New(&buf, tt.level, "")
			if err != nil {
				t.Fatal(err)
			}
			l.Debug().Msg("d")
			l.Info().Msg("i")
			l.Warn().Msg("w")
			l.Error().Msg("e")
			var got []string
			dec := json.NewDecoder(&buf)
			for dec.More() {
				var line struct{ Message string }
				if err := dec.Decode(&line); err != nil {
					t.Fatal(err)
				}
				got = append(got, line.Message)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("logged %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNewConsole(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l, err := New(&buf, "debug", "Console")
	if err != nil {
		t.Fatal(err)
	}
	cl := Component(l, "scanner")
	cl.Warn().Str("path", "a/b.txt").Msg("cannot read")
	out := buf.String()
	if strings.HasPrefix(out, "{") {
		t.Fatalf("console output is JSON: %q", out)
	}
	for _, want := range []string{"WRN", "cannot read", "component=scanner", "path=a/b.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("console output %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("console output to a buffer is coloured: %q", out)
	}
	ts, _, _ := strings.Cut(out, " ")
	if _, err := time.Parse(time.RFC3339, ts); err != nil || !strings.HasSuffix(ts, "Z") {
		t.Errorf("console line starts with %q, want an RFC 3339 UTC time: %v", ts, err)
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	if _, err := New(&bytes.Buffer{}, "verbose", "json"); err == nil || !strings.Contains(err.Error(), `unknown log level "verbose"`) {
		t.Errorf("bad level: error = %v", err)
	}
	if _, err := New(&bytes.Buffer{}, "info", "xml"); err == nil || !strings.Contains(err.Error(), `unknown log format "xml"`) {
		t.Errorf("bad format: error = %v", err)
	}
}

func TestParseLevel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]zerolog.Level{
		"debug": zerolog.DebugLevel, "INFO": zerolog.InfoLevel, " warn ": zerolog.WarnLevel,
		"Warning": zerolog.WarnLevel, "ERROR": zerolog.ErrorLevel,
	} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "trace", "fatal", "inf"} {
		if _, err := ParseLevel(in); err == nil {
			t.Errorf("ParseLevel(%q) succeeded, want an error", in)
		}
	}
}

func TestIsTerminal(t *testing.T) {
	t.Parallel()
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is reported as a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(w) {
		t.Error("a pipe is reported as a terminal")
	}
}
