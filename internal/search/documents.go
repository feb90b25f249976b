package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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
// error wrapping ErrInvalidDocument.
func parseDocs(docs []json.RawMessage) ([]parsedDoc, error) {
	out := make([]parsedDoc, 0, len(docs))
	var problems []string
	bad := 0
	for i, raw := range docs {
		var v map[string]any
		var problem string
		raw, err := indexForm(raw) // names that are not UTF-8: see FieldPathsExact
		if err != nil {
			problem = fmt.Sprintf("document %d: %v", i, err)
		} else if err := json.Unmarshal(raw, &v); err != nil || v == nil {
			problem = fmt.Sprintf("document %d: not a JSON object", i)
		} else {
			switch id, ok := v["id"].(string); {
			case !ok:
				problem = fmt.Sprintf("document %d: missing string field \"id\"", i)
			case !ValidateID(id):
				problem = fmt.Sprintf("document %d: id %.80q: want 1-%d bytes of [A-Za-z0-9_-]", i, id, MaxIDBytes)
			default:
				out = append(out, parsedDoc{id: id, raw: compactJSON(raw), value: v})
				continue
			}
		}
		bad++
		if len(problems) < 5 {
			problems = append(problems, problem)
		}
	}
	if bad == 0 {
		return out, nil
	}
	more := ""
	if bad > len(problems) {
		more = fmt.Sprintf(" (and %d more)", bad-len(problems))
	}
	return nil, fmt.Errorf("%w: %s%s", ErrInvalidDocument, strings.Join(problems, "; "), more)
}

func compactJSON(raw []byte) []byte {
	if !bytes.ContainsAny(raw, " \t\r\n") {
		return raw // nothing to remove (the usual case: json.Marshal's output)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw // unreachable: raw was just decoded
	}
	return b.Bytes()
}
