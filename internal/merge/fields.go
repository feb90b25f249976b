package merge

import (
	"encoding/json"
	"strings"

	"github.com/homeindex/homeindex/protocol"
)

// documentFields returns the fields of a result's document that a module may set, and the
// keys dropped as ambiguous: "" and names equal to a core field but for case ("ID",
// "_HI_JOB"). Core fields themselves are skipped silently: every result echoes them. In the
// legacy form the payload is the document, so its "module" and "content" are not fields.
func documentFields(msg protocol.DoneMessage) (fields map[string]json.RawMessage, rejected []string, err error) {
	fields = map[string]json.RawMessage{}
	err = protocol.EachMember(msg.Document, func(k string, v json.RawMessage) error {
		switch {
		case msg.Legacy && (k == "module" || k == "content"):
		case protocol.IsCoreField(k):
		case k == "" || protocol.IsCoreField(strings.ToLower(k)):
			rejected = append(rejected, cut(k, 64))
		default:
			fields[k] = v
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return fields, rejected, nil
}
