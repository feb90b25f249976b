package search

import (
	"testing"
)

// BenchmarkPrepareForIndex: the CPU a files index write spends on one document before its
// SQL (PrepareFile, parsing, facets, text), for a document as a first sync renders it.
func BenchmarkPrepareForIndex(b *testing.B) {
	docs := hopDocs(1000, false)
	var spec facetSpec
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%250 == 0 {
			spec = hopSettings.spec() // one per write of a round, as Upsert makes
		}
		raw, err := PrepareFile(docs[i%len(docs)], "archive")
		if err != nil {
			b.Fatal(err)
		}
		d, problem := parseDoc(0, raw)
		if problem != "" {
			b.Fatal(problem)
		}
		_ = flatFacets(d.value, spec)
		_ = textHash(searchText(d.value))
		i++
	}
}
