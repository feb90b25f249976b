package e2e

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/homeindex/homeindex/internal/search"
)

// D3 (docs/invariants.md, fault catalogue): Meilisearch is stopped mid-run for a while. Files keep completing on
// disk (every document clears the chain and its document.json is written while the index is
// down); once Meilisearch is back, the files index holds exactly the catalog's live documents
// within 1 minute, and the stores agree.
//
// Full: a 2-minute outage over 2,000 files. Reduced: 20 s over 150 files.
func TestFaultD3MeilisearchDown(t *testing.T) {
	t.Parallel()
	const catchUp = time.Minute
	n, outage := faultSize(150, 2000), faultDuration(20*time.Second, 2*time.Minute)
	r := newFaultRun(t, n, 16, []module{{Name: "example-module", UID: "e1"}, {Name: "timeout-module", UID: "t1"}}, withMeili())
	r.Daemon.Start()
	r.startModule("example", bin.example, "example-module")
	r.startModule("second", bin.timeout, "timeout-module")
	total := n * len(r.mods)
	waitUntil(t, 2*time.Minute, "a fifth of the run", func() error {
		if m := r.merged(); m < total/5 {
			return fmt.Errorf("%d of %d merged", m, total)
		}
		return nil
	})
	r.Meili.Stop()
	down := time.Now()
	atStop := r.merged()
	waitUntil(t, outage+faultDuration(3*time.Minute, 10*time.Minute), "every file complete on disk while Meilisearch is down", func() error {
		docs := r.count(`SELECT count(*) FROM documents WHERE retired = 0`)
		pending := r.count(`SELECT count(*) FROM documents WHERE retired = 0 AND next != ''`)
		meta := r.count(`SELECT count(*) FROM outbox WHERE meta_done = 0`)
		if docs != n || pending != 0 || meta != 0 || r.merged() < total {
			return fmt.Errorf("%d documents, %d not through the chain, %d not on disk, %d merged", docs, pending, meta, r.merged())
		}
		return nil
	})
	onDisk := time.Since(down)
	if err := r.docsDone(r.ids, noted)(); err != nil {
		t.Fatalf("on disk while Meilisearch is down: %v", err)
	}
	if behind := r.count(`SELECT count(*) FROM outbox WHERE index_done = 0`); behind <= 0 {
		t.Fatalf("%d index updates pending while Meilisearch is down: the outage did not hold anything back", behind)
	}
	waitUntil(t, outage+time.Minute, fmt.Sprintf("a %v outage", outage), func() error {
		if d := time.Since(down); d < outage {
			return fmt.Errorf("down for %v", d.Round(time.Second))
		}
		return nil
	})
	downFor := time.Since(down)
	r.Meili.Restart()
	back := time.Now()
	live := r.liveIDs()
	waitUntil(t, catchUp, "the index equal to the catalog", func() error {
		var indexed []string
		if err := r.withIndex(func(idx search.Index) error {
			return idx.Files().IDs(context.Background(), func(id string) error { indexed = append(indexed, id); return nil })
		}); err != nil {
			return err
		}
		sort.Strings(indexed)
		if fmt.Sprint(indexed) != fmt.Sprint(live) {
			return fmt.Errorf("%d ids in the index, %d live documents", len(indexed), len(live))
		}
		if behind := r.count(`SELECT count(*) FROM outbox WHERE index_done = 0`); behind != 0 {
			return fmt.Errorf("%d index updates pending", behind)
		}
		return nil
	})
	caughtUp := time.Since(back)
	r.waitComplete(time.Minute)
	r.assertNothingStranded()
	checked := r.assertNoLossNoDoubleMerge()
	r.assertAgree()
	t.Logf("D3: Meilisearch down %v from %d/%d merges; all %d files complete on disk %v after it stopped; index = catalog %v after it returned",
		downFor.Round(time.Second), atStop, total, checked, onDisk.Round(time.Millisecond), caughtUp.Round(time.Millisecond))
}

// liveIDs lists the catalog's live documents, sorted.
func (r *faultRun) liveIDs() []string {
	r.t.Helper()
	rows, err := r.catalog().Query(`SELECT id FROM documents WHERE retired = 0 ORDER BY id`)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			r.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}
