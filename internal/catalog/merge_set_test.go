package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// catalogRows is everything a merge may change, read in a fixed order: documents, jobs,
// merges, and the pending outbox keys with their flags (sequence numbers aside).
func catalogRows(t *testing.T, c *Catalog) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT id, next, fields, failures, retired FROM documents ORDER BY id`,
		`SELECT doc_id, module, token, state FROM jobs ORDER BY doc_id, module`,
		`SELECT doc_id, module, token, at FROM merges ORDER BY doc_id, module, token`,
		`SELECT key, meta_done, index_done FROM outbox ORDER BY key`,
	} {
		rows, err := c.r.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			dest := make([]any, len(cols))
			for i := range vals {
				dest[i] = &vals[i]
			}
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, v := range vals {
				fmt.Fprintf(&b, "%v|", v.String)
			}
			out = append(out, b.String())
		}
		rows.Close()
	}
	return out
}

// A batch of results for distinct documents (mergeSet's one statement per kind of change)
// decides and changes exactly what the same results merged one at a time do: applied (with
// fields, content, drives, a failure to clear), replays, other tokens, retired documents and
// documents that do not exist, in random mixes.
func TestMergeSetMatchesMergingOneByOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for seed := range uint64(20) {
		rnd := rand.New(rand.NewPCG(seed, 7))
		set, one := openTest(t), openTest(t)
		var ins []MergeInput
		for i := range 40 {
			id := fmt.Sprintf("doc%02d", i)
			module := chain[rnd.IntN(2)]
			kind := rnd.IntN(7)
			for _, c := range []*Catalog{set, one} {
				var paths []string
				switch rnd := i % 3; rnd {
				case 0:
					paths = []string{"files/" + id + ".txt"}
				case 1:
					paths = []string{"archive/usb/" + id + ".txt", "archive/sd/" + id + ".txt"}
				}
				if kind != 5 { // 5: no document at all
					addDoc(t, c, id, module, paths...)
					update(t, c, func(ctx context.Context, tx *Tx) error {
						_, err := tx.tx.ExecContext(ctx, `UPDATE documents SET fields = '{"keep":1,"over":"old"}',
							failures = '{"`+module+`":{"reason":"x"},"other":{"reason":"y"}}' WHERE id = ?`, id)
						return err
					})
				}
				putJob(t, c, id, module, "tok-"+id, JobQueued)
				if kind == 3 {
					update(t, c, func(ctx context.Context, tx *Tx) error { return tx.SetMissing(ctx, id, timeT0) })
				}
			}
			in := mergeInput(id, module, "tok-"+id, fmt.Sprintf(`{"over": %d, "new": "v%d"}`, i, i))
			switch kind {
			case 1: // a replay: merged before, by the same token
				for _, c := range []*Catalog{set, one} {
					if out, err := c.Merge(ctx, in); err != nil || out != MergeApplied {
						t.Fatalf("seed %d: first merge of %s = %v, %v", seed, id, out, err)
					}
				}
			case 2:
				in.Token = "other"
			case 4:
				in.Content = true
			case 6:
				in.Fields = nil
			}
			ins = append(ins, in)
		}
		rnd.Shuffle(len(ins), func(i, j int) { ins[i], ins[j] = ins[j], ins[i] })
		for _, c := range []*Catalog{set, one} {
			clearOutbox(t, c)
		}
		outs, err := set.MergeBatch(ctx, ins)
		if err != nil {
			t.Fatalf("seed %d: MergeBatch: %v", seed, err)
		}
		for i, in := range ins {
			want, err := one.Merge(ctx, in)
			if err != nil {
				t.Fatalf("seed %d: Merge: %v", seed, err)
			}
			if outs[i] != want {
				t.Errorf("seed %d: %s/%s (token %s): batch %v, one by one %v", seed, in.DocID, in.Module, in.Token, outs[i], want)
			}
		}
		if got, want := catalogRows(t, set), catalogRows(t, one); !reflect.DeepEqual(got, want) {
			for i := range max(len(got), len(want)) {
				g, w := "", ""
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					t.Errorf("seed %d: row %d: batch %q, one by one %q", seed, i, g, w)
				}
			}
			t.FailNow()
		}
		if !slices.Contains(outs, MergeApplied) || !slices.Contains(outs, MergeStale) {
			t.Fatalf("seed %d: outcomes %v lack a kind", seed, outs)
		}
	}
}
