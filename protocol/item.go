package protocol

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/homeindex/homeindex/internal/jsonvalid"
)

// JobFieldPrefix starts every field the daemon adds to a queue item beyond the document and
// `uid` (attempt, token, ...). Modules echo them back; they are never merged into documents.
const JobFieldPrefix = "_hi_"

// Job fields of a queue item. An item is the document JSON followed by `uid` (when the module
// has one) and these three fields, always last and in this order:
//
//	{<document fields>,"uid":"<uid>","_hi_job":"<token>","_hi_attempt":<n>,"_hi_since":<ms>}
const (
	// FieldJob is the dispatch token: lowercase hex, new for every dispatch of a (document,
	// module) job. The catalog keeps it; a result echoing another token is stale.
	FieldJob = JobFieldPrefix + "job"
	// FieldAttempt is the attempt number, 1 for the first. Retries rewrite it, so every
	// attempt of a job is a distinct string (the item's identity on the wire).
	FieldAttempt = JobFieldPrefix + "attempt"
	// FieldSince is when the job was dispatched (attempt 1), in Unix milliseconds.
	FieldSince = JobFieldPrefix + "since"
)

// Job holds an item's job fields.
type Job struct {
	Token   string
	Attempt int
	Since   int64 // Unix milliseconds of the first dispatch
}

// NewToken returns a fresh random dispatch token (32 lowercase hex digits).
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

func validToken(t string) bool {
	if len(t) == 0 || len(t) > 64 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (j Job) suffix() string {
	return `"` + FieldJob + `":"` + j.Token + `","` + FieldAttempt + `":` + strconv.Itoa(j.Attempt) +
		`,"` + FieldSince + `":` + strconv.FormatInt(j.Since, 10) + `}`
}

func (j Job) validate() error {
	if !validToken(j.Token) {
		return fmt.Errorf("job token %q: want 1 to 64 lowercase hex digits", j.Token)
	}
	if j.Attempt < 1 || j.Attempt > 999999999 {
		return fmt.Errorf("job attempt %d: want 1 to 999999999", j.Attempt)
	}
	if j.Since < 0 {
		return fmt.Errorf("job since %d: want >= 0", j.Since)
	}
	return nil
}

// BuildItem returns the queue item for a document: the document JSON (a JSON object whose
// `id` is id), then `uid` when uid is not empty, then the job fields. The document must not
// hold `uid` or job fields of its own. Non-ASCII characters are written as \uXXXX escapes, as
// Python's json.dumps does, so items are pure ASCII.
func BuildItem(id string, doc json.RawMessage, uid string, job Job) (string, error) {
	if err := job.validate(); err != nil {
		return "", err
	}
	// A document rendered by json.Marshal or by this package (every dispatch) is compact
	// already; EachMember below checks it either way.
	body := []byte(doc)
	if needsCompact, _ := Rewrites(doc); needsCompact {
		var compact bytes.Buffer
		if err := json.Compact(&compact, doc); err != nil {
			return "", fmt.Errorf("document %s: %w", id, err)
		}
		body = compact.Bytes()
	}
	if len(body) < 2 || body[0] != '{' {
		return "", fmt.Errorf("document %s: want a JSON object", id)
	}
	gotID := false
	err := EachMember(body, func(k string, v json.RawMessage) error {
		switch {
		case k == FieldUID || strings.HasPrefix(k, JobFieldPrefix):
			return fmt.Errorf("field %q belongs to the queue item, not the document", k)
		case k == FieldID:
			var s string
			if json.Unmarshal(v, &s) != nil || s != id {
				return fmt.Errorf("field id is %s, want %q", v, id)
			}
			gotID = true
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("document %s: %w", id, err)
	}
	if !gotID {
		return "", fmt.Errorf("document %s: no id field", id)
	}
	var b strings.Builder
	b.Grow(len(body) + 128)
	writeASCII(&b, body[:len(body)-1]) // drop the closing brace
	if len(body) > 2 {
		b.WriteByte(',')
	}
	if uid != "" {
		writeUID(&b, uid)
		b.WriteByte(',')
	}
	b.WriteString(job.suffix())
	return b.String(), nil
}

func writeUID(b *strings.Builder, uid string) {
	b.WriteString(`"` + FieldUID + `":`)
	u, _ := json.Marshal(uid)
	writeASCII(b, u)
}

// ItemUIDMarker is the text every BuildItem item built for uid holds right before its job
// fields, `"uid":<uid>,"_hi_job":"`. A string value cannot hold it (its quotes are escaped),
// only a nested object with those very keys could: finding it tells a worker an item is its
// own without parsing the item. It is "" for the empty uid, whose items name none.
func ItemUIDMarker(uid string) string {
	if uid == "" {
		return ""
	}
	var b strings.Builder
	writeUID(&b, uid)
	b.WriteString(`,"` + FieldJob + `":"`)
	return b.String()
}

// writeASCII copies compact JSON, escaping every non-ASCII rune and DEL as \uXXXX (UTF-16
// surrogate pairs above the BMP), like Python's json.dumps with ensure_ascii.
func writeASCII(b *strings.Builder, js []byte) {
	for i := 0; i < len(js); {
		c := js[i]
		if c < utf8.RuneSelf && c != 0x7f {
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(js[i:])
		writeUEscape(b, r)
		i += n
	}
}

func writeUEscape(b *strings.Builder, r rune) {
	const hexDigits = "0123456789abcdef"
	one := func(u rune) {
		b.WriteString(`\u`)
		b.WriteByte(hexDigits[u>>12&0xf])
		b.WriteByte(hexDigits[u>>8&0xf])
		b.WriteByte(hexDigits[u>>4&0xf])
		b.WriteByte(hexDigits[u&0xf])
	}
	if r > 0xffff {
		r -= 0x10000
		one(0xd800 + (r>>10)&0x3ff)
		one(0xdc00 + r&0x3ff)
		return
	}
	one(r)
}

// errNotObject is EachMember's error for JSON that is not an object.
var errNotObject = errors.New("want a JSON object")

// EachMember calls fn for every top-level member of a JSON object, in order, without decoding
// the values: how items and messages are read here, and how the daemon reads documents it
// rewrites member by member. Data after the object is an error. Each value is a slice of data
// (capacity clipped, so appending to it cannot overwrite data).
//
// Every module result and queue item goes through here, so valid JSON (jsonvalid.Valid, which
// allocates nothing) is split by a scanner that only tracks strings and nesting; anything
// else goes through encoding/json's decoder, which says what is wrong.
func EachMember(data []byte, fn func(key string, value json.RawMessage) error) error {
	if !jsonvalid.Valid(data) {
		if err := eachMemberDecoded(data, fn); err != nil {
			return err
		}
		// The decoder read a whole object and took what follows for the end of an enclosing
		// one (a stray "}" or "]").
		return errors.New("data after the JSON object")
	}
	i := jsonvalid.SkipSpace(data, 0)
	if data[i] != '{' {
		return errNotObject
	}
	i = jsonvalid.SkipSpace(data, i+1)
	if data[i] == '}' {
		return nil
	}
	for {
		// data is valid: a key string, a colon, a value, then a comma or the closing brace.
		end := jsonvalid.SkipValue(data, i)
		key, err := memberKey(data[i:end])
		if err != nil {
			return err
		}
		i = jsonvalid.SkipSpace(data, jsonvalid.SkipSpace(data, end)+1)
		end = jsonvalid.SkipValue(data, i)
		if err := fn(key, json.RawMessage(data[i:end:end])); err != nil {
			return err
		}
		i = jsonvalid.SkipSpace(data, end)
		if data[i] == '}' {
			return nil
		}
		i = jsonvalid.SkipSpace(data, i+1)
	}
}

// memberKey decodes a quoted key; plain ASCII keys, nearly all, without encoding/json.
func memberKey(quoted []byte) (string, error) {
	inner := quoted[1 : len(quoted)-1]
	for _, c := range inner {
		if c == '\\' || c >= 0x80 {
			var k string
			err := json.Unmarshal(quoted, &k)
			return k, err
		}
	}
	return string(inner), nil
}

// eachMemberDecoded is EachMember through encoding/json's decoder, for data that is not valid
// JSON: it calls fn for the members before the error, as it always did, and returns the error.
func eachMemberDecoded(data []byte, fn func(key string, value json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errNotObject
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON object")
	}
	return nil
}

// ItemInfo is what the daemon reads back from a queue item.
type ItemInfo struct {
	ID     string // the document id
	UID    string // the module uid the item was built for; "" when it has none
	HasJob bool   // false for an item not built by BuildItem (e.g. from the upstream core)
	Job    Job
}

// ParseItem reads an item's document id, uid and job fields. Keys are matched exactly (JSON
// is case-sensitive). An item without job fields parses with HasJob false.
func ParseItem(item string) (ItemInfo, error) {
	var info ItemInfo
	var haveAttempt, haveSince bool
	err := EachMember([]byte(item), func(k string, v json.RawMessage) error {
		var err error
		switch k {
		case FieldID:
			err = DecodeString(v, &info.ID)
		case FieldUID:
			// Upstream compares str(uid), so a number is accepted and read as its text.
			if len(v) > 0 && v[0] != '"' {
				info.UID = string(v)
				return nil
			}
			err = DecodeString(v, &info.UID)
		case FieldJob:
			err = DecodeString(v, &info.Job.Token)
			info.HasJob = err == nil
		case FieldAttempt:
			var n int64
			n, err = decodeInt(v, strconv.IntSize)
			info.Job.Attempt = int(n)
			haveAttempt = true
		case FieldSince:
			info.Job.Since, err = decodeInt(v, 64)
			haveSince = true
		}
		if err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
		return nil
	})
	if err != nil {
		return ItemInfo{}, fmt.Errorf("parse item: %w", err)
	}
	if info.ID == "" {
		return ItemInfo{}, errors.New("parse item: no id")
	}
	if info.HasJob && (!haveAttempt || !haveSince) {
		return ItemInfo{}, errors.New("parse item: incomplete job fields")
	}
	return info, nil
}

// DecodeString is json.Unmarshal(v, dst) for a string, without encoding/json when v is a
// string literal (jsonvalid.UnmarshalString): every result the merger reads and every document
// the index prepares goes through here.
func DecodeString(v json.RawMessage, dst *string) error {
	return jsonvalid.UnmarshalString(v, dst)
}

// decodeInt is json.Unmarshal into an integer of bits bits, without encoding/json for a plain
// integer; anything else (a fraction, an exponent, out of range, not a number) goes through
// encoding/json for its error, or for null (no error, zero).
func decodeInt(v json.RawMessage, bits int) (int64, error) {
	if x, err := strconv.ParseInt(string(v), 10, bits); err == nil {
		return x, nil
	}
	if bits == 64 {
		var x int64
		err := json.Unmarshal(v, &x)
		return x, err
	}
	var x int32
	err := json.Unmarshal(v, &x)
	return int64(x), err
}

// WithJob returns item with its job fields replaced by job. The item must have been built by
// BuildItem (its job fields are its suffix).
func WithJob(item string, job Job) (string, error) {
	if err := job.validate(); err != nil {
		return "", err
	}
	start, _, ok := jobSuffixAt(item)
	if !ok {
		return "", errors.New("rewrite item: no job fields at its end")
	}
	return item[:start] + job.suffix(), nil
}

// ItemUID returns the uid a BuildItem item was built for ("" when none) by reading only its
// end, so it costs O(len(uid)) rather than a parse. ours is false for an item without job
// fields at its end (e.g. one written by the upstream core): call ParseItem for those.
func ItemUID(item string) (uid string, ours bool) {
	uid, _, ours = ItemJob(item)
	return uid, ours
}

// ItemJob is ItemUID that also returns the job fields.
func ItemJob(item string) (uid string, job Job, ours bool) {
	start, job, ok := jobSuffixAt(item)
	if !ok {
		return "", Job{}, false
	}
	head := item[:start] // ends with ',' or '{'
	if !strings.HasSuffix(head, `",`) {
		return "", job, true
	}
	// Walk back over the JSON string that ends head, then expect `"uid":` before it.
	end := len(head) - 2 // the closing quote
	i := end - 1
	for ; i >= 0; i-- {
		if head[i] != '"' {
			continue
		}
		bs := 0
		for j := i - 1; j >= 0 && head[j] == '\\'; j-- {
			bs++
		}
		if bs%2 == 0 {
			break
		}
	}
	const key = `"` + FieldUID + `":`
	if i < 0 || !strings.HasSuffix(head[:i], key) {
		return "", job, true
	}
	if before := head[:i-len(key)]; !strings.HasSuffix(before, ",") && !strings.HasSuffix(before, "{") {
		return "", job, true
	}
	if err := DecodeString(json.RawMessage(head[i:end+1]), &uid); err != nil {
		return "", job, true
	}
	return uid, job, true
}

// jobSuffixAt reads the job fields BuildItem puts at an item's end
// (`"_hi_job":"<1-64 hex>","_hi_attempt":<1-9 digits>,"_hi_since":<1-17 digits>}`), from the
// end backwards. A regexp did this (FuzzJobSuffixMatchesRegexp keeps it as the reference) and
// took most of a worker's reading of an item.
// start is where `"_hi_job"` begins.
func jobSuffixAt(item string) (start int, job Job, ok bool) {
	s, found := strings.CutSuffix(item, "}")
	if !found {
		return 0, Job{}, false
	}
	s, since, found := cutTrailing(s, isDigit, 17)
	if !found {
		return 0, Job{}, false
	}
	if s, found = strings.CutSuffix(s, `,"`+FieldSince+`":`); !found {
		return 0, Job{}, false
	}
	s, attempt, found := cutTrailing(s, isDigit, 9)
	if !found {
		return 0, Job{}, false
	}
	if s, found = strings.CutSuffix(s, `","`+FieldAttempt+`":`); !found {
		return 0, Job{}, false
	}
	s, token, found := cutTrailing(s, isLowerHex, 64)
	if !found {
		return 0, Job{}, false
	}
	if s, found = strings.CutSuffix(s, `"`+FieldJob+`":"`); !found {
		return 0, Job{}, false
	}
	job.Token = token
	job.Attempt, _ = strconv.Atoi(attempt)
	job.Since, _ = strconv.ParseInt(since, 10, 64)
	return len(s), job, true
}

// cutTrailing splits off the longest run of bytes in class at the end of s, if it has 1 to max.
func cutTrailing(s string, class func(byte) bool, max int) (rest, run string, ok bool) {
	i := len(s)
	for i > 0 && class(s[i-1]) {
		i--
	}
	if n := len(s) - i; n == 0 || n > max {
		return s, "", false
	}
	return s[:i], s[i:], true
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isLowerHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }
