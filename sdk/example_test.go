package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/homeindex/homeindex/sdk"
	"github.com/homeindex/homeindex/sdk/moduletest"
)

// greeter is a module: it runs once per file (version.json remembers), notes "hello" in the
// document and indexes "hello world".
type greeter struct{}

func (greeter) Check(_ context.Context, job *sdk.Job) (bool, error) {
	b, err := os.ReadFile(filepath.Join(job.MetadataDir, "version.json"))
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	var v struct{ Version int }
	if err := json.Unmarshal(b, &v); err != nil {
		return true, nil // unreadable: run again
	}
	return v.Version != 1, nil
}

func (greeter) Run(_ context.Context, job *sdk.Job) (sdk.Result, error) {
	job.Log.Info().Str("path", job.Path).Msg("start")
	if err := os.WriteFile(filepath.Join(job.MetadataDir, "version.json"), []byte(`{"version": 1}`), 0o644); err != nil {
		return sdk.Result{}, err
	}
	return sdk.Result{
		Document: map[string]any{"note": "hello"},
		Content:  sdk.Text("hello world"),
	}, nil
}

// A module implements Check and Run; sdk.Main does everything else (queues, deadlines, uid
// checks, resource shares, log.txt, shutdown). Here moduletest feeds it one file through a
// real redis-server, as homeindexd would.
func Example() {
	tb := newExampleTB()
	defer tb.done()

	out := moduletest.Run(tb, greeter{}, moduletest.File("hello.txt", "hi"))
	fmt.Println("ran:", out[0].Ran)
	fmt.Println("note:", string(out[0].Fields["note"]))
	fmt.Println("content:", string(out[0].Content))
	fmt.Println("version.json:", string(out[0].Files["version.json"]))
	// Output:
	// ran: true
	// note: "hello"
	// content: "hello world"
	// version.json: {"version": 1}
}

// A module's main function is one call: it reads MODULE_NAME, MODULE_UID, REDIS_HOST, ... from
// the environment and serves until SIGTERM.
func ExampleMain() {
	sdk.Main(greeter{})
}

// HandlerFuncs turns functions into a Handler; a nil CheckFunc always runs.
func ExampleHandlerFuncs() {
	tb := newExampleTB()
	defer tb.done()

	words := sdk.HandlerFuncs{
		RunFunc: func(_ context.Context, job *sdk.Job) (sdk.Result, error) {
			b, err := os.ReadFile(job.Path)
			if err != nil {
				return sdk.Result{}, err
			}
			return sdk.Result{Document: map[string]any{"bytes": len(b)}}, nil
		},
	}
	out := moduletest.Run(tb, words, moduletest.File("a.txt", "four"), moduletest.File("b.txt", "seven!!"))
	for _, o := range out {
		fmt.Println(o.Path, string(o.Fields["bytes"]))
	}
	// Output:
	// a.txt 4
	// b.txt 7
}

// Permanent parks a job at once: no retry can fix an unsupported file.
func ExamplePermanent() {
	tb := newExampleTB()
	defer tb.done()

	strict := sdk.HandlerFuncs{
		RunFunc: func(context.Context, *sdk.Job) (sdk.Result, error) {
			return sdk.Result{}, sdk.Permanent(errors.New("not a JPEG"))
		},
	}
	out := moduletest.Run(tb, strict, moduletest.File("a.txt", "text"))
	fmt.Println(out[0].Err, out[0].Permanent)
	fmt.Println(sdk.IsPermanent(sdk.Permanent(nil)))
	// Output:
	// not a JPEG true
	// true
}

// Segments carry text with extra fields such as time offsets; they are written beside "text".
func ExampleSegments() {
	tb := newExampleTB()
	defer tb.done()

	transcript := sdk.HandlerFuncs{
		RunFunc: func(context.Context, *sdk.Job) (sdk.Result, error) {
			return sdk.Result{Content: sdk.Segments{
				{Text: "hello", Fields: map[string]any{"time_offset": 0.5, "time_length": 1.25}},
				{Text: "world", Fields: map[string]any{"time_offset": 2}},
			}}, nil
		},
	}
	out := moduletest.Run(tb, transcript, moduletest.File("talk.wav", "RIFF"))
	fmt.Println(string(out[0].Content))
	// Output:
	// [{"text":"hello","time_length":1.25,"time_offset":0.5},{"text":"world","time_offset":2}]
}

// exampleTB lets runnable examples use test helpers: cleanups run at done, failures panic.
// Only the methods redistest and moduletest call are implemented.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func newExampleTB() *exampleTB { return &exampleTB{} }

func (e *exampleTB) Helper()                           {}
func (e *exampleTB) Name() string                      { return "example" }
func (e *exampleTB) Failed() bool                      { return false }
func (e *exampleTB) Log(...any)                        {}
func (e *exampleTB) Logf(string, ...any)               {}
func (e *exampleTB) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func (e *exampleTB) TempDir() string {
	d, err := os.MkdirTemp("", "sdk-example")
	if err != nil {
		panic(err)
	}
	e.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func (e *exampleTB) done() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}
