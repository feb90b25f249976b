package state

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []Module
		found bool
	}{
		{"neither file", nil, nil, false},
		{"state file", map[string]string{StateFile: `{"modules":[{"name":"a","uid":"u1"},{"name":"b","uid":""}]}`},
			mods("a@u1", "b"), true},
		{"state file wins over legacy", map[string]string{
			StateFile:  `{"modules":[{"name":"new","uid":"2"}]}`,
			LegacyFile: `{"modules":[{"name":"old"}]}`,
		}, mods("new@2"), true},
		{"legacy without uid", map[string]string{LegacyFile: `{"modules": [{"name": "a"}]}`}, mods("a"), true},
		{"legacy numeric and null uids, extra keys", map[string]string{
			LegacyFile: `{"modules":[{"name":"a","uid":12},{"name":"b","uid":1.50},{"name":"c","uid":null,"sortable_attributes":["x"]}],"other":1}`,
		}, mods("a@12", "b@1.50", "c"), true},
		{"legacy empty list", map[string]string{LegacyFile: `{"modules": []}`}, []Module{}, true},
		{"legacy bare list", map[string]string{LegacyFile: `[{"name":"timeout-module"}]`}, mods("timeout-module"), true},
		{"empty bare list", map[string]string{LegacyFile: " [ ]\n"}, []Module{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, found, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if found != tt.found || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Load = %#v, %v; want %#v, %v", got, found, tt.want, tt.found)
			}
			if found && got == nil {
				t.Error("found state must be a non-nil list, or Diff takes it for a first start")
			}
		})
	}
}

func TestLoadCorrupt(t *testing.T) {
	tests := []struct{ name, file, data, msg string }{
		{"truncated", StateFile, `{"modules":[{"name":"a"}`, "unexpected end of JSON"},
		{"empty file", StateFile, ``, "unexpected end of JSON"},
		{"no modules key", StateFile, `{"mods":[]}`, `no "modules" list`},
		{"modules null", LegacyFile, `{"modules":null}`, `no "modules" list`},
		{"missing name", LegacyFile, `{"modules":[{"name":"a"},{"uid":"1"}]}`, "modules[1]: missing name"},
		{"name not a string", StateFile, `{"modules":[{"name":3}]}`, "cannot unmarshal number"},
		{"uid object", LegacyFile, `{"modules":[{"name":"a","uid":{"x":1}}]}`, "modules[0].uid: must be a string or a number"},
		{"not a list", LegacyFile, `"a"`, "cannot unmarshal string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := Load(dir)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("Load = %v; want ErrCorrupt naming %s and %q", err, tt.file, tt.msg)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	// A directory where the file should be: not "missing", not corrupt, a read error.
	if err := os.Mkdir(filepath.Join(dir, StateFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(dir); err == nil || errors.Is(err, ErrCorrupt) {
		t.Errorf("Load = %v; want a read error", err)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	lists := [][]Module{mods("a@u-1", "b", `q"x@\u00e9`), mods(), mods("b@2")}
	for _, want := range lists {
		if err := Save(dir, want); err != nil {
			t.Fatal(err)
		}
		got, found, err := Load(dir)
		if err != nil || !found || !reflect.DeepEqual(got, want) {
			t.Fatalf("Load after Save(%v) = %v, %v, %v", want, got, found, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"modules\":[{\"name\":\"b\",\"uid\":\"2\"}]}\n"; string(data) != want {
		t.Errorf("file = %q, want %q", data, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only %s (no temp files left)", len(entries), StateFile)
	}
}

func TestSaveUnchangedWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, StateFile)
	if err := Save(dir, mods("a@1")); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(dir, mods("a@1")); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("saving the same list replaced the file")
	}
	if err := Save(dir, mods("a@2")); err != nil {
		t.Fatal(err)
	}
	if changed, err := os.Stat(path); err != nil || os.SameFile(before, changed) {
		t.Errorf("saving a new list did not replace the file (err %v)", err)
	}
}

func TestSaveMissingDirectory(t *testing.T) {
	err := Save(filepath.Join(t.TempDir(), "absent"), mods("a"))
	if err == nil || !strings.HasPrefix(err.Error(), "save module state: ") {
		t.Errorf("Save = %v; want a wrapped error", err)
	}
}
