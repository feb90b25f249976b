package e2e

import (
	"fmt"
	"testing"
	"time"
)

// Scenario 4, uid and order change: after a restart with a module's uid changed, exactly that
// module and those after it run again for every file, nothing before it; the same after a
// reorder, from the first changed position on. The drive's marker flips to pending and back to
// ready when the re-run is done.
func TestS04ModuleChangeRequeuesFromTheChangePoint(t *testing.T) {
	t.Parallel()
	// first always skips files it has seen (version.json); second and third always run.
	mods := []module{{Name: "first", UID: "1"}, {Name: "second", UID: "1"}, {Name: "third", UID: "1"}}
	s := newStack(t, mods)
	ids := []string{s.write("a.txt", "regular a"), s.write("b/b.txt", "regular b"),
		s.write("archive/usb/c.txt", "drive c"), s.write("archive/usb/d.txt", "drive d")}
	workers := []*proc{
		s.newModule("first", bin.example, "first"),
		s.newModule("second", bin.crash, "second"),
		s.newModule("third", bin.crash, "third"),
	}
	s.Daemon.Start()
	for _, w := range workers {
		w.Start()
	}
	waitUntil(t, 60*time.Second, "the first pass through the chain", s.docsDone(ids, noted))
	waitUntil(t, 30*time.Second, "usb ready", s.markerIs("usb", "ready"))
	for _, m := range mods {
		if got := s.records().module(m.Name).runs().countBy(byPath); len(got) != len(ids) {
			t.Fatalf("first pass: %s ran %v, want each of %d files once", m.Name, got, len(ids))
		}
	}

	// A changed uid for second: second and third again, first never.
	mods[1].UID = "2"
	after := s.restartWithModules(mods, workers, ids)
	assertRerun(t, after, ids, []string{"second", "third"}, []string{"first"})

	// A reorder: [first, third, second] changes position 1 on, so third then second again.
	mods[1], mods[2] = mods[2], mods[1]
	after = s.restartWithModules(mods, workers, ids)
	assertRerun(t, after, ids, []string{"third", "second"}, []string{"first"})
}

// restartWithModules stops the modules and the daemon, changes MODULES, starts the daemon,
// waits for the drive marker to flip to pending (the requeue reached it), for a dispatch
// (counted in Redis) and for every document.json to show the requeue, starts the modules with
// the new list and waits until everything is done again. It returns what the modules did since
// the restart.
func (s *stack) restartWithModules(mods []module, workers []*proc, ids []string) recordSet {
	s.t.Helper()
	for _, w := range workers {
		w.Stop()
	}
	s.Daemon.Stop()
	before := s.records()
	calls := s.commandCalls()
	s.setModules(mods)
	for _, w := range workers {
		w.Env["MODULES"] = modulesYAML(mods)
		w.Env["MODULE_UID"] = s.uidOf(w.Env["MODULE_NAME"])
	}
	s.Daemon.Start()
	waitUntil(s.t, 30*time.Second, "usb pending after the change", s.markerIs("usb", "pending"))
	waitUntil(s.t, 30*time.Second, "the requeued jobs dispatched", func() error {
		if d := s.commandCalls()["hsetnx"] - calls["hsetnx"]; d < int64(len(ids)) {
			return fmt.Errorf("%d jobs pushed since the restart", d)
		}
		return nil
	})
	// The requeue reaches document.json through the outbox, a moment after the catalog: until
	// it has, a document still reads as done from before the restart, and the wait below would
	// end at once.
	waitUntil(s.t, 30*time.Second, "the requeue in every document.json", func() error {
		for _, id := range ids {
			d, err := s.doc(id)
			if err != nil {
				return err
			}
			if d.Next == "" {
				return fmt.Errorf("document %s (%v) still reads as done", id, d.PathsList)
			}
		}
		return nil
	})
	for _, w := range workers {
		w.Start()
	}
	waitUntil(s.t, 60*time.Second, "the re-run through the chain", s.docsDone(ids, noted))
	waitUntil(s.t, 30*time.Second, "usb ready again", s.markerIs("usb", "ready"))
	return s.records()[len(before):] // sorted by start: the new ones come last
}

// assertRerun checks that each module of rerun ran every file exactly once, in chain order,
// and that the modules of untouched did nothing at all (not even a check).
func assertRerun(t *testing.T, after recordSet, ids []string, rerun, untouched []string) {
	t.Helper()
	for _, m := range untouched {
		if got := after.module(m); len(got) > 0 {
			t.Fatalf("%s, before the change point, worked again:%v", m, got)
		}
	}
	for _, m := range rerun {
		got := after.module(m).runs().ok()
		if byFile := got.countBy(byPath); len(byFile) != len(ids) || len(got) != len(ids) {
			t.Fatalf("%s re-ran %v, want each of %d files once:%v", m, byFile, len(ids), after)
		}
	}
	for _, id := range ids {
		var prev record
		for i, m := range rerun {
			r := after.module(m).runs().where(func(r record) bool { return r.ID == id })[0]
			if i > 0 && r.Start < prev.End {
				t.Fatalf("%s ran before %s finished: %v, %v", m, rerun[i-1], r, prev)
			}
			prev = r
		}
	}
}
