package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/homeindex/homeindex/protocol"
)

// documentFields returns the fields of a result's document that a module may set, and the
// keys dropped as ambiguous: "" and names equal to a core field but for case ("ID",
// "_HI_JOB"). Core fields themselves are skipped silently: every result echoes them. In the
// legacy form the payload is the document, so its "module" and "content" are not fields.
func documentFields(msg protocol.DoneMessage) (fields map[string]json.RawMessage, rejected []string, err error) {
	dec := json.NewDecoder(bytes.NewReader(msg.Document))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("want a JSON object")
	}
	fields = map[string]json.RawMessage{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		switch {
		case msg.Legacy && (k == "module" || k == "content"):
		case protocol.IsCoreField(k):
		case k == "" || protocol.IsCoreField(strings.ToLower(k)):
			rejected = append(rejected, cut(k, 64))
		default:
			fields[k] = v
		}
	}
	return fields, rejected, nil
}
