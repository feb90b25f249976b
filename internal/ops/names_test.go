package ops

import (
	"encoding/json"
	"testing"
)

// A path given to retry or requeue keeps its bytes on its way from the command line to the
// daemon's API (JSON), whatever they are.
func TestRequestPathsKeepTheirBytes(t *testing.T) {
	t.Parallel()
	const name = "caf\xe9/new\nline\xff.txt"
	b, err := json.Marshal(RetryRequest{File: name})
	if err != nil {
		t.Fatal(err)
	}
	var retry RetryRequest
	if err := json.Unmarshal(b, &retry); err != nil || string(retry.File) != name {
		t.Errorf("retry request %s read back as %q (%v)", b, retry.File, err)
	}
	if b, err = json.Marshal(RequeueRequest{Path: name}); err != nil {
		t.Fatal(err)
	}
	var requeue RequeueRequest
	if err := json.Unmarshal(b, &requeue); err != nil || string(requeue.Path) != name {
		t.Errorf("requeue request %s read back as %q (%v)", b, requeue.Path, err)
	}
}
