package chunk

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Defaults for CHUNK_TOKENS and CHUNK_OVERLAP (upstream's TOKENS_PER_CHUNK and CHUNK_OVERLAP).
const (
	DefaultTokens  = 510
	DefaultOverlap = 50
)

// Options size the chunks: windows of Tokens words, each sharing Overlap words with the
// previous one.
type Options struct{ Tokens, Overlap int }

// DefaultOptions are upstream's chunk settings.
var DefaultOptions = Options{Tokens: DefaultTokens, Overlap: DefaultOverlap}

// Validate reports options Chunks would have to correct: Tokens < 1, or Overlap outside
// [0, Tokens).
func (o Options) Validate() error {
	if o.Tokens < 1 {
		return fmt.Errorf("chunk tokens %d: must be at least 1", o.Tokens)
	}
	if o.Overlap < 0 || o.Overlap >= o.Tokens {
		return fmt.Errorf("chunk overlap %d: must be at least 0 and less than chunk tokens (%d)", o.Overlap, o.Tokens)
	}
	return nil
}

// normalized corrects invalid options instead of failing, so a bad setting that slipped past
// config validation degrades chunk sizes rather than losing content.
func (o Options) normalized() Options {
	if o.Tokens < 1 {
		o.Tokens = DefaultTokens
	}
	if o.Overlap < 0 {
		o.Overlap = 0
	}
	if o.Overlap >= o.Tokens {
		o.Overlap = o.Tokens - 1
	}
	return o
}

// Doc is one chunk document. It encodes (MarshalJSON) to an object with the core keys in
// schema order followed by Fields in key order, so equal Docs encode to equal bytes.
type Doc struct {
	ID     string // <module>_<file_id>_<segment>, then _<n> for the segment's n-th later piece
	FileID string
	Module string
	Text   string // the exact substring of the segment from the first word to the last
	// Index numbers the file's chunks 0, 1, 2… over all its segments (unique, sortable).
	Index int
	// Segment is the segment's position in the content array.
	Segment int
	// StartTime is the document's mtime plus the segment's time_offset (0 when absent).
	StartTime float64
	// CharOffset and CharLength locate Text in the segment's text, in code points.
	CharOffset, CharLength int
	// Fields are the segment's extra keys (time_offset, time_length, page…). Every chunk of a
	// segment shares the segment's map: treat it as read-only. Keys that name a core field
	// above are not encoded.
	Fields map[string]json.RawMessage
}

// Chunks splits segments into chunk documents for one (file, module), in segment order then
// text order. mtime is the document's mtime (start_time = mtime + time_offset, default offset
// 0). Windows hold opt.Tokens whitespace-separated words and start every Tokens-Overlap words;
// invalid options are corrected (see Options.Validate). A segment with no words gives no
// chunk.
//
// Ids contain only [A-Za-z0-9_-] when fileID and module do (module names are [a-z0-9_-],
// file ids hex). Segment indexes must increase along segs, as ParseContent's do; an index not
// above the previous one is replaced by previous+1 so ids stay unique.
//
// The output depends only on the arguments, and 10 MB of text takes tens of milliseconds.
func Chunks(fileID, module string, mtime float64, segs []Segment, opt Options) []Doc {
	opt = opt.normalized()
	step := opt.Tokens - opt.Overlap
	var docs []Doc
	prev := -1
	for _, seg := range segs {
		si := seg.Index
		if si <= prev {
			si = prev + 1
		}
		prev = si
		base := module + "_" + fileID + "_" + strconv.Itoa(si)
		start := startTime(mtime, seg.Fields)
		piece := 0
		eachWindow(seg.Text, opt.Tokens, step, func(w span) {
			id := base
			if piece > 0 {
				id = base + "_" + strconv.Itoa(piece)
			}
			piece++
			docs = append(docs, Doc{
				ID:         id,
				FileID:     fileID,
				Module:     module,
				Text:       seg.Text[w.b0:w.b1],
				Index:      len(docs),
				Segment:    si,
				StartTime:  start,
				CharOffset: w.r0,
				CharLength: w.r1 - w.r0,
				Fields:     seg.Fields,
			})
		})
	}
	return docs
}

// startTime is mtime + time_offset. An offset that is not a number, or a sum that is not
// finite (JSON cannot encode it), counts as no offset.
func startTime(mtime float64, fields map[string]json.RawMessage) float64 {
	raw, ok := fields["time_offset"]
	if !ok {
		return mtime
	}
	off, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return mtime
	}
	if t := mtime + off; !math.IsInf(t, 0) && !math.IsNaN(t) {
		return t
	}
	return mtime
}
