// Package scanner is the filesystem half of a sync: it walks the files tree, hashes file
// content (xxh64, the document id) and detects MIME types. It keeps no state; the caller owns
// the hash cache (keyed by device, inode, size and mtime) and decides what to hash.
//
// The package is Linux-only: it walks with openat/fstatat relative to directory descriptors so
// that a directory swapped for a symlink mid-walk is never followed.
package scanner
