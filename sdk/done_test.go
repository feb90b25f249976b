package sdk

import "testing"

// TestWithFields: a field the item has keeps its place and takes the new value, new fields
// follow in sorted order, values are copied verbatim, and keys are compared unescaped.
func TestWithFields(t *testing.T) {
	t.Parallel()
	item := `{"id":"ab","note":"old","na\u006de":{"x": [1, 2]},"uid":"u"}`
	got, err := withFields(item, map[string]any{"zeta": 1, "note": "new", "alpha": true})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"ab","note":"new","name":{"x": [1, 2]},"uid":"u","alpha":true,"zeta":1}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := withFields(item, map[string]any{"id": "x"}); err == nil {
		t.Error("a core field was accepted")
	}
}

func BenchmarkResultMessage(b *testing.B) {
	echo := `{"id":"a305850cb348d48a","uid":"1000","_hi_job":"9f1c2e4d5b6a7980","_hi_attempt":1,"_hi_since":1764000000000}`
	res := Result{Document: map[string]any{"noop": true}}
	for b.Loop() {
		if _, err := resultMessage("m", echo, res); err != nil {
			b.Fatal(err)
		}
	}
}
