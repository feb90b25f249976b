package search

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// normalizeSettings validates attribute names and returns the settings sorted and without
// duplicates, so equal settings compare equal.
func normalizeSettings(s Settings) (Settings, error) {
	norm := func(kind string, attrs []string) ([]string, error) {
		out := []string{}
		for _, a := range attrs {
			if !attrRE.MatchString(a) {
				return nil, fmt.Errorf("%s attribute %q: use only [A-Za-z0-9_.-]", kind, a)
			}
			out = append(out, a)
		}
		slices.Sort(out)
		return slices.Compact(out), nil
	}
	f, err := norm("filterable", s.Filterable)
	if err != nil {
		return Settings{}, err
	}
	so, err := norm("sortable", s.Sortable)
	if err != nil {
		return Settings{}, err
	}
	return Settings{Filterable: f, Sortable: so}, nil
}

func settingsEqual(a, b Settings) bool {
	return slices.Equal(a.Filterable, b.Filterable) && slices.Equal(a.Sortable, b.Sortable)
}

// loadSettings reads the stored settings (none: nothing is filterable or sortable) and the
// collection size the planner statistics were last refreshed for (an estimate: the size now).
func (c *embeddedCollection) loadSettings() error {
	if err := c.ix.writer.QueryRow(`SELECT count(*) FROM ` + c.name + `_docs`).Scan(&c.analyzedRows); err != nil {
		return fmt.Errorf("count %s: %w", c.name, err)
	}
	var raw string
	switch err := c.ix.writer.QueryRow(`SELECT value FROM settings WHERE collection = ?`, c.name).Scan(&raw); {
	case errors.Is(err, sql.ErrNoRows):
		c.settings = Settings{Filterable: []string{}, Sortable: []string{}}
		return nil
	case err != nil:
		return fmt.Errorf("load %s settings: %w", c.name, err)
	}
	var s Settings
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return fmt.Errorf("load %s settings: %w", c.name, err)
	}
	s, err := normalizeSettings(s)
	if err != nil {
		return fmt.Errorf("load %s settings: %w", c.name, err)
	}
	c.settings = s
	if err := c.migrateFlat(); err != nil {
		return err
	}
	return c.migrateSortKeys()
}

// migrateSortKeys adds the sort key columns (sortkeys.go) to a database written before them,
// or fills them where a row lacks them, computing every document's keys, and replaces its sort
// expression indexes by indexes on them; nothing needs re-sending. It reads each stored
// document once, and writes only the key columns (addSortKeys).
func (c *embeddedCollection) migrateSortKeys() error {
	keyed := c.keyedSorts(c.settings)
	if len(keyed) == 0 {
		return nil
	}
	ctx := context.Background()
	have, err := keptColumns(ctx, c.ix.writer, c.name+"_docs")
	if err != nil {
		return fmt.Errorf("migrate %s: %w", c.name, err)
	}
	cols := sortColumns(keyed)
	what := ""
	for _, col := range cols {
		if !have[col] {
			what = "sort key columns added"
		}
	}
	if what == "" {
		// A row without keys was written by a version that did not know them: an older daemon
		// still running beside a newer command. Its keys, never compared on update (they follow
		// their facet column), would stay missing; fill them.
		var one int
		switch err := c.ix.writer.QueryRowContext(ctx, c.keylessQuery(keyed)).Scan(&one); {
		case err == nil:
			what = "sort keys filled in where an earlier version wrote documents without them"
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("migrate %s: %w", c.name, err)
		}
	}
	if what == "" {
		return nil
	}
	return c.migrate(what, func(ctx context.Context, tx *sql.Tx) error { return c.addSortKeys(ctx, tx, keyed) })
}

// keylessQuery returns the query that finds a row without sort keys. An attribute's two keys
// are written together (sortKeyValues, changedColumns, addSortKeys) and a row written without
// them lacks both, so the ascending key tells: its index makes the query a few lookups, where
// the descending key, which a one-valued attribute does not index, would have it read every
// row at every open.
func (c *embeddedCollection) keylessQuery(keyed []string) string {
	var asc []string
	for _, a := range keyed {
		asc = append(asc, sortColumn('<', a)+" IS NULL")
	}
	return `SELECT 1 FROM ` + c.name + `_docs WHERE ` + strings.Join(asc, ` OR `) + ` LIMIT 1`
}

// migrate runs fn in one transaction on the writer and records what it did (Upgrades); its
// error names the collection.
func (c *embeddedCollection) migrate(what string, fn func(ctx context.Context, tx *sql.Tx) error) error {
	ctx := context.Background()
	start := time.Now()
	tx, err := c.ix.writer.BeginTx(ctx, nil)
	if err == nil {
		defer tx.Rollback()
		err = fn(ctx, tx)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return fmt.Errorf("migrate %s: %w", c.name, err)
	}
	c.ix.upgrades = append(c.ix.upgrades, fmt.Sprintf("%s: %s (%d documents, %s)", c.name, what, c.analyzedRows,
		time.Since(start).Round(time.Millisecond)))
	return nil
}

// addSortKeys is applySettings for unchanged settings whose sort key columns are missing: the
// old sort indexes are dropped, the key columns added and filled, their indexes built last;
// the facet columns and their indexes stay as they are.
func (c *embeddedCollection) addSortKeys(ctx context.Context, tx *sql.Tx, keyed []string) error {
	want := c.indexDefs(c.settings)
	if err := c.dropIndexes(ctx, tx, want); err != nil {
		return err
	}
	spec := c.settings.spec()
	if err := c.syncColumns(ctx, tx, spec.declared(), keyed); err != nil {
		return err
	}
	if err := c.refacet(ctx, tx, spec, keyed, true); err != nil {
		return err
	}
	have, err := c.indexNames(ctx, tx)
	if err != nil {
		return err
	}
	return createIndexes(ctx, tx, want, have)
}

// migrateFlat moves a database written before the facet columns (one "flat" column holding
// every attribute's keys, all expression indexes over it) to one column per attribute: the
// facets are recomputed from the stored documents, so nothing needs re-sending.
func (c *embeddedCollection) migrateFlat() error {
	has, err := hasColumn(c.ix.writer, c.name+"_docs", "flat")
	if err != nil {
		return fmt.Errorf("migrate %s: %w", c.name, err)
	}
	if !has {
		return nil
	}
	return c.migrate("one facet column per attribute in place of the flat column", func(ctx context.Context, tx *sql.Tx) error {
		if err := c.dropIndexes(ctx, tx, nil); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+c.name+`_docs DROP COLUMN flat`); err != nil {
			return err
		}
		return c.applySettings(ctx, tx, c.settings)
	})
}

// Configure stores new settings: it recomputes every document's facet columns (as Meilisearch
// reindexes on a settings change) and replaces the expression indexes, in one transaction.
// Unchanged settings cost nothing.
func (c *embeddedCollection) Configure(ctx context.Context, s Settings) error {
	s, err := normalizeSettings(s)
	if err != nil {
		return fmt.Errorf("configure %s: %w", c.name, err)
	}
	c.ix.writeMu.Lock()
	defer c.ix.writeMu.Unlock()
	if settingsEqual(s, c.settings) {
		return c.matchIndexes(ctx, s)
	}
	tx, err := c.ix.writer.BeginTx(ctx, nil)
	if err != nil {
		return sqlErr("configure "+c.name, err)
	}
	defer tx.Rollback()
	if err := c.applySettings(ctx, tx, s); err != nil {
		return sqlErr("configure "+c.name, err)
	}
	raw, _ := json.Marshal(s)
	if _, err := tx.ExecContext(ctx, `INSERT INTO settings(collection, value) VALUES (?, ?)
		ON CONFLICT(collection) DO UPDATE SET value = excluded.value`, c.name, string(raw)); err != nil {
		return sqlErr("configure "+c.name, err)
	}
	// Fresh statistics let the planner choose between a sort index and a filter index.
	if _, err := tx.ExecContext(ctx, "ANALYZE "+c.name+"_docs"); err != nil {
		return sqlErr("configure "+c.name, err)
	}
	if _, err := bumpGen(ctx, tx); err != nil {
		return sqlErr("configure "+c.name, err)
	}
	c.ix.table.invalidate() // facet columns changed: rebuilt at the next search
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := tx.Commit(); err != nil {
		return sqlErr("configure "+c.name, err)
	}
	c.settings = s
	return nil
}

// applySettings makes the schema match s: expression indexes no longer wanted are dropped,
// facet columns added and removed, every document's facets recomputed, and the missing
// indexes created last (building an index once is cheaper than maintaining it row by row).
func (c *embeddedCollection) applySettings(ctx context.Context, tx *sql.Tx, s Settings) error {
	want := c.indexDefs(s)
	if err := c.dropIndexes(ctx, tx, want); err != nil {
		return err
	}
	if err := c.syncColumns(ctx, tx, s.spec().declared(), c.keyedSorts(s)); err != nil {
		return err
	}
	if err := c.refacet(ctx, tx, s.spec(), c.keyedSorts(s), false); err != nil {
		return err
	}
	have, err := c.indexNames(ctx, tx)
	if err != nil {
		return err
	}
	return createIndexes(ctx, tx, want, have)
}

// createIndexes creates the indexes of want (name → DDL) not in have.
func createIndexes(ctx context.Context, tx *sql.Tx, want map[string]string, have map[string]bool) error {
	for name, ddl := range want {
		if have[name] {
			continue
		}
		if _, err := tx.ExecContext(ctx, ddl); err != nil {
			return err
		}
	}
	return nil
}

// syncColumns adds a facet column per declared attribute and the sort key columns of keyed,
// and drops the others.
func (c *embeddedCollection) syncColumns(ctx context.Context, tx *sql.Tx, declared, keyed []string) error {
	have, err := keptColumns(ctx, tx, c.name+"_docs")
	if err != nil {
		return err
	}
	want := sortColumns(keyed)
	for _, a := range declared {
		want = append(want, facetColumn(a))
	}
	for _, col := range want {
		if have[col] {
			delete(have, col)
			continue
		}
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+c.name+`_docs ADD COLUMN `+col+` BLOB`); err != nil {
			return err
		}
	}
	for col := range have {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+c.name+`_docs DROP COLUMN `+col); err != nil {
			return err
		}
	}
	return nil
}

// keptColumns returns the quoted names of a docs table's facet and sort key columns.
func keptColumns(ctx context.Context, q writeTx, table string) (map[string]bool, error) {
	return nameSet(ctx, q, `SELECT '"' || name || '"' FROM pragma_table_info(?) WHERE name LIKE 'f:%' OR name LIKE 's<:%' OR name LIKE 's>:%'`, table)
}

// nameSet returns the set of names a query of one text column gives.
func nameSet(ctx context.Context, q writeTx, query string, args ...any) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		have[n] = true
	}
	return have, errors.Join(rows.Err(), rows.Close())
}

// refacet recomputes the facet and sort key columns of every document, in pages by rowid;
// with keysOnly, the sort key columns alone (migrateSortKeys), which leaves the facet columns'
// indexes alone. Each page's documents are decoded on every core.
func (c *embeddedCollection) refacet(ctx context.Context, tx *sql.Tx, spec facetSpec, keyed []string, keysOnly bool) error {
	declared := spec.declared()
	fs := newFacetSQL(c.name+"_docs", declared, keyed)
	if len(fs.columns) == 0 {
		return nil
	}
	assign := make([]bool, len(fs.columns))
	for i := range assign {
		assign[i] = !keysOnly || i >= len(declared)
	}
	upd := fs.update(assign, nil) // the full text does not change here
	type row struct {
		seq  int64
		doc  string
		vals []any
		err  error
	}
	last := int64(-1 << 63)
	for {
		rows, err := tx.QueryContext(ctx, `SELECT seq, doc FROM `+c.name+`_docs WHERE seq > ? ORDER BY seq LIMIT 1000`, last)
		if err != nil {
			return err
		}
		var page []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.seq, &r.doc); err != nil {
				rows.Close()
				return err
			}
			page = append(page, r)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		inParallel(len(page), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				r := &page[i]
				var v map[string]any
				if r.err = json.Unmarshal([]byte(r.doc), &v); r.err != nil {
					continue
				}
				facets, keys := flatFacetsKeyed(v, spec, keyed)
				r.vals, r.err = facetBlobs(facets, declared)
				r.vals = append(r.vals, keys...)
			}
		})
		for _, r := range page {
			if r.err != nil {
				return fmt.Errorf("document seq %d: %w", r.seq, r.err)
			}
			if _, err := tx.ExecContext(ctx, upd, updateArgs(r.doc, nil, r.vals, assign, r.seq)...); err != nil {
				return err
			}
		}
		last = page[len(page)-1].seq
	}
}

// matchIndexes creates and drops expression indexes so the collection has those indexDefs
// calls for, when its settings are unchanged but the set of indexes it keeps has changed (an
// index written by an earlier version).
func (c *embeddedCollection) matchIndexes(ctx context.Context, s Settings) error {
	want := c.indexDefs(s)
	tx, err := c.ix.writer.BeginTx(ctx, nil)
	if err != nil {
		return sqlErr("configure "+c.name, err)
	}
	defer tx.Rollback()
	have, err := c.indexNames(ctx, tx)
	if err != nil {
		return sqlErr("configure "+c.name, err)
	}
	same := len(have) == len(want)
	for n := range want {
		same = same && have[n]
	}
	if same {
		return nil
	}
	if err := c.dropIndexes(ctx, tx, want); err != nil {
		return sqlErr("configure "+c.name, err)
	}
	if err := createIndexes(ctx, tx, want, have); err != nil {
		return sqlErr("configure "+c.name, err)
	}
	if err := tx.Commit(); err != nil {
		return sqlErr("configure "+c.name, err)
	}
	return nil
}

// tableFilters are the filterable attributes of the files collection that keep their filter
// indexes: the facets the page and the CLI offer, and size, whose ranges are selective. See
// indexDefs.
var tableFilters = []string{FieldKind, FieldExtension, FieldDrive, FieldYear, FieldDate, FieldCamera, "size"}

// tableSorts are the sort attributes of the files collection that keep a sort index: the
// sorts the page and the CLI offer (newest and oldest, largest, name). See indexDefs.
var tableSorts = []string{FieldDate, "size", FieldSortName}

// loadKeptValues are the filterable attributes of the files collection whose value index a
// first load keeps (see indexDefs): facets with a few values across a whole library.
var loadKeptValues = []string{FieldKind, FieldExtension, FieldDrive, FieldYear, FieldCamera}

// oneValued reports whether attr, a keyed sortable attribute, has one value or none in the
// documents the collection is given: the files collection's date and sort name, which
// PrepareFile derives (a number, a string), and its size, a core field (a number). Its
// ascending sort index serves both orders (walkQuery), so it has no descending one: one index
// fewer to build in a first load's serial tail, and to update for each document written. A
// document written with several values anyway (only a caller writing its own documents
// to the collection could) is listed in a small partial index (sortMulti).
func (c *embeddedCollection) oneValued(attr string) bool {
	return c.name == filesCollection && slices.Contains(tableSorts, attr)
}

// sortIndexed reports whether attr, a sortable attribute, has a sort index now (keyedSorts).
func (c *embeddedCollection) sortIndexed(attr string) bool {
	return !c.loading.Load() && c.keyed(attr)
}

// indexDefs returns the expression indexes the settings call for, by name. Per filterable
// attribute: one on its single value, and a partial one listing the documents where it has
// several values; together they let SQLite answer each condition (value test OR multi-value
// test, see sqlWhere.cond) with a MULTI-INDEX OR. Per keyed sortable attribute: one on each of
// its sort key columns (sortkeys.go), matching sortKey.orderTerms; a one-valued attribute has
// the ascending one alone, which serves both directions (walkQuery).
//
// The files collection keeps the filter indexes of tableFilters and the sort indexes of
// tableSorts only. Its searches are answered by the in-memory file table (embedded_table.go),
// which filters and sorts without indexes; SQL serves them only until the table is built and in
// processes that do not build it (the CLI), where a query's words narrow the rows through FTS
// first, and filters on the facets users pick and the sorts they pick still find an index.
// Every expression index costs each new document an index insert: the 48 the files collection
// had were two thirds of a first sync's index CPU; 20 remain, 10 of them partial ones that
// almost no document enters.
//
// During a first load (BeginLoad) the indexes that a new document would insert into at a
// random place (sizes, dates, names: one distinct value per file) wait for the load's end,
// when each is built by one sort. The others stay, maintained per document while the load
// runs beside the rest of the sync rather than built in the single-threaded tail after it:
// the partial multi-value indexes, which almost no document enters, and the value indexes of
// the facets with few values (loadKeptValues), where a new document's entry goes at the end
// of its value's run, on a page the cache holds.
func (c *embeddedCollection) indexDefs(s Settings) map[string]string {
	defs := map[string]string{}
	loading := c.loading.Load()
	table := c.name + "_docs"
	// Each attribute's indexes read its own column (an attribute owns its own path).
	col := func(kind, attr string) string {
		return "json_extract(" + facetColumn(attr) + ", " + flatPath(kind, attr) + ")"
	}
	name := c.indexName
	for _, a := range s.Filterable {
		if c.name == filesCollection && !slices.Contains(tableFilters, a) {
			continue
		}
		if !loading || slices.Contains(loadKeptValues, a) {
			defs[name("v", a)] = fmt.Sprintf(`CREATE INDEX %q ON %s(%s)`, name("v", a), table, col("v", a))
		}
		f := col("f", a)
		defs[name("m", a)] = fmt.Sprintf(`CREATE INDEX %q ON %s(%s) WHERE %s >= %d`, name("m", a), table, f, f, flagMulti)
	}
	for _, a := range c.keyedSorts(s) {
		if c.oneValued(a) {
			// Its few documents with several values, listed as the partial multi-value
			// indexes are, and kept through a load as they are.
			defs[name(sortMulti, a)] = fmt.Sprintf(`CREATE INDEX %q ON %s(%s) WHERE %s`, name(sortMulti, a), table, sortColumn('>', a), multiSortCond(a))
		}
		if !c.sortIndexed(a) {
			continue
		}
		defs[name(sortAsc, a)] = fmt.Sprintf(`CREATE INDEX %q ON %s(%s)`, name(sortAsc, a), table, sortColumn('<', a))
		if !c.oneValued(a) {
			defs[name(sortDesc, a)] = fmt.Sprintf(`CREATE INDEX %q ON %s(%s)`, name(sortDesc, a), table, sortColumn('>', a))
		}
	}
	return defs
}

// The kinds of the sort indexes in their names. Earlier versions had expression indexes over
// the facet columns, named "a" and "d", then "sa" and "sd": an index that has them drops them
// when its sort key columns are added (migrateSortKeys).
const (
	sortAsc   = "ka"
	sortDesc  = "kd"
	sortMulti = "km" // a one-valued attribute's documents with several values (walkQuery)
)

// indexName names the expression index of one kind ("v", "m", sortAsc, sortDesc, sortMulti) on an
// attribute.
func (c *embeddedCollection) indexName(kind, attr string) string {
	return c.name + "_x_" + kind + "_" + hex.EncodeToString([]byte(attr))
}

// sortIndexName names the index walked for a sort key on a declared sortable attribute.
func (c *embeddedCollection) sortIndexName(k sortKey) string {
	if k.desc && !c.oneValued(k.attr) {
		return c.indexName(sortDesc, k.attr)
	}
	return c.indexName(sortAsc, k.attr)
}

// indexNames lists the collection's expression indexes.
func (c *embeddedCollection) indexNames(ctx context.Context, tx *sql.Tx) (map[string]bool, error) {
	return nameSet(ctx, tx, `SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND name LIKE ?`,
		c.name+"_docs", c.name+"_x_%")
}

// dropIndexes drops the expression indexes not in want (nil: all of them).
func (c *embeddedCollection) dropIndexes(ctx context.Context, tx *sql.Tx, want map[string]string) error {
	have, err := c.indexNames(ctx, tx)
	if err != nil {
		return err
	}
	for n := range have {
		if _, ok := want[n]; ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("DROP INDEX %q", n)); err != nil {
			return err
		}
	}
	return nil
}
