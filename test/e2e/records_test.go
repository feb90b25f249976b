package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/homeindex/homeindex/protocol"
)

// record is one check or run a module process recorded: a line of its RECORD_FILE, written by
// cmd/internal/jobrecord for the Go modules and by testdata/python_module.py.
type record struct {
	ID      string  `json:"id"`
	Path    string  `json:"path"` // the document's first paths key
	Module  string  `json:"module"`
	Worker  string  `json:"worker"`
	Phase   string  `json:"phase"` // check or run
	Attempt int     `json:"attempt"`
	Start   float64 `json:"start"` // Unix seconds
	End     float64 `json:"end"`
	Result  string  `json:"result"` // check: true or false; run: ok; both: error
	Error   string  `json:"error"`
	SHA256  string  `json:"sha256"` // runs: the hash of the file the module opened
}

// StartTime and EndTime convert the recorded epoch seconds.
func (r record) StartTime() time.Time { return epoch(r.Start) }
func (r record) EndTime() time.Time   { return epoch(r.End) }

func (r record) String() string {
	return fmt.Sprintf("%s/%s %s %s #%d [%s .. %s] %s %s", r.Module, r.Worker, r.Phase, r.Path, r.Attempt,
		r.StartTime().Format("15:04:05.000"), r.EndTime().Format("15:04:05.000"), r.Result, r.Error)
}

func epoch(s float64) time.Time {
	sec := int64(s)
	return time.Unix(sec, int64((s-float64(sec))*1e9))
}

// readRecords reads every *.jsonl file in dir, ordered by start time. A last line without its
// newline is left for the next read: a module may be writing it now, and a reader can see an
// append that crosses a page boundary half done.
func readRecords(t testing.TB, dir string) []record {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []record
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		complete := b[:bytes.LastIndexByte(b, '\n')+1]
		for line := range bytes.Lines(complete) {
			line = bytes.TrimSuffix(line, []byte("\n"))
			var r record
			var exact struct {
				Path protocol.Name `json:"path"` // the exact bytes, not encoding/json's U+FFFD
			}
			if err := errors.Join(json.Unmarshal(line, &r), json.Unmarshal(line, &exact)); err != nil {
				t.Fatalf("%s: bad record %q: %v", f, line, err)
			}
			r.Path = string(exact.Path)
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// recordSet is a filterable list of records.
type recordSet []record

func (rs recordSet) where(keep func(record) bool) recordSet {
	var out recordSet
	for _, r := range rs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func (rs recordSet) runs() recordSet {
	return rs.where(func(r record) bool { return r.Phase == "run" })
}

func (rs recordSet) checks() recordSet {
	return rs.where(func(r record) bool { return r.Phase == "check" })
}

func (rs recordSet) module(name string) recordSet {
	return rs.where(func(r record) bool { return r.Module == name })
}

func (rs recordSet) worker(id string) recordSet {
	return rs.where(func(r record) bool { return r.Worker == id })
}

func (rs recordSet) ok() recordSet {
	return rs.where(func(r record) bool { return r.Result != "error" })
}

func (rs recordSet) onDrive() recordSet {
	return rs.where(func(r record) bool { return strings.HasPrefix(r.Path, "archive/") })
}

func (rs recordSet) regular() recordSet {
	return rs.where(func(r record) bool { return !strings.HasPrefix(r.Path, "archive/") })
}

// startedAfter keeps the records that started after t.
func (rs recordSet) startedAfter(t time.Time) recordSet {
	return rs.where(func(r record) bool { return r.StartTime().After(t) })
}

// countBy counts records per key.
func (rs recordSet) countBy(key func(record) string) map[string]int {
	out := map[string]int{}
	for _, r := range rs {
		out[key(r)]++
	}
	return out
}

func byPath(r record) string { return r.Path }

func (rs recordSet) String() string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("\n  " + r.String())
	}
	return b.String()
}

// assertAllBefore fails unless every record of first ended before any record of then started.
func assertAllBefore(t testing.TB, what string, first, then recordSet) {
	t.Helper()
	if len(first) == 0 || len(then) == 0 {
		t.Fatalf("%s: nothing to compare (%d before, %d after)", what, len(first), len(then))
	}
	lastEnd := first[0]
	for _, r := range first {
		if r.End > lastEnd.End {
			lastEnd = r
		}
	}
	firstStart := then[0]
	for _, r := range then {
		if r.Start < firstStart.Start {
			firstStart = r
		}
	}
	if lastEnd.End > firstStart.Start {
		t.Fatalf("%s: %v ended after %v started;\nbefore:%v\nafter:%v", what, lastEnd, firstStart, first, then)
	}
}

// assertNoOverlap fails if two records of rs overlap in time: the exclusive resource was held
// by two runs at once.
func assertNoOverlap(t testing.TB, what string, rs recordSet) {
	t.Helper()
	sorted := append(recordSet(nil), rs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Start < sorted[j].Start })
	for i := 1; i < len(sorted); i++ {
		if prev, cur := sorted[i-1], sorted[i]; cur.Start < prev.End {
			t.Fatalf("%s: %v and %v overlap%v", what, prev, cur, rs)
		}
	}
}
