package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The process test runs this test binary as the module: with runAsModule set, TestMain calls
// main instead of the tests.
const runAsModule = "OCR_MODULE_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsModule) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// A language tesseract lacks, or an invalid setting, exits 2 before Redis is touched, naming
// the Debian package to install.
func TestStartChecks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"OCR_LANGUAGES=eng+xyz"}, "tesseract-ocr-xyz"},
		{[]string{"OCR_MAX_PAGES=-1"}, "OCR_MAX_PAGES"},
		{[]string{"PATH=/nonexistent"}, "install the Debian package tesseract-ocr"},
	} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append([]string{runAsModule + "=1", "PATH=" + os.Getenv("PATH"), "MODULE_NAME=ocr", "REDIS_HOST=127.0.0.1:1"}, c.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d (%v), stderr %q; want 2 naming %q", c.env, code, err, stderr.String(), c.want)
		}
	}
}

// --help prints every variable the module reads and exits 0, even without tesseract or an
// environment: it is answered before the start checks.
func TestHelp(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "--help")
	cmd.Env = []string{runAsModule + "=1", "PATH=/nonexistent"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"usage: ocr-module", "MODULE_NAME", "REDIS_HOST", "OCR_LANGUAGES", "OCR_MAX_PIXELS"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
}
