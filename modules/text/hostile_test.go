package text

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/internal/testutil/rssprobe"
	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
)

// Hostile and broken input: each case ends as a per-file outcome (a partial result with
// text.truncated, or a permanent failure with its reason), never a crash, in bounded memory.

// rssChild makes the test binary extract one file and print its peak RSS; rssFixtures makes
// it write the files TestPeakRSS measures (see there).
const (
	rssChild    = "TEXT_MODULE_RSS_CHILD"
	rssFixtures = "TEXT_MODULE_RSS_FIXTURES"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(rssChild); spec != "" {
		os.Exit(rssMain(spec))
	}
	if dir := os.Getenv(rssFixtures); dir != "" {
		os.Exit(writeRSSFixtures(dir))
	}
	code := m.Run()
	if fixtures.dir != "" {
		os.RemoveAll(fixtures.dir)
	}
	os.Exit(code)
}

// rssMain extracts FORMAT:PATH as the module does (same memory limit, result encoded as the
// SDK encodes it) and prints "outcome VmHWM-in-kB".
func rssMain(spec string) int {
	debug.SetMemoryLimit(192 << 20) // as cmd/text-module
	format, path, _ := strings.Cut(spec, ":")
	outcome := "ok"
	d, err := Extract(context.Background(), path, format, Limits{})
	if err != nil {
		outcome = "failed: " + err.Error()
	} else {
		b, merr := json.Marshal(d.Segments)
		if merr != nil {
			outcome = "marshal: " + merr.Error()
		}
		outcome += fmt.Sprintf(" (%d bytes of content, truncated %q)", len(b), d.Truncated)
	}
	hwm, err := rssprobe.VmHWM()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("%d %s\n", hwm, outcome)
	return 0
}

// permanentFailure runs Extract and requires a permanent failure whose reason contains want.
func permanentFailure(t *testing.T, path, format, want string) {
	t.Helper()
	permanentFailureWith(t, Limits{}, path, format, want)
}

func permanentFailureWith(t *testing.T, lim Limits, path, format, want string) {
	t.Helper()
	d, err := Extract(context.Background(), path, format, lim)
	if err == nil {
		t.Fatalf("%s: no error, text %q", filepath.Base(path), allText(d))
	}
	if !sdk.IsPermanent(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %q (permanent %v), want a permanent one containing %q", filepath.Base(path), err, sdk.IsPermanent(err), want)
	}
}

func TestTruncatedCorruptAndEncryptedPDFs(t *testing.T) {
	t.Parallel()
	dir := fixtureDir(t)
	good, err := os.ReadFile(dir + "/sample.pdf")
	if err != nil {
		t.Fatal(err)
	}
	permanentFailure(t, write(t, "truncated.pdf", good[:len(good)/2]), "pdf", "missing %%EOF")
	permanentFailure(t, write(t, "garbage.pdf", []byte("%PDF-1.4\n"+strings.Repeat("garbage ", 500)+"\nstartxref\n99999\n%%EOF\n")), "pdf", "pdf")
	permanentFailure(t, dir+"/encrypted.pdf", "pdf", "encrypted PDF")
	// Damaged streams: every byte of the middle third overwritten. Some pages may survive;
	// the outcome is a result or a permanent failure, never a panic or a hang.
	bad := append([]byte(nil), good...)
	for i := len(bad) / 3; i < 2*len(bad)/3; i++ {
		bad[i] = byte(i*31 + 7)
	}
	if d, err := Extract(context.Background(), write(t, "corrupt.pdf", bad), "pdf", Limits{}); err != nil && !sdk.IsPermanent(err) {
		t.Errorf("corrupt PDF: error %v is not permanent", err)
	} else if err == nil {
		t.Logf("corrupt PDF: kept %d segments, truncated %q", len(d.Segments), d.Truncated)
	}
}

// writeBomb writes a zip whose entry name holds prefix, then filler repeated until n bytes,
// then suffix, deflated as it goes (about 1,000 to 1): a few hundred kB on disk.
func writeBomb(t testing.TB, path string, small []zipPart, name, prefix, filler, suffix string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for _, p := range small {
		w, _ := zw.Create(p.name)
		_, _ = w.Write([]byte(p.body))
	}
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat(filler, (64<<10)/len(filler)))
	_, _ = w.Write([]byte(prefix))
	for written := 0; written < n; written += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = w.Write([]byte(suffix))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// bombSize is more than DefaultLimits.MaxZipBytes: TestPeakRSS uses bombs of this size.
// TestZipBombs uses smallBomb against smallLimits, the same code at a size -race can afford.
const (
	bombSize  = 200 << 20
	smallBomb = 24 << 20
)

var smallLimits = Limits{MaxZipBytes: 16 << 20}

func docxBomb(t testing.TB, dir string, size int) string {
	p := filepath.Join(dir, "bomb.docx")
	writeBomb(t, p, nil, "word/document.xml", `<w:document xmlns:w="w"><w:body>`, "<w:p/>", "</w:body></w:document>", size)
	return p
}

func epubBomb(t testing.TB, dir string, size int) string {
	p := filepath.Join(dir, "bomb.epub")
	parts := epubParts()[:3] // mimetype, container, package: its spine names text/ch 1.xhtml
	writeBomb(t, p, parts, "OEBPS/text/ch 1.xhtml", "<html><body>", "<p></p>", "</body></html>", size)
	return p
}

func TestZipBombs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	permanentFailureWith(t, smallLimits, docxBomb(t, dir, smallBomb), "docx", "zip bomb suspected: more than 16777216 bytes decompressed")
	// The EPUB bomb's chapter is cut mid-tag: the tokenizer may keep a "<" as text, so the
	// outcome is a failure or a near-empty result, either way naming the bomb.
	if d, err := Extract(context.Background(), epubBomb(t, dir, smallBomb), "epub", smallLimits); err != nil {
		if !sdk.IsPermanent(err) || !strings.Contains(err.Error(), "zip bomb suspected: more than") {
			t.Errorf("EPUB bomb: %v", err)
		}
	} else if !strings.Contains(d.Truncated, "zip bomb suspected: more than") || len(allText(d)) > 10 {
		t.Errorf("EPUB bomb: text %q, truncated %q", allText(d), d.Truncated)
	}
	// Too many entries: refused from the directory's count, before reading any.
	many := make([]zipPart, DefaultLimits.MaxZipEntries+1)
	for i := range many {
		many[i] = zipPart{name: fmt.Sprintf("word/e%d.xml", i)}
	}
	p := filepath.Join(dir, "entries.docx")
	writeZip(t, p, many)
	permanentFailure(t, p, "docx", "zip bomb suspected: 10001 entries")
	// A bomb after real text keeps the text and says why it stopped.
	p = filepath.Join(dir, "late.docx")
	writeBomb(t, p, nil, "word/document.xml", `<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>earlyword</w:t></w:r></w:p>`, "<w:p/>", "</w:body></w:document>", smallBomb)
	d, err := Extract(context.Background(), p, "docx", smallLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(allText(d), "earlyword") || !strings.Contains(d.Truncated, "zip bomb") {
		t.Errorf("late bomb: text %q, truncated %q", allText(d), d.Truncated)
	}
}

func TestDeepNesting(t *testing.T) {
	t.Parallel()
	const n = 200_000
	permanentFailure(t, write(t, "deep.xml", []byte(strings.Repeat("<a>", n))), "xml", "XML nested deeper than 512 levels")
	permanentFailure(t, write(t, "deep.json", []byte(strings.Repeat(`[`, n))), "json", "JSON nested deeper than 512 levels")
	// Text before the limit is kept, with the reason it stops.
	d := extract(t, write(t, "deep-text.json", []byte(strings.Repeat(`{"a":[`, n))), "json")
	if !strings.Contains(allText(d), "a") || d.Truncated != "JSON nested deeper than 512 levels" {
		t.Errorf("deep JSON with text: %q, truncated %q", allText(d)[:10], d.Truncated)
	}
	permanentFailure(t, write(t, "deep.rtf", []byte(`{\rtf1`+strings.Repeat("{", n))), "rtf", "RTF groups nested deeper than 512 levels")
	dir := t.TempDir()
	p := filepath.Join(dir, "deep.docx")
	writeZip(t, p, []zipPart{{name: "word/document.xml", body: strings.Repeat("<w:p>", n)}})
	permanentFailure(t, p, "docx", "nested deeper than 512 levels")
	// HTML has no depth limit to hit: its tokenizer keeps no stack.
	d = extract(t, write(t, "deep.html", []byte(strings.Repeat("<div>", n)+"deepword")), "html")
	if !strings.Contains(allText(d), "deepword") {
		t.Errorf("deep HTML: %q", allText(d))
	}
}

// TestHugeTextFile: a 2 GB file (sparse: text, then holes) is read up to MaxPlainBytes and
// says so; the text kept is bounded.
func TestHugeTextFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "huge.log")
	sparseFile(t, p, 2<<30)
	d := extract(t, p, "plain")
	if !strings.Contains(allText(d), "hugefileword") || !strings.Contains(d.Truncated, "read the first 33554432 of 2147483648 bytes") {
		t.Errorf("truncated %q, %d segments", d.Truncated, len(d.Segments))
	}
	if n := len(allText(d)); n > DefaultLimits.MaxTextBytes {
		t.Errorf("%d bytes of text kept, limit %d", n, DefaultLimits.MaxTextBytes)
	}
}

// TestParserPanic: a panic inside a parser is this file's permanent failure.
func TestParserPanic(t *testing.T) {
	t.Parallel()
	const name = "panicky-test-format"
	formatsMu.Lock()
	formats[name] = &format{name: name, read: func(context.Context, *source, *Doc) error { panic("index out of range") }}
	formatsMu.Unlock()
	permanentFailure(t, write(t, "x", []byte("x")), name, "parser failed on this file: index out of range")
}

// vanishing deletes the file once Check has accepted it.
type vanishing struct{ *Module }

func (v vanishing) Check(ctx context.Context, job *sdk.Job) (bool, error) {
	ok, err := v.Module.Check(ctx, job)
	if ok {
		err = errors.Join(err, os.Remove(job.Path))
	}
	return ok, err
}

// TestVanishedFile: a file gone between check and run is a permanent failure with its reason.
func TestVanishedFile(t *testing.T) {
	t.Parallel()
	out := moduletest.Run(t, vanishing{New()}, moduletest.File("gone.txt", "soon gone"))
	if o := out[0]; !o.Permanent || !strings.Contains(o.Err, "vanished before it could be read") {
		t.Errorf("outcome %+v", o)
	}
}

// TestPeakRSS measures the module's peak RSS (VmHWM) on the 2 GB file and on full-size bombs
// (200 MB decompressed), in child processes: this package's test binary built without -race
// (the race detector multiplies memory), which writes the files, then extracts each one in its
// own process as the module does. The goal is at most 256 MB.
func TestPeakRSS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	child := filepath.Join(dir, "text.test")
	if out, err := exec.Command("go", "test", "-c", "-o", child, ".").CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	run := func(env string) string {
		cmd := exec.Command(child, "-test.run=^$")
		cmd.Env = append(os.Environ(), env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child %s: %v\n%s", env, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(rssFixtures + "=" + dir)
	for _, tc := range []struct{ name, format, file string }{
		{"2 GB text file", "plain", "huge.log"},
		{"DOCX bomb", "docx", "bomb.docx"},
		{"EPUB bomb", "epub", "bomb.epub"},
		{"DOCX with 40 MB of text in one run", "docx", "long.docx"},
	} {
		out := run(rssChild + "=" + tc.format + ":" + filepath.Join(dir, tc.file))
		kb, rest, _ := strings.Cut(out, " ")
		n, err := strconv.Atoi(kb)
		if err != nil {
			t.Fatalf("%s: child said %q", tc.name, out)
		}
		t.Logf("%s: peak RSS %.1f MB; %s", tc.name, float64(n)/1024, rest)
		if n > 256*1024 {
			t.Errorf("%s: peak RSS %d kB, goal ≤ 256 MB", tc.name, n)
		}
	}
}

// writeRSSFixtures writes TestPeakRSS's files into dir (in a child process).
func writeRSSFixtures(dir string) int {
	tb := &fatalRecorder{}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(os.Stderr, tb.err)
			os.Exit(1)
		}
	}()
	sparseFile(tb, filepath.Join(dir, "huge.log"), 2<<30)
	docxBomb(tb, dir, bombSize)
	epubBomb(tb, dir, bombSize)
	writeBomb(tb, filepath.Join(dir, "long.docx"), nil, "word/document.xml", `<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>`, "many words ", "</w:t></w:r></w:p></w:body></w:document>", 40<<20)
	return 0
}

// TestRunSplitter: long character data reaches the handler in pieces, and nothing is lost.
func TestRunSplitter(t *testing.T) {
	t.Parallel()
	word := strings.Repeat("é", maxRun) // 2 bytes each: the split must fall between characters
	p := filepath.Join(t.TempDir(), "long.docx")
	writeZip(t, p, []zipPart{{name: "word/document.xml", body: `<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>` + word + `</w:t></w:r></w:p></w:body></w:document>`}})
	d := extract(t, p, "docx")
	if got := allText(d); strings.TrimSpace(got) != word {
		t.Errorf("got %d bytes, want %d (valid UTF-8: %v)", len(strings.TrimSpace(got)), len(word), strings.ToValidUTF8(got, "") == got)
	}
}
