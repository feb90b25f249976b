package ocr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/homeindex/homeindex/sdk"
)

// Environment variables the module reads (beside the SDK's); Environment describes them.
const (
	EnvLanguages   = "OCR_LANGUAGES"
	EnvMaxPages    = "OCR_MAX_PAGES"
	EnvDPI         = "OCR_DPI"
	EnvPageTimeout = "OCR_PAGE_TIMEOUT"
	EnvMaxPixels   = "OCR_MAX_PIXELS"
)

// Defaults of Config.
const (
	DefaultLanguage  = "eng"
	DefaultMaxPages  = 200
	DefaultDPI       = 300
	DefaultMaxPixels = 60_000_000
)

// Environment describes the variables the module reads beside the SDK's, with their defaults,
// for its --help (sdk.PrintHelp).
func Environment() []sdk.EnvVar {
	return []sdk.EnvVar{
		{Name: EnvLanguages, Meaning: `tesseract languages, "+" or "," separated (default ` + DefaultLanguage + ")"},
		{Name: EnvMaxPages, Meaning: fmt.Sprintf("pages read per file at most (default %d)", DefaultMaxPages)},
		{Name: EnvDPI, Meaning: fmt.Sprintf("resolution PDF pages are drawn at (default %d)", DefaultDPI)},
		{Name: EnvPageTimeout, Meaning: "seconds one page may take (default: the job's TIMEOUT)"},
		{Name: EnvMaxPixels, Meaning: fmt.Sprintf("largest image or drawn page, in pixels (default %d)", DefaultMaxPixels)},
	}
}

// Config configures the module.
type Config struct {
	Languages []string
	MaxPages  int
	DPI       int
	// PageTimeout bounds one page; zero leaves only the job's deadline.
	PageTimeout time.Duration
	MaxPixels   int64
	// Tools: "" looks them up in PATH.
	Tesseract, PDFToText, PDFToPPM, PDFInfo string
}

var langRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)

// LoadConfig reads the module's variables; every invalid value is listed in the error.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{MaxPages: DefaultMaxPages, DPI: DefaultDPI, MaxPixels: DefaultMaxPixels}
	var problems []string
	langs := strings.FieldsFunc(getenv(EnvLanguages), func(r rune) bool { return r == '+' || r == ',' || r == ' ' })
	if len(langs) == 0 {
		langs = []string{DefaultLanguage}
	}
	for _, l := range langs {
		if !langRE.MatchString(l) {
			problems = append(problems, fmt.Sprintf("%s: %q is not a language name", EnvLanguages, l))
		}
	}
	c.Languages = langs
	positive := func(name string, dst *int64) {
		v := getenv(name)
		if v == "" {
			return
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			problems = append(problems, fmt.Sprintf("%s: %q is not a positive integer", name, v))
			return
		}
		*dst = n
	}
	pages, dpi := int64(c.MaxPages), int64(c.DPI)
	positive(EnvMaxPages, &pages)
	positive(EnvDPI, &dpi)
	positive(EnvMaxPixels, &c.MaxPixels)
	c.MaxPages, c.DPI = int(pages), int(dpi)
	if v := getenv(EnvPageTimeout); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			problems = append(problems, fmt.Sprintf("%s: %q is not a positive number of seconds", EnvPageTimeout, v))
		}
		c.PageTimeout = time.Duration(f * float64(time.Second))
	}
	if len(problems) > 0 {
		return c, errors.New(strings.Join(problems, "; "))
	}
	return c, nil
}

// DebianPackage is the Debian package holding a tesseract language's data.
func DebianPackage(lang string) string {
	return "tesseract-ocr-" + strings.ReplaceAll(strings.ToLower(lang), "_", "-")
}

// CheckLanguages asks tesseract which languages it has and fails, naming each missing one and
// its Debian package, unless every configured language is there.
func CheckLanguages(ctx context.Context, tesseract string, langs []string) error {
	out, err := exec.CommandContext(ctx, tesseract, "--list-langs").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --list-langs: %w: %s", tesseract, err, bytes.TrimSpace(out))
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n")[1:] { // the first line is a title
		have[strings.TrimSpace(line)] = true
	}
	var missing []string
	for _, l := range langs {
		if !have[l] {
			missing = append(missing, fmt.Sprintf("%s (install the Debian package %s)", l, DebianPackage(l)))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: tesseract lacks %s", EnvLanguages, strings.Join(missing, ", "))
	}
	return nil
}
