package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run and sync with an INDEX_DIRECTORY that does not exist, or is a file, exit 2 with a
// message naming the variable, and create nothing: no state, metadata or files directory.
func TestMissingIndexDirectoryExits2AndCreatesNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, want string }{{"missing", "does not exist"}, {"file", "is not a directory"}} {
		for _, cmd := range []string{"run", "sync"} {
			t.Run(c.name+"/"+cmd, func(t *testing.T) {
				t.Parallel()
				d := newDaemonEnv(t)
				files := filepath.Join(d.base, "not-here")
				if c.name == "file" {
					if err := os.WriteFile(files, []byte("x"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				for _, name := range []string{"INDEX_DIRECTORY", "FILES_DIRECTORY"} { // the alias names itself
					d.vars["INDEX_DIRECTORY"], d.vars["FILES_DIRECTORY"] = "", ""
					d.vars[name] = files
					d.plain = true
					_, stderr, code := d.run(cmd)
					if code != 2 {
						t.Fatalf("%s with %s=%s: exit %d, want 2\n%s", cmd, name, files, code, stderr)
					}
					if !strings.Contains(stderr, name) || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, files) {
						t.Errorf("stderr does not name %s, its value and %q:\n%s", name, c.want, stderr)
					}
					for _, dir := range []string{d.vars["STATE_DIRECTORY"], d.vars["METADATA_DIRECTORY"]} {
						if _, err := os.Stat(dir); !os.IsNotExist(err) {
							t.Errorf("%s was created (%v)", dir, err)
						}
					}
					if fi, err := os.Stat(files); c.name == "missing" && !os.IsNotExist(err) || c.name == "file" && (err != nil || fi.IsDir()) {
						t.Errorf("%s changed: %v", files, err)
					}
				}
			})
		}
	}
}
