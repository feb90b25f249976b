// Package state compares the configured MODULES with the list saved at the last start, to find
// the requeue point: the first position where name, uid or order differs.
//
// Start-up order: Load, Diff, apply Plan.Rewind to every document's next in the catalog and
// purge queue items of Plan.UIDChanged modules, commit, and only then Save. A crash before
// Save replays the same plan on the next start, and Rewind gives the same answers when applied
// to its own output, so nothing is requeued twice or lost.
package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File names inside STATE_DIRECTORY.
const (
	// StateFile is the module list homeindexd saves.
	StateFile = "modules_state.json"
	// LegacyFile is the module list upstream saved (its MODULES_CONFIG_FILE_PATH); read only
	// when StateFile is absent.
	LegacyFile = "modules_config.json"
)

// ErrCorrupt reports a state file that cannot be read as a module list; the wrapping error
// names the file and the problem.
var ErrCorrupt = errors.New("corrupt module state")

// Module is one entry of the module list: its name and the uid of its build.
type Module struct{ Name, UID string }

// Load reads STATE_DIRECTORY/modules_state.json ({"modules":[{"name","uid",...}]}), falling back
// to upstream's modules_config.json (same shape; uid may be missing, null or a number, and a
// bare array is accepted too, as upstream's tests wrote one). Extra keys are ignored. Missing
// both → (nil, false, nil): first start. When found, mods is non-nil even if empty, because
// Diff tells "no previous state" (nil) from "no modules" (empty).
func Load(stateDir string) (mods []Module, found bool, err error) {
	for _, name := range []string{StateFile, LegacyFile} {
		path := filepath.Join(stateDir, name)
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("load module state: %w", err)
		}
		mods, err := decode(data)
		if err != nil {
			return nil, false, fmt.Errorf("load module state: %s: %w: %w", path, ErrCorrupt, err)
		}
		return mods, true, nil
	}
	return nil, false, nil
}

// entry is one saved module; UID is raw so that upstream's numbers and nulls read back.
type entry struct {
	Name *string         `json:"name"`
	UID  json.RawMessage `json:"uid"`
}

// decode parses {"modules": [...]} or a bare [...].
func decode(data []byte) ([]Module, error) {
	var entries []entry
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &entries); err != nil {
			return nil, err
		}
	} else {
		var file struct {
			Modules *[]entry `json:"modules"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			return nil, err
		}
		if file.Modules == nil {
			return nil, errors.New(`no "modules" list`)
		}
		entries = *file.Modules
	}
	mods := make([]Module, 0, len(entries))
	for i, e := range entries {
		if e.Name == nil || *e.Name == "" {
			return nil, fmt.Errorf("modules[%d]: missing name", i)
		}
		uid, err := decodeUID(e.UID)
		if err != nil {
			return nil, fmt.Errorf("modules[%d].uid: %w", i, err)
		}
		mods = append(mods, Module{Name: *e.Name, UID: uid})
	}
	return mods, nil
}

// decodeUID reads a uid as upstream compared it (str(uid)): a string as is, a number as
// written, null or missing as "".
func decodeUID(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return "", err
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	default:
		return "", fmt.Errorf("must be a string or a number, found %s", raw)
	}
}
