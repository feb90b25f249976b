package merge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/homeindex/homeindex/internal/catalog"
	"github.com/homeindex/homeindex/internal/outbox"
	"github.com/homeindex/homeindex/protocol"
)

const (
	docA = "00000000000000aa"
	docB = "00000000000000bb"
)

func TestContentFileIsTheOutboxs(t *testing.T) {
	if contentFile != outbox.ContentFile {
		t.Fatalf("content file %q, outbox reads %q", contentFile, outbox.ContentFile)
	}
}

// A result is merged: module fields in, core fields and their case variants out, content.json
// written before the commit, `next` advanced, the document, drive marker and chunks dirtied,
// the result and its in-flight entry released; the last module clears `next` and the drive
// is no longer pending.
func TestMergeApplied(t *testing.T) {
	f := newFixture(t, Config{})
	f.addDoc(docA, "drive1/a.txt", "drive1", "m1")
	f.drain()
	f.dispatch(docA, "m1")
	const content = `["first line",{"text":"second line","page":2}]`
	f.work("m1", func(item string) string {
		// Core fields changed (duplicates are refused, so through a re-encoded object), their
		// case variants, and module fields.
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(item), &doc); err != nil {
			t.Fatal(err)
		}
		doc["next"] = json.RawMessage(`"m9"`)
		doc["paths"] = json.RawMessage(`{"elsewhere/x":1}`)
		doc["size"] = json.RawMessage(`999`)
		doc["failures"] = json.RawMessage(`{"m1":{}}`)
		doc["offline"] = json.RawMessage(`true`)
		doc["ID"] = json.RawMessage(`"other"`)
		doc["Paths"] = json.RawMessage(`{}`)
		doc["title"] = json.RawMessage(`"hello"`)
		doc["tags"] = json.RawMessage(`["a","b"]`)
		b, _ := json.Marshal(doc)
		return result("m1", string(b), "", content)
	})
	f.mustHandleNext()

	if s := f.m.Stats(); s.Merged != 1 || s.RejectedFields != 2 || s.Quarantined != 0 {
		t.Fatalf("stats %+v", s)
	}
	d := f.doc(docA)
	if d.Next != "m2" || d.Size != 5 || d.Offline || len(d.Paths) != 1 || d.Paths[0].Path != "drive1/a.txt" || len(d.Failures) != 0 {
		t.Fatalf("core fields changed: %+v", d)
	}
	if string(d.Fields["title"]) != `"hello"` || string(d.Fields["tags"]) != `["a","b"]` {
		t.Fatalf("fields %v", d.Fields)
	}
	for _, k := range []string{"ID", "Paths", "next", "module"} {
		if _, ok := d.Fields[k]; ok {
			t.Fatalf("field %q merged: %v", k, d.Fields)
		}
	}
	if got := string(f.readMeta("by-id/" + docA + "/m1/content.json")); got != content {
		t.Fatalf("content.json %q", got)
	}
	keys := f.outboxKeys()
	for _, k := range []string{catalog.DocKey(docA), catalog.ChunksKey(docA, "m1"), catalog.DriveKey("drive1")} {
		if !keys[k] {
			t.Fatalf("outbox lacks %s: %v", k, keys)
		}
	}
	if _, ok := f.job(docA, "m1"); ok {
		t.Fatal("job row kept after merge")
	}
	if _, ok, _ := f.q.JobItem(f.ctx, "m1", docA); ok {
		t.Fatal("in-flight entry kept after merge")
	}
	if n := f.llen(protocol.DoneProcessingKey); n != 0 {
		t.Fatalf("%d results left in processing", n)
	}
	if got := <-f.merged; got != [2]string{docA, "m1"} {
		t.Fatalf("OnMerged %v", got)
	}

	f.drain()
	chunks := f.readMeta("by-id/" + docA + "/m1/chunks.json")
	var cs []map[string]any
	if err := json.Unmarshal(chunks, &cs); err != nil || len(cs) != 2 {
		t.Fatalf("chunks.json %s (%v)", chunks, err)
	}
	var written map[string]any
	if err := json.Unmarshal(f.readMeta("by-id/"+docA+"/document.json"), &written); err != nil {
		t.Fatal(err)
	}
	if written["title"] != "hello" || written["next"] != "m2" {
		t.Fatalf("document.json %v", written)
	}
	if st, _ := f.cat.DriveStatus(f.ctx, "drive1"); !st.Pending {
		t.Fatal("drive ready while m2 is due")
	}

	// The last module: no content, `next` clears, the drive stops pending at once, and m1's
	// chunks are left alone.
	f.dispatch(docA, "m2")
	f.work("m2", func(item string) string { return result("m2", item, `"caption":"a cat"`, "") })
	f.mustHandleNext()
	if d := f.doc(docA); d.Next != "" || string(d.Fields["caption"]) != `"a cat"` || string(d.Fields["title"]) != `"hello"` {
		t.Fatalf("after m2: %+v", d)
	}
	if st, _ := f.cat.DriveStatus(f.ctx, "drive1"); st.Pending {
		t.Fatal("drive still pending after its last file's last module")
	}
	keys = f.outboxKeys()
	if keys[catalog.ChunksKey(docA, "m2")] || !keys[catalog.DriveKey("drive1")] {
		t.Fatalf("outbox after m2: %v", keys)
	}
	f.drain()
	if _, err := os.Stat(filepath.Join(f.metaDir, "by-id", docA, "m2")); !os.IsNotExist(err) {
		t.Fatalf("m2 dir written without content: %v", err)
	}
	if got := f.readMeta("by-id/" + docA + "/m1/chunks.json"); string(got) != string(chunks) {
		t.Fatal("m1 chunks changed by a result of m2")
	}
}

// A later result of the same module without content (or with null content) keeps its
// content.json and chunks.
func TestResultWithoutContentKeepsChunks(t *testing.T) {
	f := newFixture(t, Config{Pipeline: []string{"m1"}})
	f.addDoc(docA, "a.txt", "", "m1")
	f.dispatch(docA, "m1")
	f.work("m1", func(item string) string { return result("m1", item, "", `"some words here"`) })
	f.mustHandleNext()
	f.drain()
	chunks := f.readMeta("by-id/" + docA + "/m1/chunks.json")

	for i, content := range []string{"", "null"} {
		f.dispatch(docA, "m1") // requeued by a module upgrade, say
		f.work("m1", func(item string) string { return result("m1", item, fmt.Sprintf(`"v%d":2`, i), content) })
		f.mustHandleNext()
		if f.outboxKeys()[catalog.ChunksKey(docA, "m1")] {
			t.Fatalf("content %q dirtied the chunks", content)
		}
		f.drain()
		if got := f.readMeta("by-id/" + docA + "/m1/content.json"); string(got) != `"some words here"` {
			t.Fatalf("content.json %q", got)
		}
		if got := f.readMeta("by-id/" + docA + "/m1/chunks.json"); string(got) != string(chunks) {
			t.Fatal("chunks.json changed")
		}
	}
	if s := f.m.Stats(); s.Merged != 3 {
		t.Fatalf("stats %+v", s)
	}
}

// The legacy form: the payload is the document itself, with "module" beside its fields and
// the job fields echoed.
func TestLegacyBareDocument(t *testing.T) {
	f := newFixture(t, Config{})
	f.addDoc(docA, "a.txt", "", "m1")
	f.dispatch(docA, "m1")
	f.work("m1", func(item string) string {
		return `{"module":"m1",` + withFields(item, `"title":"legacy","content":"legacy words"`)[1:]
	})
	f.mustHandleNext()
	d := f.doc(docA)
	if f.m.Stats().Merged != 1 || d.Next != "m2" || string(d.Fields["title"]) != `"legacy"` {
		t.Fatalf("stats %+v doc %+v", f.m.Stats(), d)
	}
	for _, k := range []string{"module", "content"} {
		if _, ok := d.Fields[k]; ok {
			t.Fatalf("envelope key %q merged as a field", k)
		}
	}
	if got := f.readMeta("by-id/" + docA + "/m1/content.json"); string(got) != `"legacy words"` {
		t.Fatalf("content.json %q", got)
	}
}

// A payload as the upstream Python runtime writes it: ", " and ": " separators, the item
// re-serialized by json.dumps.
func TestPythonRuntimePayload(t *testing.T) {
	f := newFixture(t, Config{})
	f.addDoc(docA, "a.txt", "", "m1")
	f.dispatch(docA, "m1")
	var payload string
	f.work("m1", func(item string) string {
		payload = pyDumps(t, result("m1", item, `"text_lang":"en","score":0.5`, `[{"text":"hi there","time_offset":1.5}]`))
		return payload
	})
	if !json.Valid([]byte(payload)) || payload[:18] != `{"module": "m1", "` {
		t.Fatalf("not a Python-style payload: %s", payload)
	}
	f.mustHandleNext()
	d := f.doc(docA)
	if f.m.Stats().Merged != 1 || d.Next != "m2" || string(d.Fields["text_lang"]) != `"en"` || string(d.Fields["score"]) != `0.5` {
		t.Fatalf("stats %+v doc %+v", f.m.Stats(), d)
	}
	if got := f.readMeta("by-id/" + docA + "/m1/content.json"); string(got) != `[{"text": "hi there", "time_offset": 1.5}]` {
		t.Fatalf("content.json %q", got)
	}
}
