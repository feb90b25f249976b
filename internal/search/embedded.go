package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// The embedded backend: one SQLite file (WAL) holding, per collection, a documents table
// (the JSON text, plus the "flat" facet object as JSONB, see facets.go) and a contentless
// FTS5 table over the document's text (searchText: its strings and numbers). One writer connection
// serializes writes; a small pool serves reads concurrently.

const (
	embeddedBusyTimeoutMS = 5000
	embeddedReaders       = 4
	// Page caches. SQLite here (modernc.org/sqlite, built with SQLITE_ENABLE_MEMORY_MANAGEMENT)
	// keeps one page cache for all the connections of the process, bounded by the sum of
	// their cache sizes, so a connection's cache_size is its share of a common budget, not a
	// bound of its own: an idle connection's share goes to a busy one. With 16 MiB for the
	// writer and for each reader, a first sync's index writer held 29 MiB of pages once the
	// catalog's readers fell idle (peak RSS 131 MB against 97 MB; docs/benchmarks.md,
	// "Thirty-third pass").
	//
	// The writer's share holds the indexes' inner pages (a leaf it misses comes from the OS
	// page cache by pread): 64 MiB made a 100k-file sync peak at 234 MB against 84 MB at 20k
	// files with 16 MiB, with no measurable loss of ingest speed. 12 MiB, with the readers'
	// idle shares beside it, keeps a 100k-file first sync near 110 MB; 8 MiB was slower.
	embeddedCacheKiB = 12 << 10
	// embeddedReaderCacheKiB is a reader's share: its reads go through the memory map, but
	// for pages newer in the WAL.
	embeddedReaderCacheKiB = 2 << 10
	embeddedMmapBytes      = 1 << 30
	// analyzeMinWrites is the least number of writes between two refreshes of the planner
	// statistics.
	analyzeMinWrites = 1000
	filesCollection  = "files"
	chunksCollection = "chunks"
)

type embeddedIndex struct {
	writer *sql.DB // one connection, BEGIN IMMEDIATE
	reader *sql.DB // read-only connections
	// writeMu orders writes (and settings changes) in this process; the single writer
	// connection would serialize them anyway, but Configure and Upsert also read the
	// collection settings, which must not change under them.
	writeMu sync.Mutex
	files   *embeddedCollection
	chunks  *embeddedCollection

	// table holds per-file search data in memory (embedded_table.go); bg runs its builds
	// until Close cancels bgCtx. tableOff (tests) keeps every search on SQL.
	table    *fileTable
	bg       sync.WaitGroup
	bgCtx    context.Context
	bgCancel context.CancelFunc
	closed   bool // guarded by table.mu
	tableOff bool
	// tableSearches counts the searches answered with the file table, tableSQLFilters those
	// of them whose filter SQL evaluated (tests read both; per index, so tests running in
	// parallel do not see each other's searches).
	tableSearches, tableSQLFilters atomic.Int64
	// upgrades says what opening the index changed in a layout an earlier version wrote
	// (Upgrades); set by OpenEmbedded only.
	upgrades []string
}

// Upgrades lists what opening ix rewrote in an index written by an earlier version (say, its
// sort key columns added to every document), with how long each took: a process that opens
// an index logs them, since such a pass over a large index can take a while. Nothing for an
// index already in the current layout, or another backend.
func Upgrades(ix Index) []string {
	if e, ok := backend(ix).(*embeddedIndex); ok {
		return e.upgrades
	}
	return nil
}

// OpenEmbedded opens (creating if needed) the embedded index stored in the SQLite file at
// path. It is safe for concurrent use; one process should own the file.
func OpenEmbedded(path string) (Index, error) {
	writerDSN, readerDSN, err := embeddedDSNs(path)
	if err != nil {
		return nil, fmt.Errorf("open embedded index: %w", err)
	}
	writer := sqlitedb.Open(writerDSN)
	writer.SetMaxOpenConns(1)
	ix := &embeddedIndex{writer: writer, table: newFileTable()}
	ix.bgCtx, ix.bgCancel = context.WithCancel(context.Background())
	if err := ix.createSchema(); err != nil {
		writer.Close()
		return nil, fmt.Errorf("open embedded index %s: %w", path, err)
	}
	reader := sqlitedb.Open(readerDSN)
	reader.SetMaxOpenConns(max(embeddedReaders, runtime.GOMAXPROCS(0)))
	reader.SetMaxIdleConns(max(embeddedReaders, runtime.GOMAXPROCS(0)))
	ix.reader = reader
	ix.files = &embeddedCollection{ix: ix, name: filesCollection}
	ix.chunks = &embeddedCollection{ix: ix, name: chunksCollection}
	for _, c := range []*embeddedCollection{ix.files, ix.chunks} {
		if err := c.loadSettings(); err != nil {
			ix.Close()
			return nil, fmt.Errorf("open embedded index %s: %w", path, err)
		}
	}
	return ix, nil
}

// embeddedDSNs returns the data source names of the embedded index's writer and of its
// readers for the SQLite file at path.
func embeddedDSNs(path string) (writer, reader string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	// An SQLite URI: escape the characters that would end the path.
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(abs)
	pragmas := fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"+
		"&_pragma=temp_store(MEMORY)&_pragma=%s", embeddedBusyTimeoutMS, sqlitedb.WALCheckpointPragma)
	// The writer reads through its page cache alone: a memory map would make every page an
	// ingest touches resident in this process (peak RSS growing with the index), where the
	// cache bounds it.
	writer = uri + pragmas + fmt.Sprintf("&_pragma=cache_size(%d)&_pragma=mmap_size(0)&_txlock=immediate", -embeddedCacheKiB)
	reader = uri + pragmas + fmt.Sprintf("&_pragma=cache_size(%d)&_pragma=mmap_size(%d)&_query_only=1", -embeddedReaderCacheKiB, embeddedMmapBytes)
	return writer, reader, nil
}

func (ix *embeddedIndex) createSchema() error {
	stmts := []string{`CREATE TABLE IF NOT EXISTS settings (
		collection TEXT PRIMARY KEY,
		value TEXT NOT NULL
	)`}
	for _, c := range []string{filesCollection, chunksCollection} {
		stmts = append(stmts,
			// seq aliases the rowid, which the FTS table shares.
			fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s_docs (
				seq INTEGER PRIMARY KEY,
				id TEXT NOT NULL UNIQUE,
				doc TEXT NOT NULL,
				text_hash INTEGER
			)`, c),
			fmt.Sprintf(`CREATE VIRTUAL TABLE IF NOT EXISTS %s_fts USING fts5(
				text, content='', contentless_delete=1,
				tokenize='unicode61 remove_diacritics 2'
			)`, c))
	}
	// The generation every write transaction increments (fileTable).
	stmts = append(stmts, `INSERT OR IGNORE INTO settings(collection, value) VALUES ('`+genKey+`', '0')`)
	for _, s := range stmts {
		if _, err := ix.writer.Exec(s); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	// Indexes made before text_hash existed get the column; their rows hold NULL, which
	// matches no hash, so each row's full text is written again at its next upsert.
	for _, c := range []string{filesCollection, chunksCollection} {
		has, err := hasColumn(ix.writer, c+"_docs", "text_hash")
		if err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		if !has {
			if _, err := ix.writer.Exec(`ALTER TABLE ` + c + `_docs ADD COLUMN text_hash INTEGER`); err != nil {
				return fmt.Errorf("create schema: add text_hash to %s_docs: %w", c, err)
			}
		}
	}
	return nil
}

// hasColumn reports whether table has the column (an index written by an earlier version may
// lack it, or still have one since replaced).
func hasColumn(db *sql.DB, table, column string) (bool, error) {
	var n int
	err := db.QueryRow(`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n)
	return n > 0, err
}

func (ix *embeddedIndex) Files() Collection  { return ix.files }
func (ix *embeddedIndex) Chunks() Collection { return ix.chunks }
func (ix *embeddedIndex) Name() string       { return "embedded" }

// Close closes the database after letting SQLite refresh its query planner statistics.
func (ix *embeddedIndex) Close() error {
	if ix.table != nil {
		ix.table.mu.Lock()
		ix.closed = true
		ix.table.mu.Unlock()
		ix.bgCancel()
		ix.bg.Wait()
	}
	var errs []error
	if ix.reader != nil {
		errs = append(errs, ix.reader.Close())
	}
	if _, err := ix.writer.Exec("PRAGMA optimize"); err != nil {
		errs = append(errs, fmt.Errorf("optimize: %w", err))
	}
	errs = append(errs, ix.writer.Close())
	return errors.Join(errs...)
}

// sqlErr wraps a database error; a busy or locked database is reported as ErrUnavailable, a
// cancelled context as itself.
func sqlErr(op string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}
