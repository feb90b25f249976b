package search

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// searchFiles runs a FileQuery in one read transaction over both collections' tables. With
// words, the matching files (by their own text, or by a chunk's) are read once from the FTS
// tables, with the chunks that matched; then one pass over those files' rows, filters
// applied, gives the total and every facet (counted here, not by one SQL query per facet);
// the page is either ranked here (relevance) or sorted by SQL; snippets come from the page's
// own matching chunks, read by rowid.
func (ix *embeddedIndex) searchFiles(ctx context.Context, q FileQuery, sortClauses []string, named bool) (FileResult, error) {
	c := ix.files
	c.mu.RLock()
	defer c.mu.RUnlock()
	settings := c.settings
	declared := settings.spec().declared()
	where, args, err := compileWhere(q.filter(), settings)
	if err != nil {
		return FileResult{}, fmt.Errorf("search files: %w", err)
	}
	keys, err := parseSort(sortClauses, settings.Sortable)
	if err != nil && named {
		keys, err = nil, nil // an index not configured yet (nothing in it either)
	}
	if err != nil {
		return FileResult{}, fmt.Errorf("search files: %w: %w", ErrInvalidFilter, err)
	}
	for _, f := range q.Facets {
		if !attrRE.MatchString(f) || !covered(f, settings.Filterable) {
			return FileResult{}, fmt.Errorf("search files: %w: facet %w", ErrInvalidFilter, notAllowedError("filterable", f, settings.Filterable))
		}
	}
	match := ftsQuery(q.Q)
	ix.chunks.mu.RLock()
	defer ix.chunks.mu.RUnlock()
	// Chunks are searched once their settings give them a file_id column (ChunkSettings).
	withChunks := slices.Contains(ix.chunks.settings.Filterable, "file_id")
	tx, err := ix.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return FileResult{}, sqlErr("search files", err)
	}
	defer tx.Rollback()

	t := ix.table
	gen, genErr := readGen(ctx, tx)
	t.mu.RLock()
	if genErr == nil && !ix.tableOff && t.usable(gen, q.Facets) {
		defer t.mu.RUnlock()
		ix.tableSearches.Add(1)
		return ix.searchTable(ctx, tx, q, keys, declared, where, args, match, withChunks)
	}
	t.mu.RUnlock()
	if !ix.tableOff {
		ix.requestBuild(q.Facets)
	}
	res := FileResult{Facets: map[string][]FacetCount{}}
	var matches map[int64]*fileMatch
	if match != "" {
		if matches, err = matchingFiles(ctx, tx, match, withChunks); err != nil {
			return FileResult{}, sqlErr("search files", err)
		}
		if len(matches) == 0 {
			return res, nil
		}
	}
	whereSQL, args := matchWhere(matches, where, args)
	ranked := match != "" && isRelevance(q.Sort)
	var order []rankedFile // the matching files, when ranked here
	if len(q.Facets) > 0 || ranked {
		var counts []map[string]int64
		order, counts, err = scanMatches(ctx, tx, q.Facets, declared, whereSQL, args, matches, ranked)
		if err != nil {
			return FileResult{}, sqlErr("search files", err)
		}
		res.Total = int64(len(order))
		for i, f := range q.Facets {
			res.Facets[f] = facetCounts(counts[i])
		}
	} else if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM files_docs AS d"+whereSQL, args...).Scan(&res.Total); err != nil {
		return FileResult{}, sqlErr("search files", err)
	}
	limit, offset := pageBounds(Query{Limit: q.Limit, Offset: q.Offset})
	if res.Total <= int64(offset) {
		return res, nil
	}
	var page []int64
	if ranked {
		slices.SortFunc(order, func(a, b rankedFile) int { return a.compare(b.relevance) })
		for _, f := range order[offset:min(offset+limit, len(order))] {
			page = append(page, f.seq)
		}
		if res.Hits, err = docsBySeq(ctx, tx, page); err != nil {
			return FileResult{}, sqlErr("search files", err)
		}
	} else if page, res.Hits, err = sortedPage(ctx, tx, c, keys, declared, match == "" && res.Total >= broadMatch, whereSQL, args, limit, offset); err != nil {
		return FileResult{}, sqlErr("search files", err)
	}
	if match == "" || q.Snippets == 0 || len(page) == 0 {
		return res, nil
	}
	snips, err := embeddedSnippets(ctx, tx, page, matches, q)
	if err != nil {
		return FileResult{}, sqlErr("search files: snippets", err)
	}
	for i, s := range page {
		res.Hits[i].Snippets = snips[s]
	}
	return res, nil
}

// searchTable is searchFiles with the file table (held for reading): the FTS indexes say which
// rows match, the table which files those are, their facet values and their dates; SQL reads
// only the filters' matches, the page and its snippets.
func (ix *embeddedIndex) searchTable(ctx context.Context, tx *sql.Tx, q FileQuery, keys []sortKey, declared []string,
	where string, args []any, match string, withChunks bool) (FileResult, error) {
	t := ix.table
	res := FileResult{Facets: map[string][]FacetCount{}}
	var matches map[int64]*fileMatch
	if match != "" {
		matches = map[int64]*fileMatch{}
		at := func(seq int64) *fileMatch {
			m := matches[seq]
			if m == nil {
				m = &fileMatch{}
				matches[seq] = m
			}
			return m
		}
		err := readRowids(ctx, tx, `SELECT rowid FROM files_fts WHERE files_fts MATCH ?`, match, func(seq int64) {
			if seq < int64(len(t.ids)) && t.ids[seq] != "" {
				at(seq).own = true
			}
		})
		if err == nil && withChunks {
			err = readRowids(ctx, tx, `SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?`, match, func(k int64) {
				if seq := t.chunkFile(k); seq != 0 {
					at(seq).chunks = append(at(seq).chunks, k)
				}
			})
		}
		if err != nil {
			return FileResult{}, sqlErr("search files", err)
		}
		if len(matches) == 0 {
			return res, nil
		}
	}
	whereSQL, args := matchWhere(matches, where, args)
	var set []int64
	var test func(int64) bool
	if where != "" {
		n, err := parseFilter(q.filter())
		if err != nil {
			return FileResult{}, fmt.Errorf("search files: %w: %w", ErrInvalidFilter, err)
		}
		if test, _ = t.tableFilter(n); test == nil {
			ix.tableSQLFilters.Add(1)
		}
	}
	switch {
	case test != nil && match != "":
		for s := range matches {
			if test(s) {
				set = append(set, s)
			}
		}
	case test != nil:
		for s, id := range t.ids {
			if id != "" && test(int64(s)) {
				set = append(set, int64(s))
			}
		}
	case where != "":
		query, err := filterQuery(ctx, tx, whereSQL, args, match != "")
		if err == nil {
			err = readRowids(ctx, tx, query, args, func(seq int64) { set = append(set, seq) })
		}
		if err != nil {
			return FileResult{}, sqlErr("search files", err)
		}
	case match != "":
		for s := range matches {
			set = append(set, s)
		}
	default:
		for s, id := range t.ids {
			if id != "" {
				set = append(set, int64(s))
			}
		}
	}
	res.Total = int64(len(set))
	for _, f := range q.Facets {
		res.Facets[f] = t.facets[f].count(set)
	}
	limit, offset := pageBounds(Query{Limit: q.Limit, Offset: q.Offset})
	if res.Total <= int64(offset) {
		return res, nil
	}
	broad := match == "" && res.Total >= broadMatch
	ranked := match != "" && isRelevance(q.Sort)
	// Sorting by date here beats walking the date index, which reads rows until the page is
	// full: for a filter that many newer files fail (year = 2015), that is most of the table.
	// Browsing everything still walks the index: the page is its first rows.
	byDate := len(keys) == 1 && keys[0].attr == FieldDate && (match != "" || where != "")
	// The same for the other sort keys the table holds.
	var bySort *memSort
	if len(keys) == 1 && !ranked && (match != "" || where != "") {
		bySort = t.sorts[keys[0].attr]
	}
	var page []int64
	var err error
	if ranked || byDate || bySort != nil {
		order := make([]rankedFile, len(set))
		for i, s := range set {
			r := rankedFile{seq: s, relevance: relevance{id: t.ids[s], dated: t.dated[s], date: t.dates[s]}}
			if m := matches[s]; m != nil && ranked {
				r.own, r.chunks = m.own, len(m.chunks)
			}
			order[i] = r
		}
		asc := !ranked && !keys[0].desc
		slices.SortFunc(order, func(a, b rankedFile) int {
			if bySort != nil {
				return cmp.Or(bySort.compare(a.seq, b.seq, keys[0].desc), strings.Compare(a.id, b.id))
			}
			if asc {
				a.date, b.date = -a.date, -b.date // oldest first; undated still last
			}
			return a.compare(b.relevance)
		})
		for _, f := range order[offset:min(offset+limit, len(order))] {
			page = append(page, f.seq)
		}
		res.Hits, err = docsBySeq(ctx, tx, page)
	} else {
		page, res.Hits, err = sortedPage(ctx, tx, ix.files, keys, declared, broad, whereSQL, args, limit, offset)
	}
	if err != nil {
		return FileResult{}, sqlErr("search files", err)
	}
	if match == "" || q.Snippets == 0 || len(page) == 0 {
		return res, nil
	}
	snips, err := embeddedSnippets(ctx, tx, page, matches, q)
	if err != nil {
		return FileResult{}, sqlErr("search files: snippets", err)
	}
	for i, s := range page {
		res.Hits[i].Snippets = snips[s]
	}
	return res, nil
}

// filterQuery returns the query listing the rowids of the files whereSQL keeps. With words
// (words: whereSQL starts with the rowid list), SQLite would look each match up by rowid and
// test the filter on its row; when the filter has an index, reading the index and testing
// the list (a Bloom filter) reads no rows and is several times faster, so that plan is used
// unless it would scan the table.
func filterQuery(ctx context.Context, tx *sql.Tx, whereSQL string, args []any, words bool) (string, error) {
	query := "SELECT d.seq FROM files_docs AS d" + whereSQL
	if !words {
		return query, nil
	}
	byIndex := strings.Replace(query, "WHERE d.seq IN", "WHERE +d.seq IN", 1)
	rows, err := tx.QueryContext(ctx, "EXPLAIN QUERY PLAN "+byIndex, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		if strings.HasPrefix(detail, "SCAN d") {
			return query, nil
		}
	}
	return byIndex, rows.Err()
}

// matchWhere returns the WHERE clause (and its arguments) keeping the files of matches (when
// not nil: a search with words) that the compiled filter where keeps.
func matchWhere(matches map[int64]*fileMatch, where string, args []any) (string, []any) {
	var conds []string
	if matches != nil {
		seqs := make([]int64, 0, len(matches))
		for s := range matches {
			seqs = append(seqs, s)
		}
		conds = append(conds, "d.seq IN (SELECT value FROM json_each(?))")
		args = append([]any{string(mustJSON(seqs))}, args...)
	}
	if where != "" {
		conds = append(conds, where)
	}
	if len(conds) == 0 {
		return "", args
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// readRowids runs a query giving one integer per row.
func readRowids(ctx context.Context, tx *sql.Tx, query string, args any, fn func(int64)) error {
	var a []any
	switch x := args.(type) {
	case []any:
		a = x
	default:
		a = []any{x}
	}
	rows, err := tx.QueryContext(ctx, query, a...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return err
		}
		fn(n)
	}
	return rows.Err()
}

// fileMatch is how one file matched the words: by its own text, and by which chunks.
type fileMatch struct {
	own    bool
	chunks []int64 // rowids of the matching chunks
}

// matchingFiles returns, by rowid, the files whose own text matches, or (withChunks) one of
// whose chunks does.
func matchingFiles(ctx context.Context, tx *sql.Tx, match string, withChunks bool) (map[int64]*fileMatch, error) {
	out := map[int64]*fileMatch{}
	read := func(query string, own bool) error {
		rows, err := tx.QueryContext(ctx, query, match)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f, k int64
			if err := rows.Scan(&f, &k); err != nil {
				return err
			}
			m := out[f]
			if m == nil {
				m = &fileMatch{}
				out[f] = m
			}
			if own {
				m.own = true
			} else {
				m.chunks = append(m.chunks, k)
			}
		}
		return rows.Err()
	}
	if err := read(`SELECT rowid, 0 FROM files_fts WHERE files_fts MATCH ?`, true); err != nil {
		return nil, err
	}
	if !withChunks {
		return out, nil
	}
	return out, read(`SELECT d.seq, k.seq FROM chunks_fts JOIN chunks_docs AS k ON k.seq = chunks_fts.rowid
		JOIN files_docs AS d ON d.id = `+chunkFileID("k")+` WHERE chunks_fts MATCH ?`, false)
}

// chunkFileID is the SQL reading a chunk row's file_id from its facet column (file_id is
// filterable in ChunkSettings, so the column exists and is indexed).
func chunkFileID(alias string) string {
	return "json_extract(" + alias + `."f:file_id", '$."v:file_id"')`
}

// rankedFile is a matching file and what relevance ranks it by.
type rankedFile struct {
	seq int64
	relevance
}

// scanMatches reads the files matching whereSQL once: each file's facet values (counted per
// attribute of facets) and, when ranked, what relevance needs.
func scanMatches(ctx context.Context, tx *sql.Tx, facets, declared []string, whereSQL string, args []any,
	matches map[int64]*fileMatch, ranked bool) ([]rankedFile, []map[string]int64, error) {
	cols := []string{"d.seq", "d.id", "NULL"}
	if ranked && owner(FieldDate, declared) != "" {
		cols[2] = sortExpr(">", FieldDate, declared)
	}
	for _, f := range facets {
		// The single value, and the array of values of a document with several (flagMulti).
		cols = append(cols, flatExpr("v", f, declared), flatExpr("m", f, declared))
	}
	counts := make([]map[string]int64, len(facets))
	for i := range counts {
		counts[i] = map[string]int64{}
	}
	var out []rankedFile
	err := scanFacetRows(ctx, tx, cols, whereSQL, args, facets, func(seq int64, id string, date sql.NullFloat64, vals [][]string) {
		r := rankedFile{seq: seq}
		if ranked {
			r.id, r.date, r.dated = id, date.Float64, date.Valid
			if m := matches[seq]; m != nil {
				r.own, r.chunks = m.own, len(m.chunks)
			}
		}
		out = append(out, r)
		for i, vs := range vals {
			for _, v := range vs {
				counts[i][v]++
			}
		}
	})
	return out, counts, err
}

// jsonScalar decodes a JSON string or number the way SQLite's json_each gives it: integers
// as int64, other numbers as float64.
func jsonScalar(raw json.RawMessage) any {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return f
	}
	return string(raw)
}

// docsBySeq reads documents by rowid, in the order given.
func docsBySeq(ctx context.Context, tx *sql.Tx, seqs []int64) ([]FileHit, error) {
	rows, err := tx.QueryContext(ctx, "SELECT seq, doc FROM files_docs WHERE seq IN (SELECT value FROM json_each(?))", string(mustJSON(seqs)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	docs := map[int64]string{}
	for rows.Next() {
		var s int64
		var d string
		if err := rows.Scan(&s, &d); err != nil {
			return nil, err
		}
		docs[s] = d
	}
	hits := make([]FileHit, len(seqs))
	for i, s := range seqs {
		hits[i] = FileHit{Doc: json.RawMessage(docs[s])}
	}
	return hits, rows.Err()
}

// sortedPage reads one page of the matching files in sort order (keys, then id). A broad
// browse walks the first key's sort index and stops after the page; otherwise the matches
// are sorted.
func sortedPage(ctx context.Context, tx *sql.Tx, c *embeddedCollection, keys []sortKey, declared []string, broad bool,
	whereSQL string, args []any, limit, offset int) ([]int64, []FileHit, error) {
	broad = broad && len(keys) > 0 && slices.Contains(c.settings.Sortable, keys[0].attr) && c.sortIndexed(keys[0].attr)
	var order []string
	for _, k := range keys {
		order = append(order, k.orderTerms(!broad, declared, c.keyedSorts(c.settings))...)
	}
	order = append(order, "d.id")
	query, queryArgs := "SELECT d.seq, d.doc FROM files_docs AS d"+whereSQL+" ORDER BY "+strings.Join(order, ", ")+" LIMIT ? OFFSET ?",
		append(args, limit, offset)
	if broad { // keys[0], keyed, has one order term
		query, queryArgs = c.walkQuery([]string{"d.seq", "d.doc"}, keys[0], order[1:], whereSQL, args, limit, offset)
	}
	rows, err := tx.QueryContext(ctx, query, queryArgs...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var seqs []int64
	var hits []FileHit
	for rows.Next() {
		var s int64
		var doc string
		if err := rows.Scan(&s, &doc); err != nil {
			return nil, nil, err
		}
		seqs = append(seqs, s)
		hits = append(hits, FileHit{Doc: json.RawMessage(doc)})
	}
	return seqs, hits, rows.Err()
}

// embeddedSnippets returns, per file rowid, the snippets of its first q.Snippets matching
// chunks in chunk order (index, then id), the same chunks Meilisearch gives.
func embeddedSnippets(ctx context.Context, tx *sql.Tx, page []int64, matches map[int64]*fileMatch, q FileQuery) (map[int64][]Snippet, error) {
	fileOf := map[int64]int64{}
	var chunks []int64
	for _, s := range page {
		if m := matches[s]; m != nil {
			for _, k := range m.chunks {
				fileOf[k] = s
				chunks = append(chunks, k)
			}
		}
	}
	out := map[int64][]Snippet{}
	taken := map[int64]int{} // chunks used per file, snippet or not (as Meilisearch's limit)
	if len(chunks) == 0 {
		return out, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT k.seq, k.doc FROM chunks_docs AS k WHERE k.seq IN (SELECT value FROM json_each(?))
		ORDER BY json_extract(k.doc, '$.index'), k.id`, string(mustJSON(chunks)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	words, prefix := queryWords(q.Q)
	for rows.Next() {
		var k int64
		var doc string
		if err := rows.Scan(&k, &doc); err != nil {
			return nil, err
		}
		f := fileOf[k]
		if taken[f] >= q.Snippets {
			continue
		}
		taken[f]++
		if s, ok := snippetOf(json.RawMessage(doc), words, prefix); ok {
			out[f] = append(out[f], s)
		}
	}
	return out, rows.Err()
}
