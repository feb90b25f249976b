package sdk

import "bytes"

// LimitedBuffer is a bytes.Buffer that keeps the first Max bytes written to it and drops the
// rest, while reporting every write as complete. Use it for the output of a tool a module
// runs (cmd.Stdout, cmd.Stderr), so a chatty or hostile tool cannot grow the worker's memory:
// keep Max+1 bytes of output to tell "more than Max" from "exactly Max".
type LimitedBuffer struct {
	bytes.Buffer
	Max int
}

// Write keeps what fits under Max and reports len(p) written.
func (b *LimitedBuffer) Write(p []byte) (int, error) {
	if room := b.Max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
