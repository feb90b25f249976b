package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// TimeoutMember returns the `timeouts` member for an item taken from queue (`<m>:check` or
// `<m>:run`), byte for byte what the upstream Python runtime writes:
// json.dumps({"q": queue, "d": item}), i.e. `{"q": "<queue>", "d": "<item, JSON-escaped>"}`
// with ", " and ": " separators and every non-ASCII character as a lowercase \uXXXX escape.
// The Go SDK must write the same string, so either kind of worker can be reaped.
func TimeoutMember(queue, item string) string {
	var b strings.Builder
	b.Grow(len(queue) + len(item) + len(item)/8 + 16)
	b.WriteString(`{"q": `)
	writePyString(&b, queue)
	b.WriteString(`, "d": `)
	writePyString(&b, item)
	b.WriteByte('}')
	return b.String()
}

// writePyString writes s as a JSON string the way CPython's json encoder does with
// ensure_ascii (its encode_basestring_ascii): only ' ' to '~' pass through, except '"' and '\'.
func writePyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s { // invalid UTF-8 reads as U+FFFD; Python cannot hold it in a str
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r >= ' ' && r <= '~':
			b.WriteByte(byte(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		default:
			writeUEscape(b, r)
		}
	}
	b.WriteByte('"')
}

// ParseTimeoutMember reads a `timeouts` member written by any worker: the queue it was taken
// from and the exact item string.
func ParseTimeoutMember(member string) (queue, item string, err error) {
	var haveQ, haveD bool
	err = EachMember([]byte(member), func(k string, v json.RawMessage) error {
		switch k {
		case "q":
			haveQ = true
			return json.Unmarshal(v, &queue)
		case "d":
			haveD = true
			return json.Unmarshal(v, &item)
		}
		return nil
	})
	if err == nil && (!haveQ || !haveD) {
		err = errors.New("want fields q and d")
	}
	if err != nil {
		return "", "", fmt.Errorf("parse timeouts member: %w", err)
	}
	return queue, item, nil
}

// RetryMember is the member of a module's retry ZSET (RetryKey): the phase whose queue the
// item returns to, '|', then the item.
func RetryMember(p Phase, item string) string { return string(p) + "|" + item }

// DoneErrorField is an optional top-level field of a done message (our extension): the module
// failed this job and says why. The daemon counts it as a failed attempt.
const DoneErrorField = JobFieldPrefix + "error"

// DoneMessage is one entry of `modules:done`: `{"module": m, "document": {...}, "content"?:
// ...}`. The document echoes the item, job fields included.
type DoneMessage struct {
	Module   string
	Document json.RawMessage
	Content  json.RawMessage // nil when absent
	Error    string          // DoneErrorField; "" when the job succeeded
	// Legacy is true when the payload had no "document": upstream then takes the whole payload
	// (less "module") as the document.
	Legacy bool
}

// ParseDone decodes a done message. It checks the shape only; merge rules are the daemon's.
func ParseDone(raw []byte) (DoneMessage, error) {
	var m DoneMessage
	var haveModule bool
	err := EachMember(raw, func(k string, v json.RawMessage) error {
		switch k {
		case "module":
			haveModule = true
			if err := json.Unmarshal(v, &m.Module); err != nil {
				return fmt.Errorf("module: %w", err)
			}
		case "document":
			m.Document = v
		case "content":
			if string(v) != "null" {
				m.Content = v
			}
		case DoneErrorField:
			if err := json.Unmarshal(v, &m.Error); err != nil {
				return fmt.Errorf("%s: %w", DoneErrorField, err)
			}
		}
		return nil
	})
	if err != nil {
		return DoneMessage{}, fmt.Errorf("parse done message: %w", err)
	}
	if !haveModule || m.Module == "" {
		return DoneMessage{}, errors.New("parse done message: no module")
	}
	if m.Document == nil {
		m.Legacy = true
		m.Document = json.RawMessage(raw)
	} else if len(m.Document) == 0 || m.Document[0] != '{' {
		return DoneMessage{}, errors.New("parse done message: document is not a JSON object")
	}
	return m, nil
}

// Item reads the echoed item fields (id, uid, job fields) from the message's document.
func (m DoneMessage) Item() (ItemInfo, error) { return ParseItem(string(m.Document)) }
