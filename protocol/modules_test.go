package protocol

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseModules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []Module
	}{
		{"unset", "", nil},
		{"blank", "  \n", nil},
		{"comment only", "# none yet\n", nil},
		{"null", "~", nil},
		{"empty list", "[]", nil},
		{"pipeline order and uids", `
- name: ocr
  uid: "0123"
- name: caption
  uid: 42
- name: text-1_x
`, []Module{{Name: "ocr", UID: "0123"}, {Name: "caption", UID: "42"}, {Name: "text-1_x"}}},
		{"unquoted uid keeps its text", "- name: a\n  uid: 0x1F\n- name: b\n  uid: 1.50\n- name: c\n  uid: null\n",
			[]Module{{Name: "a", UID: "0x1F"}, {Name: "b", UID: "1.50"}, {Name: "c"}}},
		{"all fields", `
- name: exif
  uid: 9f2c
  filterable_attributes: [camera, exif.make, gps_lat]
  sortable_attributes:
    - taken-at
  window: 8
`, []Module{{Name: "exif", UID: "9f2c", FilterableAttributes: []string{"camera", "exif.make", "gps_lat"},
			SortableAttributes: []string{"taken-at"}, Window: 8}}},
		{"flow style", `[{name: a, uid: x}, {name: b}]`, []Module{{Name: "a", UID: "x"}, {Name: "b"}}},
		{"anchors", "- &m {name: a, window: 2}\n- {name: b, window: 2}\n", []Module{{Name: "a", Window: 2}, {Name: "b", Window: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkModules(t, ParseModules, tt.yaml, tt.want)
		})
	}
}

func TestParseModulesProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string // one substring per expected problem, in order
	}{
		{"bad yaml", "- name: ocr\n  uid: [1\n", []string{"MODULES: invalid YAML: yaml: line"}},
		{"tab indent", "- name: a\n\tuid: 1\n", []string{"MODULES: invalid YAML:"}},
		{"two documents", "- name: a\n---\n- name: b\n", []string{"MODULES: must be one YAML document"}},
		{"not a list", "name: ocr\n", []string{"MODULES: must be a YAML list of modules, found a mapping"}},
		{"scalar", "ocr", []string{`MODULES: must be a YAML list of modules, found "ocr"`}},
		{"entry not a mapping", "- ocr\n", []string{`MODULES[0]: must be a mapping with name and uid, found "ocr"`}},
		{"missing name", "- uid: 1\n", []string{"MODULES[0].name: required"}},
		{"null name", "- name:\n", []string{"MODULES[0].name: must be a string, found nothing"}},
		{"list name", "- name: [a]\n", []string{"MODULES[0].name: must be a string, found a list"}},
		{"dot-dot name", "- name: ../m\n", []string{`MODULES[0].name "../m": must match ^[a-z0-9][a-z0-9_-]{0,63}$`}},
		{"slash name", "- name: a/b\n", []string{`MODULES[0].name "a/b": must match`}},
		{"upper-case name", "- name: Bad\n", []string{`MODULES[0].name "Bad": must match`}},
		{"name with space", "- name: ok\n- name: ok2\n- name: Bad Name\n", []string{`MODULES[2].name "Bad Name": must match`}},
		{"name with colon", "- name: 'a:b'\n", []string{`MODULES[0].name "a:b": must match`}},
		{"name too long", "- name: " + strings.Repeat("a", 65) + "\n", []string{`MODULES[0].name "aaaa`}},
		{"leading dash", "- name: -a\n", []string{`MODULES[0].name "-a": must match`}},
		{"duplicate names", "- name: ocr\n- name: b\n- name: ocr\n", []string{`MODULES[2].name "ocr": duplicate of MODULES[0]`}},
		{"unknown key", "- name: ocr\n  uid: 1\n  timeout: 30\n", []string{`MODULES[0]: unknown field "timeout"`}},
		{"repeated key", "- name: a\n  name: b\n", []string{"MODULES[0].name: given twice"}},
		{"uid mapping", "- name: a\n  uid: {x: 1}\n", []string{"MODULES[0].uid: must be a string, found a mapping"}},
		{"attributes not a list", "- name: a\n  filterable_attributes: camera\n", []string{`MODULES[0].filterable_attributes: must be a list, found "camera"`}},
		{"bad attribute", "- name: a\n  sortable_attributes: [ok, 'no spaces']\n", []string{`MODULES[0].sortable_attributes[1] "no spaces": must match ^[A-Za-z0-9_.-]+$`}},
		{"window zero", "- name: a\n  window: 0\n", []string{`MODULES[0].window "0": must be an integer ≥ 1`}},
		{"window text", "- name: a\n  window: lots\n", []string{`MODULES[0].window "lots": must be an integer ≥ 1`}},
		{"window float", "- name: a\n  window: 1.5\n", []string{`MODULES[0].window "1.5": must be an integer ≥ 1`}},
		{"several at once", "- name: Bad\n- name: ok\n  extra: 1\n- uid: 3\n- name: ok\n", []string{
			`MODULES[0].name "Bad"`, `MODULES[1]: unknown field "extra"`, "MODULES[2].name: required", `MODULES[3].name "ok": duplicate of MODULES[1]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkProblems(t, ParseModules, tt.yaml, tt.want)
		})
	}
}

func TestModuleProblemFields(t *testing.T) {
	t.Parallel()
	_, got := ParseModules("- name: Bad\n  sortable_attributes: [x, 'a b']\n- uid: 1\n- 3\n")
	want := []ModuleProblem{
		{Entry: 0, Field: "name", Value: `"Bad"`, Reason: "must match " + ModuleNamePattern},
		{Entry: 0, Field: "sortable_attributes[1]", Value: `"a b"`, Reason: "must match " + AttributePattern},
		{Entry: 1, Field: "name", Reason: ReasonRequired},
		{Entry: 2, Reason: `must be a mapping with name and uid, found "3"`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
	if _, got := ParseModules("x: 1"); len(got) != 1 || got[0].Entry != -1 || got[0].String() != "MODULES: must be a YAML list of modules, found a mapping" {
		t.Errorf("whole-value problem = %#v", got)
	}
}

// TestParseModulesLenient: a module checks only the list's shape, name and uid, so a MODULES
// the daemon would refuse for its own keys still gives the module its names and uids.
func TestParseModulesLenient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []Module
	}{
		{"unset", "", nil},
		{"comment only", "# none\n", nil},
		{"null", "~", nil},
		{"empty list", "[]", []Module{}},
		{"daemon keys ignored", "- name: ocr\n  uid: u1\n  filterable_attributes: [x]\n  window: 8\n- name: caption\n  uid: 42\n",
			[]Module{{Name: "ocr", UID: "u1"}, {Name: "caption", UID: "42"}}},
		{"bad daemon-side values", "- name: a\n  window: lots\n  sortable_attributes: camera\n", []Module{{Name: "a"}}},
		{"unknown key", "- name: a\n  timeout: 30\n", []Module{{Name: "a"}}},
		{"daemon name rules not applied", "- name: Other.Module\n- name: a\n- name: a\n  uid: 2\n",
			[]Module{{Name: "Other.Module"}, {Name: "a"}, {Name: "a", UID: "2"}}},
		{"repeated key: last wins", "- name: a\n  uid: 1\n  uid: 2\n", []Module{{Name: "a", UID: "2"}}},
		{"null uid", "- name: a\n  uid: ~\n", []Module{{Name: "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkModules(t, ParseModulesLenient, tt.yaml, tt.want)
		})
	}
}

func TestParseModulesLenientProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"bad yaml", "[unclosed", []string{"MODULES: invalid YAML: "}},
		{"literal newline", `- name: a\n  uid: 1`, []string{`MODULES: invalid YAML: `}},
		{"literal newline hint", `[{name: a}, \n`, []string{`literal \n`}},
		{"not a list", "name: a\n", []string{"MODULES: must be a YAML list of modules, found a mapping"}},
		{"entry not a mapping", "- ocr\n", []string{`MODULES[0]: must be a mapping with name and uid, found "ocr"`}},
		{"missing name", "- uid: x\n", []string{"MODULES[0].name: required"}},
		{"empty name", "- name: ''\n", []string{"MODULES[0].name: required"}},
		{"null name", "- name:\n", []string{"MODULES[0].name: must be a string, found nothing"}},
		{"uid list", "- name: a\n  uid: [1]\n", []string{"MODULES[0].uid: must be a string, found a list"}},
		{"all listed", "- uid: x\n- name: b\n  uid: {}\n", []string{"MODULES[0].name: required", "MODULES[1].uid: must be a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkProblems(t, ParseModulesLenient, tt.yaml, tt.want)
		})
	}
}

type parseFunc func(string) ([]Module, []ModuleProblem)

// checkModules checks that parse reads text as want, without problems.
func checkModules(t *testing.T, parse parseFunc, text string, want []Module) {
	t.Helper()
	got, problems := parse(text)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// checkProblems checks that parse finds one one-line problem per want, in order, each containing
// its want, and returns no modules.
func checkProblems(t *testing.T, parse parseFunc, text string, want []string) {
	t.Helper()
	mods, ps := parse(text)
	if mods != nil {
		t.Errorf("modules = %v, want nil alongside problems", mods)
	}
	if len(ps) != len(want) {
		t.Fatalf("problems: %v, want %d", ps, len(want))
	}
	for i, w := range want {
		got := ps[i].String()
		if !strings.Contains(got, w) {
			t.Errorf("problem %d = %q, want it to contain %q", i, got, w)
		}
		if strings.Contains(got, "\n") {
			t.Errorf("problem %d spans lines: %q", i, got)
		}
	}
}
