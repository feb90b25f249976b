package metadata

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// readDirBatch is how many by-id entries are read at a time, so a walk's memory does not grow
// with the collection.
const readDirBatch = 512

// eachByID calls fn for every entry of by-id, in directory order, reading it in batches.
func (s *Store) eachByID(fn func(fs.DirEntry) error) error {
	d, err := os.Open(s.byID)
	if err != nil {
		return err
	}
	defer d.Close()
	for {
		entries, err := d.ReadDir(readDirBatch)
		for _, e := range entries {
			if err := fn(e); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// DocumentIDs calls fn with the id of every by-id directory that holds a document.json, in
// directory order. Entries whose names are not valid ids are skipped. An error from fn stops
// the walk and is returned as is.
func (s *Store) DocumentIDs(fn func(id string) error) error {
	var fnErr error
	err := s.eachByID(func(e fs.DirEntry) error {
		if !e.IsDir() || !ValidID(e.Name()) {
			return nil
		}
		fi, err := os.Lstat(filepath.Join(s.byID, e.Name(), documentName))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		if err := fn(e.Name()); err != nil {
			fnErr = err
			return err
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("list documents: %w", err)
	}
	return nil
}

// Links calls fn for every symlink under by-path with its slash-separated path relative to
// by-path and the id it points to ("" for a link that does not point to by-id/<valid id> of
// this store). Directories are visited in lexical order. An error from fn stops the walk and is
// returned as is.
func (s *Store) Links(fn func(rel, id string) error) error {
	var fnErr error
	err := filepath.WalkDir(s.byPath, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(s.byPath, p)
		if err != nil {
			return err
		}
		if err := fn(filepath.ToSlash(rel), s.targetID(filepath.Dir(p), target)); err != nil {
			fnErr = err
			return err
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("list links: %w", err)
	}
	return nil
}
