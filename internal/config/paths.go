package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// directories reads the four directories and computes where the archive, metadata and state
// directories sit inside INDEX_DIRECTORY.
func (e *env) directories(c *Config) {
	index, indexVar := e.aliased(envIndexDirectory, envFilesDirectory, DefaultIndexDirectory, samePath)
	indexOK := e.absolute(indexVar, index, &c.IndexDirectory)
	c.indexVar = indexVar
	metaOK := e.absolute(envMetadataDirectory, e.str(envMetadataDirectory, DefaultMetadataDirectory), &c.MetadataDirectory)
	stateOK := e.absolute(envStateDirectory, e.str(envStateDirectory, DefaultStateDirectory), &c.StateDirectory)

	archive := e.value(envArchiveDirectory)
	if archive == "" {
		if !indexOK {
			return // the default depends on INDEX_DIRECTORY, already reported
		}
		archive = filepath.Join(c.IndexDirectory, DefaultArchiveName)
	}
	archiveOK := e.absolute(envArchiveDirectory, archive, &c.ArchiveDirectory)
	if !indexOK || !archiveOK {
		return
	}

	if rel, inside := within(c.IndexDirectory, c.ArchiveDirectory); inside && rel != "" {
		c.ArchiveRel = rel
	} else {
		e.problemf(envArchiveDirectory, c.ArchiveDirectory, "must be a directory inside %s %q", indexVar, c.IndexDirectory)
	}

	// The walk skips the metadata and state directories when they live inside the index. They
	// may not be the index itself (nothing would be indexed) nor sit among the drives, where
	// they would be taken for one or vanish with one.
	e.ownDirectory(envMetadataDirectory, metaOK, c.MetadataDirectory, indexVar, c, &c.MetadataRel)
	e.ownDirectory(envStateDirectory, stateOK, c.StateDirectory, indexVar, c, &c.StateRel)
}

// CheckIndexDirectory reports, as *Error, an IndexDirectory that does not exist or is not a
// directory. The commands that sync call it before they create anything: the defaults are
// container paths, and a daemon started elsewhere with a mistyped or unmounted path must say so
// rather than leave an empty state and metadata directory behind.
func (c *Config) CheckIndexDirectory() error {
	name := c.indexVar
	if name == "" {
		name = envIndexDirectory
	}
	fi, err := os.Stat(c.IndexDirectory)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Problems: []string{fmt.Sprintf("%s %q: does not exist; set %s to the folder to index (the default %s is the path inside the container)",
			name, c.IndexDirectory, name, DefaultIndexDirectory)}}
	case err != nil:
		return &Error{Problems: []string{fmt.Sprintf("%s %q: %v", name, c.IndexDirectory, err)}}
	case !fi.IsDir():
		return &Error{Problems: []string{fmt.Sprintf("%s %q: is not a directory", name, c.IndexDirectory)}}
	}
	return nil
}

// ownDirectory checks a directory the daemon writes to against the index and archive
// directories and sets *rel to its place inside the index ("" when outside).
func (e *env) ownDirectory(name string, ok bool, dir, indexVar string, c *Config, rel *string) {
	if !ok {
		return
	}
	r, inside := within(c.IndexDirectory, dir)
	switch {
	case inside && r == "":
		e.problemf(name, dir, "must not be %s itself", indexVar)
	case c.ArchiveRel != "" && isWithin(c.ArchiveDirectory, dir):
		e.problemf(name, dir, "must not be inside %s %q", envArchiveDirectory, c.ArchiveDirectory)
	case inside:
		*rel = r
	}
}

// absolute stores the cleaned path in *dst when it is absolute, and reports it otherwise.
func (e *env) absolute(name, p string, dst *string) bool {
	if !filepath.IsAbs(p) {
		e.problemf(name, p, "must be an absolute path")
		return false
	}
	*dst = filepath.Clean(p)
	return true
}

// within reports whether child is parent or below it and, if so, child's path relative to
// parent in slash form ("" when they are equal). Both paths must be clean and absolute.
func within(parent, child string) (string, bool) {
	rel, err := filepath.Rel(parent, child)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	if rel == "." {
		return "", true
	}
	return filepath.ToSlash(rel), true
}

// isWithin reports whether child is parent or below it.
func isWithin(parent, child string) bool {
	_, inside := within(parent, child)
	return inside
}

func samePath(a, b string) bool { return filepath.Clean(a) == filepath.Clean(b) }
