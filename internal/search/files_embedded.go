package search

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// searchFiles runs a FileQuery in one read transaction over both collections' tables: the
// text condition is "the file's own text matches, or one of its chunks does", written as two
// FTS subqueries, so totals, pages and facets all come from SQL over the same set.
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
	var conds []string
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

	res := FileResult{Facets: map[string][]FacetCount{}}
	if match != "" {
		// The files matching the words, by their own text or a chunk's, read once: the
		// count, the facets and the page all reuse the list.
		seqs, err := matchingSeqs(ctx, tx, match, withChunks)
		if err != nil {
			return FileResult{}, sqlErr("search files", err)
		}
		if len(seqs) == 0 {
			return res, nil
		}
		conds = append(conds, "d.seq IN (SELECT value FROM json_each(?))")
		args = append([]any{string(mustJSON(seqs))}, args...)
	}
	if where != "" {
		conds = append(conds, where)
	}
	whereSQL := ""
	if len(conds) > 0 {
		whereSQL = " WHERE " + strings.Join(conds, " AND ")
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM files_docs AS d"+whereSQL, args...).Scan(&res.Total); err != nil {
		return FileResult{}, sqlErr("search files", err)
	}
	for _, f := range q.Facets {
		counts, err := embeddedFacet(ctx, tx, f, declared, whereSQL, args)
		if err != nil {
			return FileResult{}, sqlErr("search files: facet "+f, err)
		}
		res.Facets[f] = facetCounts(counts)
	}
	limit, offset := pageBounds(Query{Limit: q.Limit, Offset: q.Offset})
	if res.Total <= int64(offset) {
		return res, nil
	}
	// A broad browse walks the first key's sort index and stops after the page; otherwise
	// the matches are sorted.
	broad := match == "" && res.Total >= broadMatch && len(keys) > 0 && slices.Contains(settings.Sortable, keys[0].attr)
	from := "files_docs AS d"
	if broad {
		from += " INDEXED BY " + c.sortIndexName(keys[0])
	}
	var order []string
	for _, k := range keys {
		order = append(order, k.orderTerms(!broad, declared)...)
	}
	order = append(order, "d.id")
	rows, err := tx.QueryContext(ctx, "SELECT d.id, d.doc FROM "+from+whereSQL+" ORDER BY "+strings.Join(order, ", ")+" LIMIT ? OFFSET ?",
		append(args, limit, offset)...)
	if err != nil {
		return FileResult{}, sqlErr("search files", err)
	}
	var ids []string
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc); err != nil {
			rows.Close()
			return FileResult{}, sqlErr("search files", err)
		}
		ids = append(ids, id)
		res.Hits = append(res.Hits, FileHit{Doc: json.RawMessage(doc)})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return FileResult{}, sqlErr("search files", err)
	}
	if match == "" || !withChunks || q.Snippets == 0 || len(ids) == 0 {
		return res, nil
	}
	snips, err := embeddedSnippets(ctx, tx, match, ids, q)
	if err != nil {
		return FileResult{}, sqlErr("search files: snippets", err)
	}
	for i, id := range ids {
		res.Hits[i].Snippets = snips[id]
	}
	return res, nil
}

// matchingSeqs returns the rowids of the files whose own text matches, or (withChunks) one
// of whose chunks does.
func matchingSeqs(ctx context.Context, tx *sql.Tx, match string, withChunks bool) ([]int64, error) {
	query, args := `SELECT rowid FROM files_fts WHERE files_fts MATCH ?`, []any{match}
	if withChunks {
		query += ` UNION SELECT d.seq FROM files_docs AS d WHERE d.id IN (SELECT ` + chunkFileID("k") + `
			FROM chunks_fts JOIN chunks_docs AS k ON k.seq = chunks_fts.rowid WHERE chunks_fts MATCH ?)`
		args = append(args, match)
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		seqs = append(seqs, s)
	}
	return seqs, rows.Err()
}

// chunkFileID is the SQL reading a chunk row's file_id from its facet column (file_id is
// filterable in ChunkSettings, so the column exists and is indexed).
func chunkFileID(alias string) string {
	return "json_extract(" + alias + `."f:file_id", '$."v:file_id"')`
}

// embeddedFacet counts the matching files by the values of one attribute.
func embeddedFacet(ctx context.Context, tx *sql.Tx, attr string, declared []string, whereSQL string, args []any) (map[string]int64, error) {
	col := "d." + facetColumn(owner(attr, declared))
	counts := map[string]int64{}
	read := func(query string) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v any
			var n int64
			if err := rows.Scan(&v, &n); err != nil {
				return err
			}
			if v == nil {
				continue
			}
			counts[facetValue(v)] += n
		}
		return rows.Err()
	}
	single := fmt.Sprintf("SELECT x, count(*) FROM (SELECT json_extract(%s, %s) AS x FROM files_docs AS d%s) WHERE x IS NOT NULL GROUP BY x",
		col, flatPath("v", attr), whereSQL)
	if err := read(single); err != nil {
		return nil, err
	}
	// Documents with several values (flagMulti): each value counts once per document.
	multiWhere := fmt.Sprintf("json_extract(%s, %s) >= %d", col, flatPath("f", attr), flagMulti)
	if whereSQL == "" {
		multiWhere = " WHERE " + multiWhere
	} else {
		multiWhere = whereSQL + " AND " + multiWhere
	}
	multi := fmt.Sprintf("SELECT j.value, count(*) FROM files_docs AS d, json_each(%s, %s) AS j%s GROUP BY j.value",
		col, flatPath("m", attr), multiWhere)
	if err := read(multi); err != nil {
		return nil, err
	}
	return counts, nil
}

// embeddedSnippets returns, per file, the snippets of its first q.Snippets matching chunks in
// chunk order (index, then id), the same chunks Meilisearch gives.
func embeddedSnippets(ctx context.Context, tx *sql.Tx, match string, ids []string, q FileQuery) (map[string][]Snippet, error) {
	ph := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	args := []any{match}
	for _, id := range ids {
		args = append(args, id)
	}
	args = append(args, q.Snippets)
	rows, err := tx.QueryContext(ctx, `SELECT fid, doc FROM (
		SELECT `+chunkFileID("k")+` AS fid, k.doc AS doc, row_number() OVER (
			PARTITION BY `+chunkFileID("k")+` ORDER BY json_extract(k.doc, '$.index'), k.id) AS n
		FROM chunks_fts JOIN chunks_docs AS k ON k.seq = chunks_fts.rowid
		WHERE chunks_fts MATCH ? AND `+chunkFileID("k")+` IN (`+ph+`))
		WHERE n <= ? ORDER BY fid, n`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	words, prefix := queryWords(q.Q)
	out := map[string][]Snippet{}
	for rows.Next() {
		var fid, doc string
		if err := rows.Scan(&fid, &doc); err != nil {
			return nil, err
		}
		if s, ok := snippetOf(json.RawMessage(doc), words, prefix); ok {
			out[fid] = append(out[fid], s)
		}
	}
	return out, rows.Err()
}
