package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// errHelp: --help was asked for and printed; exit 0.
var errHelp = errors.New("help")

// newFlags builds a FlagSet whose errors become usage errors (exit 2) and whose --help prints
// to stdout and exits 0.
func newFlags(e env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.stdout, "usage: homeindexd %s\n\n", synopsis)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses and maps flag errors. On --help, Parse has printed the usage already.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return errHelp
	}
	if err != nil {
		return usageError{fmt.Sprintf("%s: %v", fs.Name(), err)}
	}
	return nil
}
