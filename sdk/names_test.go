package sdk_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
)

// Names are bytes: a Go module is handed the real path of a file whose name is not UTF-8,
// holds a newline or fills NAME_MAX (in a directory whose name is not UTF-8 either), opens it,
// and the document it answers with still carries the exact name.
func TestJobPathIsTheRealFile(t *testing.T) {
	t.Parallel()
	rels := []string{"caf\xe9.txt", "bad\xff\xfename.txt", "new\nline.txt", "d\xe9r/" + strings.Repeat("\xe9", 251) + ".txt"}
	var opts []moduletest.Option
	for i, rel := range rels {
		opts = append(opts, moduletest.File(rel, "content "+strings.Repeat("x", i)))
	}
	hasher := sdk.HandlerFuncs{RunFunc: func(_ context.Context, job *sdk.Job) (sdk.Result, error) {
		b, err := os.ReadFile(job.Path)
		if err != nil {
			return sdk.Result{}, err
		}
		sum := sha256.Sum256(b)
		return sdk.Result{Document: map[string]any{"sha256": hex.EncodeToString(sum[:]), "first": protocol.Name(job.Document.Paths[0].Path)}}, nil
	}}
	for i, o := range moduletest.Run(t, hasher, opts...) {
		if !o.Ran || o.Err != "" {
			t.Errorf("%q: ran %v, err %q", rels[i], o.Ran, o.Err)
			continue
		}
		sum := sha256.Sum256([]byte("content " + strings.Repeat("x", i)))
		if want := `"` + hex.EncodeToString(sum[:]) + `"`; string(o.Fields["sha256"]) != want {
			t.Errorf("%q: module read %s, want %s", rels[i], o.Fields["sha256"], want)
		}
		var first protocol.Name
		if err := json.Unmarshal(o.Fields["first"], &first); err != nil || string(first) != rels[i] {
			t.Errorf("%q: answered name %s (%v)", rels[i], o.Fields["first"], err)
		}
	}
}
