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
	if err := durable.ReplaceFile(dir, "."+filepath.Base(path)+".*", path, data, 0o644, true); err != nil {
		return err
	}
	return durable.SyncDir(dir)
}
