package catalog

// schema is idempotent (IF NOT EXISTS). A later incompatible change bumps meta.schema and migrates.
const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
-- One row per unique content. Derived fields (paths, copies, mtime, flags) come from files.
-- retired: the document lost its last path because the file changed; its by-id directory stays
-- on disk (module output is kept should the content come back) but it leaves the index.
CREATE TABLE IF NOT EXISTS documents (
	id      TEXT PRIMARY KEY,
	type    TEXT NOT NULL,
	size    INTEGER NOT NULL,
	next    TEXT NOT NULL DEFAULT '',
	fields  TEXT NOT NULL DEFAULT '{}',
	version INTEGER NOT NULL,
	retired INTEGER NOT NULL DEFAULT 0,
	-- failures: module name → {reason, attempts, at} of a parked job (core-owned).
	failures TEXT NOT NULL DEFAULT '{}',
	-- Dispatch order, kept by Tx.Dirty: tier 0 = a path on a present drive, 1 = other available
	-- path, NULL = no available path (offline: its jobs wait); path = the path modules open.
	dispatch_tier INTEGER,
	dispatch_path TEXT
);
CREATE INDEX IF NOT EXISTS documents_next ON documents(next) WHERE next != '';
CREATE INDEX IF NOT EXISTS documents_dispatch ON documents(next, dispatch_tier, dispatch_path)
	WHERE next != '' AND retired = 0 AND dispatch_tier IS NOT NULL;
-- Retired documents are few: status counts them here rather than by reading every row.
CREATE INDEX IF NOT EXISTS documents_retired ON documents(id) WHERE retired = 1;
-- One row per path (relative to INDEX_DIRECTORY). dev/ino/size/mtime_ns are the hash-cache key:
-- unchanged means the file is never read again. ino = 0 marks a row imported from a legacy
-- metadata directory (no stat known yet).
CREATE TABLE IF NOT EXISTS files (
	path     TEXT PRIMARY KEY,
	doc_id   TEXT NOT NULL REFERENCES documents(id),
	dev      INTEGER NOT NULL,
	ino      INTEGER NOT NULL,
	size     INTEGER NOT NULL,
	mtime_ns INTEGER NOT NULL,
	mtime    REAL NOT NULL,
	drive    TEXT
);
CREATE INDEX IF NOT EXISTS files_doc ON files(doc_id);
CREATE INDEX IF NOT EXISTS files_drive ON files(drive) WHERE drive IS NOT NULL;
-- Last known presence of each archive drive.
CREATE TABLE IF NOT EXISTS drives (
	name    TEXT PRIMARY KEY,
	present INTEGER NOT NULL
);
-- Keys whose derived state must be (re)written: "doc:<id>", "path:<rel>", "drive:<name>".
-- The applier renders each key from the catalog as it is at apply time, so replays are no-ops.
-- seq changes on every re-dirty, so an apply that raced a newer change does not clear it.
-- WITHOUT ROWID: a row is written, found and deleted in one B-tree (and outbox_pending), not
-- in a table and its key's index as well; every change of every hop and sync passes through
-- here. outbox_pending holds every column (the key comes with each entry of an index of a
-- WITHOUT ROWID table), so the applier reads pending keys in seq order, and deletes them by
-- seq range, from the index alone: over 200k keys a third less CPU for both than with an
-- index of seq alone (outbox_seq, dropped), which sent each row to the table as well.
CREATE TABLE IF NOT EXISTS outbox ` + outboxTable + `;
DROP INDEX IF EXISTS outbox_seq;
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox` + outboxPendingColumns + `;
-- One row per (document, module) job that is dispatched (state queued: its item is in Redis)
-- or parked (failed MAX_ATTEMPTS times). token is the dispatch token carried by the item.
CREATE TABLE IF NOT EXISTS jobs (
	doc_id   TEXT NOT NULL,
	module   TEXT NOT NULL,
	token    TEXT NOT NULL,
	attempt  INTEGER NOT NULL,
	state    TEXT NOT NULL,
	reason   TEXT NOT NULL DEFAULT '',
	since    INTEGER NOT NULL,
	updated  INTEGER NOT NULL,
	PRIMARY KEY (doc_id, module)
);
CREATE INDEX IF NOT EXISTS jobs_module_state ON jobs(module, state);
-- Results name their job by token (JobsByToken).
CREATE INDEX IF NOT EXISTS jobs_token ON jobs(token);
-- The merges of each (document, module): the last merged job's token and when, and how many
-- results were merged in all. A replay of that job finds its token; n > 1 for the same content
-- and module version means a double merge. One row per pair (a table that kept a row per merge
-- grew by one B-tree entry per hop forever); WITHOUT ROWID, so a merge writes one B-tree.
CREATE TABLE IF NOT EXISTS merges ` + mergesTable + `;
`

// The layouts of the tables migrateTables rebuilds, shared by the schema and the migration.
const (
	outboxTable = `(
	key        TEXT PRIMARY KEY,
	seq        INTEGER NOT NULL,
	meta_done  INTEGER NOT NULL DEFAULT 0,
	index_done INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID`
	// outboxPendingColumns are outbox_pending's.
	outboxPendingColumns = `(seq, meta_done, index_done)`
	mergesTable          = `(
	doc_id TEXT NOT NULL,
	module TEXT NOT NULL,
	token  TEXT NOT NULL,
	at     INTEGER NOT NULL,
	n      INTEGER NOT NULL,
	PRIMARY KEY (doc_id, module)
) WITHOUT ROWID`
)
