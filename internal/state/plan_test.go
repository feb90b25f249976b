package state

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// mods builds a module list from "name" or "name@uid" strings.
func mods(specs ...string) []Module {
	out := []Module{}
	for _, s := range specs {
		m := Module{Name: s}
		for i := range s {
			if s[i] == '@' {
				m = Module{Name: s[:i], UID: s[i+1:]}
			}
		}
		out = append(out, m)
	}
	return out
}

func TestDiffAndRewind(t *testing.T) {
	tests := []struct {
		name string
		// prev is saved with Save before the start; legacy, when set, is written to
		// modules_config.json instead; neither means first start.
		prev   []Module
		legacy string
		cur    []Module
		want   Plan
		moves  map[string]string // next → where Rewind sends it; unlisted → stays
	}{
		{
			name:  "first start",
			cur:   mods("a@1", "b@1"),
			want:  Plan{RequeueFrom: -1, FirstStart: true},
			moves: map[string]string{},
		},
		{
			name:  "nothing changed",
			prev:  mods("a@1", "b@1"),
			cur:   mods("a@1", "b@1"),
			want:  Plan{RequeueFrom: -1, Unchanged: true},
			moves: map[string]string{},
		},
		{
			name:  "insert at 1",
			prev:  mods("a@1", "c@1"),
			cur:   mods("a@1", "b@1", "c@1"),
			want:  Plan{RequeueFrom: 1},
			moves: map[string]string{"c": "b", "": "b"},
		},
		{
			name:  "insert at 0",
			prev:  mods("a@1", "b@1"),
			cur:   mods("new@1", "a@1", "b@1"),
			want:  Plan{RequeueFrom: 0},
			moves: map[string]string{"a": "new", "b": "new", "": "new"},
		},
		{
			name:  "uid change at 1",
			prev:  mods("a@1", "b@1", "c@1"),
			cur:   mods("a@1", "b@2", "c@1"),
			want:  Plan{RequeueFrom: 1, UIDChanged: []string{"b"}},
			moves: map[string]string{"c": "b", "": "b"},
		},
		{
			name:  "uid change of the last module",
			prev:  mods("a@1", "b@1"),
			cur:   mods("a@1", "b@2"),
			want:  Plan{RequeueFrom: 1, UIDChanged: []string{"b"}},
			moves: map[string]string{"": "b"},
		},
		{
			name:  "reorder",
			prev:  mods("a@1", "b@1", "c@1"),
			cur:   mods("a@1", "c@1", "b@1"),
			want:  Plan{RequeueFrom: 1},
			moves: map[string]string{"b": "c", "": "c"},
		},
		{
			name:  "reorder with a uid change",
			prev:  mods("a@1", "b@1", "c@1"),
			cur:   mods("c@2", "a@1", "b@1"),
			want:  Plan{RequeueFrom: 0, UIDChanged: []string{"c"}},
			moves: map[string]string{"a": "c", "b": "c", "": "c"},
		},
		{
			name:  "append at the end",
			prev:  mods("a@1", "b@1"),
			cur:   mods("a@1", "b@1", "c@1"),
			want:  Plan{RequeueFrom: 2},
			moves: map[string]string{"": "c"},
		},
		{
			name:  "remove the last module",
			prev:  mods("a@1", "b@1", "c@1"),
			cur:   mods("a@1", "b@1"),
			want:  Plan{RequeueFrom: -1, Removed: []string{"c"}},
			moves: map[string]string{"c": ""},
		},
		{
			name:  "remove the last two modules",
			prev:  mods("a@1", "b@1", "c@1"),
			cur:   mods("a@1"),
			want:  Plan{RequeueFrom: -1, Removed: []string{"b", "c"}},
			moves: map[string]string{"b": "", "c": ""},
		},
		{
			name:  "remove a middle module",
			prev:  mods("a@1", "b@1", "c@1"),
			cur:   mods("a@1", "c@1"),
			want:  Plan{RequeueFrom: 1, Removed: []string{"b"}},
			moves: map[string]string{"b": "c", "": "c"},
		},
		{
			name:  "replace a middle module",
			prev:  mods("a@1", "b@1", "c@1"),
			cur:   mods("a@1", "d@1", "c@1"),
			want:  Plan{RequeueFrom: 1, Removed: []string{"b"}},
			moves: map[string]string{"b": "d", "c": "d", "": "d"},
		},
		{
			name:  "remove every module",
			prev:  mods("a@1", "b@1"),
			cur:   mods(),
			want:  Plan{RequeueFrom: -1, Removed: []string{"a", "b"}},
			moves: map[string]string{"a": "", "b": ""},
		},
		{
			name:   "upstream modules_config.json without uids",
			legacy: `{"modules": [{"name": "a"}, {"name": "b", "filterable_attributes": ["x"]}]}`,
			cur:    mods("a", "b@2"),
			want:   Plan{RequeueFrom: 1, UIDChanged: []string{"b"}},
			moves:  map[string]string{"": "b"},
		},
		{
			name:   "upstream modules_config.json unchanged",
			legacy: `{"modules":[{"name":"a","uid":"1"},{"name":"b","uid":7}]}`,
			cur:    mods("a@1", "b@7"),
			want:   Plan{RequeueFrom: -1, Unchanged: true},
			moves:  map[string]string{},
		},
		{
			name:   "upstream empty modules_config.json",
			legacy: `{"modules": []}`,
			cur:    mods("a@1", "b@1"),
			want:   Plan{RequeueFrom: 0},
			moves:  map[string]string{"": "a"},
		},
		{
			name:   "upstream test helper's bare list",
			legacy: `[{"name":"timeout-module"}]`,
			cur:    mods("example-module@1", "timeout-module@2"),
			want:   Plan{RequeueFrom: 0, UIDChanged: []string{"timeout-module"}},
			moves:  map[string]string{"timeout-module": "example-module", "": "example-module"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			switch {
			case tt.legacy != "":
				if err := os.WriteFile(filepath.Join(dir, LegacyFile), []byte(tt.legacy), 0o644); err != nil {
					t.Fatal(err)
				}
			case tt.prev != nil:
				if err := Save(dir, tt.prev); err != nil {
					t.Fatal(err)
				}
			}
			prev, found, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if found != (tt.prev != nil || tt.legacy != "") {
				t.Fatalf("Load found = %v", found)
			}
			plan := Diff(prev, tt.cur)
			if !reflect.DeepEqual(plan, tt.want) {
				t.Errorf("Diff = %+v, want %+v", plan, tt.want)
			}
			for _, next := range nexts(prev, tt.cur) {
				want, moves := tt.moves[next]
				if !moves {
					want = next
				}
				got := plan.Rewind(prev, tt.cur, next)
				if got != want {
					t.Errorf("Rewind(%q) = %q, want %q", next, got, want)
				}
				if again := plan.Rewind(prev, tt.cur, got); again != got {
					t.Errorf("Rewind(Rewind(%q)) = %q, want %q (a replay must not move it again)", next, again, got)
				}
			}
		})
	}
}

// nexts returns every next value a document can have: each module of either list, and "".
func nexts(prev, cur []Module) []string {
	out := []string{""}
	for _, m := range slices.Concat(prev, cur) {
		if !slices.Contains(out, m.Name) {
			out = append(out, m.Name)
		}
	}
	return out
}

func TestRewindUnknownNext(t *testing.T) {
	prev, cur := mods("a", "b"), mods("a", "c")
	plan := Diff(prev, cur)
	if got := plan.Rewind(prev, cur, "gone"); got != "a" {
		t.Errorf("a next in neither list went to %q, want the first module", got)
	}
	if got := Diff(prev, nil).Rewind(prev, nil, "gone"); got != "" {
		t.Errorf("with no modules, an unknown next went to %q, want done", got)
	}
	if got := Diff(nil, cur).Rewind(nil, cur, "gone"); got != "gone" {
		t.Errorf("on first start an unknown next went to %q, want it kept", got)
	}
}

// TestRewindProperties checks random list changes: answers are modules of cur or "", a
// replay moves nothing, documents before the requeue point stay, and every document that
// moves lands at or before its old place in the pipeline.
func TestRewindProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randomList := func() []Module {
		names := rng.Perm(6)[:rng.IntN(6)]
		out := []Module{}
		for _, n := range names {
			out = append(out, Module{Name: fmt.Sprintf("m%d", n), UID: fmt.Sprint(rng.IntN(2))})
		}
		return out
	}
	for range 2000 {
		prev, cur := randomList(), randomList()
		plan := Diff(prev, cur)
		for _, next := range nexts(prev, cur) {
			got := plan.Rewind(prev, cur, next)
			if got != "" && indexOf(cur, got) < 0 {
				t.Fatalf("%v → %v: Rewind(%q) = %q, not a current module", prev, cur, next, got)
			}
			if again := plan.Rewind(prev, cur, got); again != got {
				t.Fatalf("%v → %v: Rewind(%q) = %q, then %q", prev, cur, next, got, again)
			}
			pos := indexOf(prev, next)
			if pos >= 0 && indexOf(cur, next) >= 0 && (plan.RequeueFrom < 0 || pos < plan.RequeueFrom) && got != next {
				t.Fatalf("%v → %v: %q is before the requeue point but moved to %q", prev, cur, next, got)
			}
			if plan.RequeueFrom >= 0 && got != next && got != cur[plan.RequeueFrom].Name && indexOf(cur, next) >= 0 {
				t.Fatalf("%v → %v: %q moved to %q, not to the requeue point", prev, cur, next, got)
			}
		}
	}
}
