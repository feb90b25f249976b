package catalog

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

// Names are bytes: the catalog keeps paths that are not UTF-8, hold newlines or fill
// NAME_MAX exactly, and renders them into the document that goes to document.json and Redis.
func TestCatalogKeepsPathBytes(t *testing.T) {
	t.Parallel()
	c := openTest(t)
	ctx := context.Background()
	paths := []string{"bad\xff\xfename.txt", "caf\xe9.txt", "d\xe9/" + strings.Repeat("\xe9", 251) + ".txt", "new\nline.txt"}
	addDoc(t, c, "abc", "", paths...)
	var seen []string
	if err := c.Files(ctx, func(f File) error { seen = append(seen, f.Path); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		found := false
		for _, s := range seen {
			found = found || s == p
		}
		if !found {
			t.Errorf("catalog lost %q (has %q)", p, seen)
		}
		if id, ok, err := c.FileDoc(ctx, p); err != nil || !ok || id != "abc" {
			t.Errorf("FileDoc(%q) = %q, %v, %v", p, id, ok, err)
		}
	}
	if _, ok, _ := c.FileDoc(ctx, "caf\ufffd.txt"); ok {
		t.Error("the display form found the exact name's file")
	}
	d, _, err := c.Document(ctx, "abc")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back protocol.Document
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range back.Paths {
		got[e.Path] = true
	}
	for _, p := range paths {
		if !got[p] {
			t.Errorf("rendered document lost %q: %s", p, b)
		}
	}
}
