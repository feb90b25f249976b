package media

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// Inspect reads each path as the module would and writes one JSON line per file to w: the
// path, the document fields the module would return ("media", "_geo"), or its failure. It is
// `media-module inspect FILE...`, for trying the module on files without a pipeline. It
// returns the process exit code: 1 when a file failed.
func (m *Module) Inspect(ctx context.Context, paths []string, w io.Writer) int {
	code := 0
	enc := json.NewEncoder(w)
	for _, p := range paths {
		line := map[string]any{"path": p}
		kind := Classify(p, "")
		if kind == KindVideo && !m.HasFFprobe() {
			line["declined"] = "video needs ffprobe"
		} else if info, err := m.Extract(ctx, p, kind); err != nil {
			line["error"] = err.Error()
			code = 1
		} else {
			for k, v := range info.Result().Document {
				line[k] = v
			}
		}
		if err := enc.Encode(line); err != nil {
			fmt.Fprintln(w, err)
			return 1
		}
	}
	return code
}
