package search

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/sqlitedb"
)

// sqliteJSONB returns SQLite's jsonb() of text, or its error.
func sqliteJSONB(t testing.TB, db *sql.DB, text []byte) ([]byte, error) {
	t.Helper()
	var out []byte
	err := db.QueryRow(`SELECT jsonb(?)`, string(text)).Scan(&out)
	return out, err
}

func openScratchDB(t testing.TB) *sql.DB {
	db := sqlitedb.Open("file:" + filepath.Join(t.TempDir(), "scratch.db"))
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// checkJSONB compares appendJSONB with SQLite's jsonb() on one text: the same bytes, or an
// error from both. SQLite also reads JSON5, which appendJSONB refuses: there only an error
// is asked of it, for text that is not RFC 8259 JSON.
func checkJSONB(t testing.TB, db *sql.DB, text []byte) {
	t.Helper()
	want, wantErr := sqliteJSONB(t, db, text)
	got, gotErr := appendJSONB([]byte("prefix"), text)
	switch {
	case gotErr != nil && wantErr == nil && json.Valid(text):
		t.Errorf("%.200q: appendJSONB error %v, jsonb() %x", text, gotErr, want)
	case gotErr != nil && wantErr == nil: // JSON5
	case gotErr == nil && wantErr != nil:
		t.Errorf("%.200q: appendJSONB %x, jsonb() error %v", text, got, wantErr)
	case gotErr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)):
		t.Errorf("%.200q:\n got %x\nwant %x", text, got[len("prefix"):], want)
	case gotErr != nil && string(got) != "prefix":
		t.Errorf("%.200q: dst changed on error: %q", text, got)
	}
}

// appendJSONB writes what SQLite's jsonb() writes: for the facet objects flatFacets makes of
// random documents, for strings and containers around every header size, and for random
// JSON of every form; and it fails where jsonb() fails.
func TestAppendJSONBMatchesSQLite(t *testing.T) {
	db := openScratchDB(t)
	cases := []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1`, `-12`, `3.25`, `1e3`, `1E-7`, `-2.5e+10`, `true`, `false`, `null`,
		`123456789012345678901234567890`, ` { "a" : [ 1 , 2 ] } `, "{\n\t\"ws\" :\r\n [ 1 ] \n}",
		`{"s":"plain","e":"tab\there","u":"\u00e9\ud83d\ude00","bad":"\ud800","q":"a\"b\\c\/d"}`,
		"{\"raw\":\"caf\xc3\xa9\",\"invalid\":\"x\xff\xfey\"}", `{"dup":1,"dup":2}`,
		`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `[1 2]`, `01`, `1.`, `.5`, `1e`, `-`, `+1`, `0x1F`, `'a'`, `{a:1}`,
		`"\x"`, `"\u12"`, "\"a\x01b\"", `"unterminated`, `[`, `{"a":1`, ``, `  `, `1 2`, `nul`, `truex`, `NaN`,
		`[1,2]x`,
	}
	for _, n := range []int{10, 11, 12, 254, 255, 256, 65534, 65535, 65536, 70000} {
		cases = append(cases, `"`+strings.Repeat("x", n)+`"`, `"`+strings.Repeat("x", n-2)+`\n"`)
		cases = append(cases, `[`+strings.Repeat(`1,`, n/2)+`1]`, `{"k":"`+strings.Repeat("y", n)+`"}`)
	}
	for _, depth := range []int{998, 999, 1000, 1001, 1002} {
		cases = append(cases, strings.Repeat(`[`, depth)+strings.Repeat(`]`, depth),
			strings.Repeat(`{"a":`, depth)+`1`+strings.Repeat(`}`, depth))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		cases = append(cases, randomJSON(r, 0), randomValue(r, 0))
	}
	for _, c := range cases {
		checkJSONB(t, db, []byte(c))
	}
	// The facet objects themselves, as the index writes them.
	spec := Settings{Filterable: []string{"kind", "size", "tags", "paths_list", "v"}, Sortable: []string{"size", "name"}}.spec()
	for range 500 {
		var doc map[string]any
		if err := json.Unmarshal([]byte(randomJSON(r, 0)), &doc); err != nil {
			continue
		}
		doc["kind"], doc["size"], doc["tags"] = "text", r.Float64()*1e9, []any{"a", "b\"c", 3.5, "é"}
		for _, obj := range flatFacets(doc, spec) {
			checkJSONB(t, db, obj)
		}
	}
}

func FuzzAppendJSONB(f *testing.F) {
	f.Add([]byte(`{"v:kind":"text","m:tags":["a","b\"c",3.5]}`))
	f.Add([]byte(`[1,-2.5e3,true,false,null,{"":""}]`))
	db := openScratchDB(f)
	f.Fuzz(func(t *testing.T, data []byte) { checkJSONB(t, db, data) })
}
