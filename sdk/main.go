package sdk

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/rs/zerolog"
)

// Exit codes of Main.
const (
	ExitOK     = 0
	ExitFatal  = 1 // fatal mis-configuration (uid), Load/Unload failed, or Redis refused the worker
	ExitConfig = 2 // invalid environment
)

// Main is a module's whole main function: it reads the configuration from the environment,
// serves h until SIGTERM or SIGINT, and exits with ExitOK after a clean stop. A uid that
// disagrees with MODULES is logged as "fatal mis-configuration" and exits with ExitFatal;
// invalid environment values are all listed and exit with ExitConfig.
//
// With -h, -help or --help as its first argument it prints the variables it reads (PrintHelp)
// and exits with ExitOK.
func Main(h Handler) {
	if HelpAsked(os.Args[1:]) {
		if PrintHelp(os.Stdout, filepath.Base(os.Args[0]), "") != nil {
			os.Exit(ExitFatal)
		}
		os.Exit(ExitOK)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, h, os.Getenv, os.Stderr)
	stop()
	os.Exit(code)
}

// Serve is Main without signals and exit: it serves h with the configuration from the
// environment until ctx ends.
func Serve(ctx context.Context, h Handler) error {
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		return err
	}
	w, err := NewWorker(cfg, h)
	if err != nil {
		return err
	}
	return w.Serve(ctx)
}

// run is Main's body, callable from tests.
func run(ctx context.Context, h Handler, getenv func(string) string, stderr io.Writer) int {
	cfg, err := LoadConfig(getenv)
	if cfg.Log == nil {
		cfg.Log = stderr
	}
	log := zerolog.New(cfg.Log).With().Timestamp().Logger()
	var ce *ConfigError
	if errors.As(err, &ce) {
		log.WithLevel(zerolog.FatalLevel).Strs("problems", ce.Problems).Msg("invalid configuration")
		return ExitConfig
	}
	w, err := NewWorker(cfg, h)
	switch {
	case errors.Is(err, ErrMisconfigured):
		log.WithLevel(zerolog.FatalLevel).Err(err).Msg("fatal mis-configuration")
		return ExitFatal
	case errors.As(err, &ce):
		log.WithLevel(zerolog.FatalLevel).Strs("problems", ce.Problems).Msg("invalid configuration")
		return ExitConfig
	case err != nil:
		log.WithLevel(zerolog.FatalLevel).Err(err).Msg("cannot start")
		return ExitFatal
	}
	if err := w.Serve(ctx); err != nil {
		return ExitFatal // Serve logged it
	}
	return ExitOK
}
