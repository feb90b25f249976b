package sdk

import (
	"encoding/json"
	"testing"

	"github.com/homeindex/homeindex/protocol"
)

// BenchmarkReadItem reads an item as homeindexd builds it for a freshly synced file.
func BenchmarkReadItem(b *testing.B) {
	doc := `{"id":"a305850cb348d48a","paths":{"d0000/f0000000.txt":1577836800},"mtime":1577836800,` +
		`"size":1574,"type":"text/plain","next":"m","paths_list":["d0000/f0000000.txt"],"copies":1,` +
		`"version":1,"has_archive_paths":false,"offline":false}`
	item, err := protocol.BuildItem("a305850cb348d48a", json.RawMessage(doc), "1000",
		protocol.Job{Token: protocol.NewToken(), Attempt: 1, Since: 1764000000000})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var d protocol.Document
		if info, err := readItem(item, &d); err != nil || !info.HasJob || info.UID != "1000" {
			b.Fatal(info, err)
		}
	}
}
