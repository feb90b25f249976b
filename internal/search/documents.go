package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/homeindex/homeindex/protocol"
)

// parsedDoc is a validated document.
type parsedDoc struct {
	id    string
	raw   []byte         // compact JSON text
	value map[string]any // decoded, numbers as float64
}

// parseDocs decodes and checks documents the way Meilisearch would before accepting a batch:
// each must be a JSON object whose "id" is a string ValidateID accepts (Meilisearch fails the
// whole batch on one bad document). All problems are reported at once, up to a few, in an
// error wrapping ErrInvalidDocument. canonical, when not nil, marks the documents that are
// json.Marshal's output (canonicalPreparer): they are neither checked nor compacted again.
func parseDocs(docs []json.RawMessage, canonical []bool) ([]parsedDoc, error) {
	out := make([]parsedDoc, len(docs))
	problems := make([]string, len(docs))
	inParallel(len(docs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i], problems[i] = parseDoc(i, docs[i], canonical != nil && canonical[i])
		}
	})
	if err := docProblems(problems); err != nil {
		return nil, err
	}
	return out, nil
}

// docProblems is the error of a batch whose documents have problems (parseDoc's; "" for none):
// a few of them, and how many more.
func docProblems(problems []string) error {
	var shown []string
	bad := 0
	for _, p := range problems {
		if p == "" {
			continue
		}
		bad++
		if len(shown) < 5 {
			shown = append(shown, p)
		}
	}
	if bad == 0 {
		return nil
	}
	more := ""
	if bad > len(shown) {
		more = fmt.Sprintf(" (and %d more)", bad-len(shown))
	}
	return fmt.Errorf("%w: %s%s", ErrInvalidDocument, strings.Join(shown, "; "), more)
}

// parseDoc decodes and checks the i-th document of a batch; problem says what is wrong with it.
// canonical: raw is json.Marshal's output (parseDocs).
func parseDoc(i int, raw []byte, canonical bool) (d parsedDoc, problem string) {
	raw, rewritten, err := indexForm(raw) // names that are not UTF-8: see FieldPathsExact
	if err != nil {
		return d, fmt.Sprintf("document %d: %v", i, err)
	}
	// A document indexForm rewrote is checked and compacted as any other.
	canonical = canonical && !rewritten
	// Filled in place: a map sized once, not grown key by key. A hint of 28 is the most that
	// fits Go's table of 32 slots (7/8 full); 32 made one of 64, twice the memory, for documents
	// that hold 11 members with no module output and about 20 with several.
	v := make(map[string]any, 28)
	if err := decodeObject(raw, &v, canonical); err != nil || v == nil {
		return d, fmt.Sprintf("document %d: not a JSON object", i)
	}
	switch id, ok := v["id"].(string); {
	case !ok:
		return d, fmt.Sprintf("document %d: missing string field \"id\"", i)
	case !ValidateID(id):
		return d, fmt.Sprintf("document %d: id %.80q: want 1-%d bytes of [A-Za-z0-9_-]", i, id, MaxIDBytes)
	default:
		if !canonical {
			raw = compactJSON(raw)
		}
		// Its own copy: the file table keeps ids, and a slice of the decoded text (decodeObject)
		// would keep the whole document.
		return parsedDoc{id: strings.Clone(id), raw: raw, value: v}, ""
	}
}

func compactJSON(raw []byte) []byte {
	if compact, _ := protocol.Rewrites(raw); !compact {
		return raw // nothing to remove (the usual case: json.Marshal's output, spaces in strings or none)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw // unreachable: raw was just decoded
	}
	return b.Bytes()
}
