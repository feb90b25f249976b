package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestBuildItem(t *testing.T) {
	t.Parallel()
	job := Job{Token: "0a1b", Attempt: 1, Since: 1700000000123}
	for _, tc := range []struct {
		name, doc, uid, want string
	}{
		{"with uid", `{"id":"abc","paths":{"x/é.jpg":1.5}}`, "u-1",
			`{"id":"abc","paths":{"x/\u00e9.jpg":1.5},"uid":"u-1","_hi_job":"0a1b","_hi_attempt":1,"_hi_since":1700000000123}`},
		{"no uid", `{"id":"abc"}`, "",
			`{"id":"abc","_hi_job":"0a1b","_hi_attempt":1,"_hi_since":1700000000123}`},
		{"spaces inside strings kept", `{"id":"abc","paths":{"My Photos/a b.jpg":1}}`, "",
			`{"id":"abc","paths":{"My Photos/a b.jpg":1},"_hi_job":"0a1b","_hi_attempt":1,"_hi_since":1700000000123}`},
		{"compacts, astral and DEL", "{ \"id\" : \"abc\", \"t\": \"😀\u007f\" }", "ü",
			`{"id":"abc","t":"\ud83d\ude00\u007f","uid":"\u00fc","_hi_job":"0a1b","_hi_attempt":1,"_hi_since":1700000000123}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := BuildItem("abc", json.RawMessage(tc.doc), tc.uid, job)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			info, err := ParseItem(got)
			if err != nil {
				t.Fatal(err)
			}
			want := ItemInfo{ID: "abc", UID: tc.uid, HasJob: true, Job: job}
			if info != want {
				t.Errorf("ParseItem = %+v, want %+v", info, want)
			}
			uid, ours := ItemUID(got)
			if uid != tc.uid || !ours {
				t.Errorf("ItemUID = %q, %v; want %q, true", uid, ours, tc.uid)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(got), &v); err != nil {
				t.Errorf("item is not valid JSON: %v", err)
			}
			for i := 0; i < len(got); i++ {
				if got[i] >= 0x7f {
					t.Fatalf("item has non-ASCII byte %#x at %d", got[i], i)
				}
			}
		})
	}
}

func TestBuildItemRejects(t *testing.T) {
	t.Parallel()
	good := Job{Token: "ab", Attempt: 1}
	for _, tc := range []struct {
		name, doc string
		job       Job
	}{
		{"not json", `{"id":`, good},
		// Compact already, so not given to json.Compact: EachMember must refuse them.
		{"trailing comma", `{"id":"abc",}`, good},
		{"data after the object", `{"id":"abc"}x`, good},
		{"object after the object", `{"id":"abc"}{}`, good},
		{"unquoted value", `{"id":"abc","x":tru}`, good},
		{"array", `["abc"]`, good},
		{"other id", `{"id":"abd"}`, good},
		{"no id", `{"x":1}`, good},
		{"uid inside", `{"id":"abc","uid":"u"}`, good},
		{"job field inside", `{"id":"abc","_hi_job":"x"}`, good},
		{"bad token", `{"id":"abc"}`, Job{Token: "AB", Attempt: 1}},
		{"empty token", `{"id":"abc"}`, Job{Attempt: 1}},
		{"attempt 0", `{"id":"abc"}`, Job{Token: "ab"}},
	} {
		if _, err := BuildItem("abc", json.RawMessage(tc.doc), "", tc.job); err == nil {
			t.Errorf("%s: got no error", tc.name)
		}
	}
}

func TestWithJob(t *testing.T) {
	t.Parallel()
	item, err := BuildItem("abc", json.RawMessage(`{"id":"abc","note":"\"_hi_job\":\"ff\""}`), "u", Job{Token: "aa", Attempt: 1, Since: 9})
	if err != nil {
		t.Fatal(err)
	}
	got, err := WithJob(item, Job{Token: "aa", Attempt: 2, Since: 9})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(item, `"_hi_attempt":1`, `"_hi_attempt":2`, 1)
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := WithJob(`{"id":"abc"}`, Job{Token: "aa", Attempt: 2}); err == nil {
		t.Error("foreign item: got no error")
	}
}

func TestItemUID(t *testing.T) {
	t.Parallel()
	suffix := `"_hi_job":"aa","_hi_attempt":1,"_hi_since":0}`
	for _, tc := range []struct {
		item, uid string
		ours      bool
	}{
		{`{"id":"a","uid":"x\"y\\",` + suffix, "x\"y\\", true},
		{`{"id":"a","type":"image/png",` + suffix, "", true},
		{`{"id":"a","xuid":"v",` + suffix, "", true},
		{`{"id":"a","m":{"uid":"v"},` + suffix, "", true},
		{`{"id":"a","m":["uid","v"],` + suffix, "", true},
		{`{"uid":"v",` + suffix, "v", true},
		{`{` + suffix, "", true},
		{`{"id":"a","uid":"v"}`, "", false},
		{`{"uid":"é 1000",` + suffix, "é 1000", true},
		{`{"uid":"\u00e9\t",` + suffix, "é\t", true},
		{`{"uid":"a","_hi_job":"AA","_hi_attempt":1,"_hi_since":0}`, "", false},
		{`{"uid":"a","_hi_job":"aa","_hi_attempt":1234567890,"_hi_since":0}`, "", false},
		{`{"uid":"a","_hi_job":"aa","_hi_attempt":1,"_hi_since":0} `, "", false},
	} {
		uid, ours := ItemUID(tc.item)
		if uid != tc.uid || ours != tc.ours {
			t.Errorf("ItemUID(%s) = %q, %v; want %q, %v", tc.item, uid, ours, tc.uid, tc.ours)
		}
	}
	uid, job, ours := ItemJob(`{"id":"a","uid":"u",` + `"_hi_job":"0f9e","_hi_attempt":3,"_hi_since":1700000000123}`)
	if uid != "u" || !ours || job != (Job{Token: "0f9e", Attempt: 3, Since: 1700000000123}) {
		t.Errorf("ItemJob = %q, %+v, %v", uid, job, ours)
	}
}

// jobSuffixRegexp is what jobSuffixAt replaced, kept as its reference.
var jobSuffixRegexp = regexp.MustCompile(`"_hi_job":"([0-9a-f]{1,64})","_hi_attempt":([0-9]{1,9}),"_hi_since":([0-9]{1,17})\}$`)

// FuzzJobSuffixMatchesRegexp holds jobSuffixAt to the regexp it replaced: the same items
// match, at the same place, with the same fields.
func FuzzJobSuffixMatchesRegexp(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","_hi_job":"aa","_hi_attempt":1,"_hi_since":0}`,
		`{"_hi_job":"","_hi_attempt":1,"_hi_since":0}`,
		`"_hi_job":"0123456789abcdef0123456789abcdef","_hi_attempt":123456789,"_hi_since":12345678901234567}`,
		`"_hi_job":"aa","_hi_attempt":1,"_hi_since":123456789012345678}`,
		`"_hi_job":"a"_hi_job":"aa","_hi_attempt":01,"_hi_since":00}`,
		`{"id":"a"}`, `}`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, item string) {
		start, job, ok := jobSuffixAt(item)
		m := jobSuffixRegexp.FindStringSubmatchIndex(item)
		if ok != (m != nil) {
			t.Fatalf("%q: jobSuffixAt %v, regexp %v", item, ok, m != nil)
		}
		if !ok {
			return
		}
		n, _ := strconv.Atoi(item[m[4]:m[5]])
		since, _ := strconv.ParseInt(item[m[6]:m[7]], 10, 64)
		if start != m[0] || job != (Job{Token: item[m[2]:m[3]], Attempt: n, Since: since}) {
			t.Fatalf("%q: jobSuffixAt %d %+v, regexp %v", item, start, job, m)
		}
	})
}

// TestItemUIDMarker: an item built for a uid holds the uid's marker right before its job
// fields, whatever the uid's characters, and an item built for another uid (or none, or a
// document whose values mention the uid) does not hold it.
func TestItemUIDMarker(t *testing.T) {
	t.Parallel()
	if m := ItemUIDMarker(""); m != "" {
		t.Errorf(`ItemUIDMarker("") = %q, want ""`, m)
	}
	job := Job{Token: "ab12", Attempt: 2, Since: 5}
	for _, uid := range []string{"uid-m", `q"u\o`, "café 😀", "<&>", "\n\t", "1"} {
		marker := ItemUIDMarker(uid)
		doc := json.RawMessage(`{"id":"a","note":` + string(mustMarshal(t, `"uid":"`+uid+`","_hi_job":"`)) + `}`)
		item, err := BuildItem("a", doc, uid, job)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(item, marker) != 1 || !strings.HasSuffix(item, marker+strings.TrimPrefix(job.suffix(), `"`+FieldJob+`":"`)) {
			t.Errorf("uid %q: item %s, marker %s", uid, item, marker)
		}
		if got, _ := ItemUID(item); got != uid {
			t.Errorf("uid %q: ItemUID = %q", uid, got)
		}
		for _, other := range []string{"", uid + "x", "x" + uid} {
			o, err := BuildItem("a", doc, other, job)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(o, marker) {
				t.Errorf("uid %q: the item built for %q holds its marker: %s", uid, other, o)
			}
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseItemForeign(t *testing.T) {
	t.Parallel()
	info, err := ParseItem(`{"id": "abc", "paths": {}, "uid": 42}`)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != "abc" || info.UID != "42" || info.HasJob {
		t.Errorf("got %+v", info)
	}
	for _, bad := range []string{`{}`, `{"id":"a","_hi_job":"aa"}`, `[1]`, `{"id":1}`} {
		if _, err := ParseItem(bad); err == nil {
			t.Errorf("ParseItem(%s): got no error", bad)
		}
	}
}

func TestNewToken(t *testing.T) {
	t.Parallel()
	a, b := NewToken(), NewToken()
	if a == b || !validToken(a) || len(a) != 32 {
		t.Errorf("tokens %q, %q", a, b)
	}
}

// eachMemberRecord lists what EachMember gives: each key and value, and the error if any.
func eachMemberRecord(each func([]byte, func(string, json.RawMessage) error) error, data []byte) string {
	var b strings.Builder
	err := each(data, func(k string, v json.RawMessage) error {
		fmt.Fprintf(&b, "%q=%s;", k, v)
		return nil
	})
	if err != nil {
		b.WriteString("error")
	}
	return b.String()
}

// The scanner EachMember uses on valid JSON gives the same members as encoding/json's decoder;
// invalid input still gets the decoder's errors.
func FuzzEachMemberMatchesDecoder(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { } `, `{"a":1}`, "{\n\t\"a\" : 1 ,\r\n \"b\":\"x\"\n}\n",
		`{"id":"0123456789abcdef","paths":{"a/b.txt":1.5e9,"c\"d":2},"next":"","n":-1.25E-3,"t":true,"f":false,"z":null}`,
		`{"s":"\\\"}{][,:","nested":{"a":[1,{"b":[]}],"c":{}},"arr":[[],[[]],{}]}`,
		`{"k\u00e9y":1,"k\\ey":2,"\ud800":3,"é":"\u00e9","":0}`,
		`{"a":1,"a":2}`, `{"a":"` + "\xff\xfe" + `"}`, "{\"\xff\":1}",
		`[1,2]`, `"x"`, `1`, `null`, ``, `{`, `{"a":}`, `{"a":1,}`, `{"a":1} {"b":2}`, `{"a":1}x`,
		`{"a" 1}`, `{"a":1 "b":2}`, `{}}`, `{"a":1}]`, `{"a":tru}`, `{"a":[1,]}`, `{'a':1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := eachMemberRecord(EachMember, data)
		want := eachMemberRecord(eachMemberDecoded, data)
		if !json.Valid(data) && !strings.HasSuffix(want, "error") {
			want += "error" // a stray "}" or "]" after the object, which the decoder misses
		}
		if got != want {
			t.Errorf("EachMember(%q):\n got %s\nwant %s", data, got, want)
		}
	})
}

// parseItemReference is ParseItem as it was before DecodeString and decodeInt: every field
// through json.Unmarshal.
func parseItemReference(item string) (ItemInfo, error) {
	var info ItemInfo
	var haveAttempt, haveSince bool
	err := EachMember([]byte(item), func(k string, v json.RawMessage) error {
		var err error
		switch k {
		case FieldID:
			err = json.Unmarshal(v, &info.ID)
		case FieldUID:
			// Upstream compares str(uid), so a number is accepted and read as its text.
			if len(v) > 0 && v[0] != '"' {
				info.UID = string(v)
				return nil
			}
			err = json.Unmarshal(v, &info.UID)
		case FieldJob:
			err = json.Unmarshal(v, &info.Job.Token)
			info.HasJob = err == nil
		case FieldAttempt:
			err = json.Unmarshal(v, &info.Job.Attempt)
			haveAttempt = true
		case FieldSince:
			err = json.Unmarshal(v, &info.Job.Since)
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

// ParseItem gives what it gave when every field went through json.Unmarshal: the same
// fields, or an error where that had one.
func FuzzParseItemMatchesReference(f *testing.F) {
	for _, seed := range []string{
		`{"id":"abc","paths":{},"uid":42}`, `{"id":"0123456789abcdef","uid":"7","job":"` + strings.Repeat("a", 32) + `","attempt":1,"since":1795745275993}`,
		`{"id":"x","job":"t","attempt":1.5,"since":1}`, `{"id":"x","job":"t","attempt":1e2,"since":1}`, `{"id":"x","job":"t","attempt":99999999999999999999,"since":1}`,
		`{"id":"x","job":"t","attempt":-0,"since":-9223372036854775808}`, `{"id":"x","job":"t","attempt":null,"since":null}`, `{"id":null}`,
		`{"id":"caf\u00e9","uid":"\"q\"","job":"t\tab","attempt":1,"since":2}`, `{"id":"a\/b","uid":"x\\y"}`, "{\"id\":\"bad\xff\"}", `{"id":"x","uid":true}`, `{"id":5}`, `{"id":"x","job":7}`,
		`{"id":"x","attempt":"1"}`, `[1]`, `{`, `{"id":"x"} y`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, item string) {
		got, err := ParseItem(item)
		want, werr := parseItemReference(item)
		if (err == nil) != (werr == nil) || got != want {
			t.Errorf("ParseItem(%q) = %+v, %v; reference %+v, %v", item, got, err, want, werr)
		}
	})
}
