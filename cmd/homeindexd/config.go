package main

import (
	"os"

	"github.com/rs/zerolog"

	"github.com/homeindex/homeindex/internal/config"
	"github.com/homeindex/homeindex/internal/logging"
)

// loadConfig reads the environment and builds the logger.
func loadConfig(e env) (*config.Config, zerolog.Logger, error) {
	cfg, err := config.Load(e.getenv, config.WithTTY(isTTY(e.stderr)))
	if err != nil {
		return nil, zerolog.Nop(), err
	}
	log, err := logging.New(e.stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return nil, zerolog.Nop(), err
	}
	return cfg, log, nil
}

func isTTY(w any) bool {
	f, ok := w.(*os.File)
	return ok && logging.IsTerminal(f)
}
