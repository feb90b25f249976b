package sdk

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/redisconn"
	"github.com/rs/zerolog"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig(envOf(map[string]string{
		"QUEUE_NAME":         "ocr",
		"MODULE_UID":         "u1",
		"MODULES":            "- name: ocr\n  uid: u1\n  filterable_attributes: [x]\n- name: caption\n  uid: 42\n",
		"REDIS_HOST":         "http://redis:6379",
		"TIMEOUT":            "1.5",
		"WORKER_ID":          "w7",
		"RESOURCE_SHARES":    "- name: gpu\n  seconds: 30\n- name: licence\n  seconds: 0.5\n",
		"METADATA_DIRECTORY": "/m",
		"FILES_DIRECTORY":    "/f",
		"UID_RETRY_SECONDS":  "2",
		"LOGGING_LEVEL":      "WARNING",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Module: "ocr", UID: "u1", Modules: []ModuleEntry{{"ocr", "u1"}, {"caption", "42"}},
		Redis: redisconn.Endpoint{Addr: "redis:6379"}, Timeout: 1500 * time.Millisecond, WorkerID: "w7",
		Shares: []Share{{"gpu", 30 * time.Second}, {"licence", 500 * time.Millisecond}}, MetadataDir: "/m", FilesDir: "/f",
		UIDRetry: 2 * time.Second, LogLevel: zerolog.WarnLevel}
	if got := c; got.Module != want.Module || got.UID != want.UID || got.Redis != want.Redis || got.Timeout != want.Timeout ||
		got.WorkerID != want.WorkerID || got.MetadataDir != want.MetadataDir || got.FilesDir != want.FilesDir ||
		got.UIDRetry != want.UIDRetry || got.LogLevel != want.LogLevel ||
		!equalSlices(got.Modules, want.Modules) || !equalSlices(got.Shares, want.Shares) {
		t.Errorf("LoadConfig =\n%+v\nwant\n%+v", got, want)
	}

	d, err := LoadConfig(envOf(map[string]string{"MODULE_NAME": "m"}))
	if err != nil {
		t.Fatal(err)
	}
	d, err = d.withDefaults()
	if err != nil || d.Timeout != 30*time.Second || d.UIDRetry != 600*time.Second || d.Redis.Addr != "redis:6379" ||
		d.MetadataDir != "/home-index/metadata" || d.FilesDir != "/files" || d.ShareTTL != d.Timeout ||
		len(d.WorkerID) != 36 || d.Modules != nil || d.LogLevel != zerolog.InfoLevel {
		t.Errorf("defaults: %+v, %v", d, err)
	}
}

func equalSlices[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLoadConfigProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{}, []string{"MODULE_NAME (or QUEUE_NAME) is required"}},
		{map[string]string{"MODULE_NAME": "a", "QUEUE_NAME": "b"}, []string{`MODULE_NAME="a" and QUEUE_NAME="b" differ`}},
		{map[string]string{"MODULE_NAME": "Bad Name", "TIMEOUT": "0", "UID_RETRY_SECONDS": "soon", "REDIS_HOST": "tcp://x"},
			[]string{`MODULE_NAME="Bad Name"`, `TIMEOUT="0": want a number of seconds > 0`, `UID_RETRY_SECONDS="soon"`, `unsupported scheme "tcp"`}},
		{map[string]string{"MODULE_NAME": "m", "RESOURCE_SHARES": `- name: gpu\n  seconds: 1`},
			[]string{"RESOURCE_SHARES: invalid YAML", `literal \n`}},
		{map[string]string{"MODULE_NAME": "m", "RESOURCE_SHARES": "- name: gpu\n  secs: 1\n- name: gpu\n  seconds: -1\n- name: a b\n  seconds: x\n"},
			[]string{`entry 0: unknown field "secs"`, "entry 0: seconds is required", `entry 1: seconds "-1"`, `entry 1: group "gpu" given twice`, `entry 2: name "a b"`, `entry 2: seconds "x"`}},
		{map[string]string{"MODULE_NAME": "m", "RESOURCE_SHARES": "gpu: 30"}, []string{"want a YAML list, found a mapping"}},
		{map[string]string{"MODULE_NAME": "m", "MODULES": "- uid: x\n"}, []string{"MODULES: entry 0: name is required"}},
		{map[string]string{"MODULE_NAME": "m", "MODULES": "[unclosed"}, []string{"MODULES: invalid YAML"}},
		{map[string]string{"MODULE_NAME": "m", "LOGGING_LEVEL": "loud", "LOG_FORMAT": "xml"}, []string{"LOGGING_LEVEL", "LOG_FORMAT"}},
		{map[string]string{"MODULE_NAME": "m", "REDIS_TLS_CA_FILE": "/nonexistent.pem"}, []string{"REDIS_TLS_CA_FILE"}},
	} {
		_, err := LoadConfig(envOf(tc.env))
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("LoadConfig(%v) = %v, want a *ConfigError", tc.env, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("LoadConfig(%v):\n%v\nwant it to contain %q", tc.env, err, w)
			}
		}
	}
}

// TestUIDCheck (scenario 12): MODULE_UID must match this module's MODULES entry; an absent
// entry is as fatal. Without MODULES there is nothing to check.
func TestUIDCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		uid, modules string
		ok           bool
	}{
		{"u1", "- name: m\n  uid: u1\n", true},
		{"123", "- name: m\n  uid: 123\n", true},
		{"", "- name: m\n", true},
		{"u1", "", true},
		{"bad", "- name: m\n  uid: u1\n", false},
		{"", "- name: m\n  uid: u1\n", false},
		{"u1", "- name: other\n  uid: u1\n", false},
		{"u1", "[]", false}, // an empty list names no modules, this one included
		// Keys and rules that only the daemon reads do not stop a module.
		{"u1", "- name: m\n  uid: u1\n  window: lots\n  future_key: 1\n- name: Other.Name\n", true},
	} {
		c, err := LoadConfig(envOf(map[string]string{"MODULE_NAME": "m", "MODULE_UID": tc.uid, "MODULES": tc.modules}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewWorker(c, &handler{})
		if ok := err == nil; ok != tc.ok || (!ok && !errors.Is(err, ErrMisconfigured)) {
			t.Errorf("MODULE_UID=%q MODULES=%q: NewWorker = %v, want ok=%v", tc.uid, tc.modules, err, tc.ok)
		}
	}
}

// TestMainExitCodes: run logs "fatal mis-configuration" and exits 1 for a uid that disagrees
// with MODULES, and lists invalid values with exit 2.
func TestMainExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		code int
		want string
	}{
		{map[string]string{"MODULE_NAME": "m", "MODULE_UID": "bad", "MODULES": "- name: m\n  uid: good\n"}, ExitFatal, `"level":"fatal"`},
		{map[string]string{"MODULE_NAME": "m", "MODULE_UID": "bad", "MODULES": "- name: m\n  uid: good\n"}, ExitFatal, "fatal mis-configuration"},
		{map[string]string{"MODULE_NAME": "m", "RESOURCE_SHARES": "- name: gpu"}, ExitConfig, "invalid configuration"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), &handler{}, envOf(tc.env), &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run(%v) = %d, stderr %s; want %d and %q", tc.env, code, stderr.String(), tc.code, tc.want)
		}
	}
}
