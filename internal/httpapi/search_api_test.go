package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/app"
	"github.com/homeindex/homeindex/internal/catalog"
)

// searchReply is /api/search's answer.
type searchReply struct {
	Total  int64 `json:"total"`
	Page   int   `json:"page"`
	Pages  int   `json:"pages"`
	Offset int   `json:"offset"`
	Hits   []struct {
		ID       string `json:"id"`
		Kind     string `json:"kind"`
		Snippets []struct {
			Module   string                     `json:"module"`
			Location map[string]json.RawMessage `json:"location"`
			Parts    []struct {
				Text  string `json:"text"`
				Match bool   `json:"match"`
			} `json:"parts"`
		} `json:"_snippets"`
		Paths map[string]float64 `json:"paths"`
	} `json:"hits"`
	Facets map[string][]struct {
		Value  string `json:"value"`
		Count  int64  `json:"count"`
		Online *bool  `json:"online"`
	} `json:"facets"`
}

func (r searchReply) ids() string {
	var ids []string
	for _, h := range r.Hits {
		ids = append(ids, h.ID)
	}
	return strings.Join(ids, " ")
}

// TestSearchAPI: words in content with snippets, per-attribute filters, date and size ranges,
// sorts, pages and facets.
func TestSearchAPI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, nil)
	ctx := t.Context()
	if err := app.ConfigureIndex(ctx, d.app.Index, d.app.Config); err != nil {
		t.Fatal(err)
	}
	docs := []string{
		`{"id":"a1","paths":{"docs/report.pdf":1563100000},"mtime":1563100000,"size":5000,"type":"application/pdf","copies":1,"offline":false}`,
		`{"id":"a2","paths":{"archive/usb1/IMG_1.jpg":1500000000},"mtime":1500000000,"size":300000,"type":"image/jpeg","copies":1,"offline":true,"media":{"date_unix":1563109445,"camera":"Canon EOS 5D"}}`,
		`{"id":"a3","paths":{"music/song.mp3":1400000000},"mtime":1400000000,"size":4000000,"type":"audio/mpeg","copies":1,"offline":false}`,
		`{"id":"a4","paths":{"notes/<b>x</b>.txt":1600000000},"mtime":1600000000,"size":10,"type":"text/plain","copies":1,"offline":false}`,
	}
	chunks := []string{
		`{"id":"text_a1_0","file_id":"a1","module":"text","text":"the quarterly <script>zebra</script> report","index":0,"segment":0,"page":2}`,
	}
	var raw []json.RawMessage
	for _, s := range docs {
		raw = append(raw, json.RawMessage(s))
	}
	if err := d.app.Index.Files().Upsert(ctx, raw); err != nil {
		t.Fatal(err)
	}
	if err := d.app.Index.Chunks().Upsert(ctx, []json.RawMessage{json.RawMessage(chunks[0])}); err != nil {
		t.Fatal(err)
	}
	get := func(params string) searchReply {
		t.Helper()
		code, body := d.do(t, http.MethodGet, "/api/search?"+params, "")
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", params, code, body)
		}
		var r searchReply
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := get("q=zebra&facets=all")
	if r.ids() != "a1" || r.Total != 1 || len(r.Hits[0].Snippets) != 1 {
		t.Fatalf("zebra: %+v", r)
	}
	s := r.Hits[0].Snippets[0]
	if s.Module != "text" || string(s.Location["page"]) != "2" || len(s.Parts) != 3 || s.Parts[1].Text != "zebra" || !s.Parts[1].Match ||
		s.Parts[0].Text != "the quarterly <script>" {
		t.Errorf("snippet %+v", s)
	}
	if f := r.Facets["kind"]; len(f) != 1 || f[0].Value != "document" || f[0].Count != 1 {
		t.Errorf("kind facet %+v", r.Facets)
	}
	if r.Hits[0].Paths["docs/report.pdf"] == 0 {
		t.Errorf("paths not an object: %+v", r.Hits[0])
	}
	if got := get("kind=image&kind=audio").ids(); got != "a2 a3" {
		t.Errorf("kind=image&kind=audio: %s", got)
	}
	if got := get("date_from=2019-01-01&date_to=2019-12-31&sort=oldest").ids(); got != "a1 a2" {
		t.Errorf("2019 oldest first: %s", got)
	}
	if got := get("size_min=10&size_max=5000&sort=largest").ids(); got != "a1 a4" {
		t.Errorf("size range: %s", got)
	}
	if got := get("drive=usb1&offline=true").ids(); got != "a2" {
		t.Errorf("drive and offline: %s", got)
	}
	if got := get("f.camera=" + url.QueryEscape("Canon EOS 5D")).ids(); got != "a2" {
		t.Errorf("f.camera: %s", got)
	}
	p := get("sort=name&limit=3&page=2&facets=year,drive")
	if p.ids() != "a3" || p.Total != 4 || p.Page != 2 || p.Pages != 2 || p.Offset != 3 {
		t.Errorf("page 2: %+v", p)
	}
	if len(p.Facets["year"]) != 3 || len(p.Facets["drive"]) != 2 {
		t.Errorf("facets %+v", p.Facets)
	}
	// Drive facet values say whether the drive is plugged in now (the catalog's registry).
	driveState := func() string {
		var out []string
		for _, f := range get("facets=drive,kind").Facets["drive"] {
			if f.Online == nil {
				t.Fatalf("drive %s without online state", f.Value)
			}
			out = append(out, fmt.Sprintf("%s:%d:%v", f.Value, f.Count, *f.Online))
		}
		return strings.Join(out, " ")
	}
	if got := driveState(); got != "local:3:true usb1:1:false" {
		t.Errorf("drives before the drive is seen: %s", got)
	}
	setDrive := func(present bool) {
		if err := d.app.Catalog.Update(ctx, func(tx *catalog.Tx) error { return tx.SetDrivePresent(ctx, "USB1", present) }); err != nil {
			t.Fatal(err)
		}
	}
	setDrive(true)
	if got := driveState(); got != "local:3:true usb1:1:true" {
		t.Errorf("drives with USB1 plugged in: %s", got)
	}
	setDrive(false)
	if got := driveState(); got != "local:3:true usb1:1:false" {
		t.Errorf("drives with USB1 unplugged: %s", got)
	}
	if k := get("facets=kind").Facets["kind"]; len(k) == 0 || k[0].Online != nil {
		t.Errorf("online state on another facet: %+v", k)
	}
	for _, bad := range []string{"sort=sideways", "facets=nope", "date_from=yesterday", "page=0", "f.nope=1"} {
		if code, body := d.do(t, http.MethodGet, "/api/search?"+bad, ""); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", bad, code, body)
		}
	}
}
