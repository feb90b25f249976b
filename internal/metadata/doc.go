// Package metadata owns the metadata directory (METADATA_DIRECTORY):
//
//	by-id/<id>/document.json          one document per unique content
//	by-id/<id>/<module>/...           module output: content.json, chunks.json, log.txt, ...
//	by-path/<relpath>                 relative symlink to ../…/by-id/<id>
//	.tmp/                             temp files of in-flight atomic writes, and spares (see CleanTemp)
//
// Every write is atomic (temp file, fsync, rename, fsync of the directory) and skipped when the
// bytes on disk are already identical, so replaying a write changes nothing. A document.json
// (or a synced file) that is replaced is written into a spare file of .tmp instead, which is
// then exchanged with it (durable.Spares): a module hop makes and frees no inode. Every method that
// takes an id, a module name or a relative path validates it first, so nothing is ever written
// outside the root. A Store is safe for concurrent use; concurrent writes to the same id or path
// end with one of them in place.
package metadata
