package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/homeindex/homeindex/internal/durable"
)

// savedFile is what Save writes.
type savedFile struct {
	Modules []savedModule `json:"modules"`
}

type savedModule struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// Save writes mods to STATE_DIRECTORY/modules_state.json atomically (temp file, fsync, rename,
// fsync dir), so a crash leaves the old list or the new one. It writes nothing when the file
// already holds the same bytes. The legacy file is left alone: Load prefers StateFile.
func Save(stateDir string, mods []Module) error {
	file := savedFile{Modules: make([]savedModule, len(mods))}
	for i, m := range mods {
		file.Modules[i] = savedModule(m)
	}
	data, err := json.Marshal(file)
	if err != nil {
		return fmt.Errorf("save module state: %w", err)
	}
	data = append(data, '\n')
	if err := writeAtomic(filepath.Join(stateDir, StateFile), data); err != nil {
		return fmt.Errorf("save module state: %w", err)
	}
	return nil
}

// writeAtomic replaces path with data unless it already holds exactly data.
func writeAtomic(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return durable.SyncDir(dir)
}
