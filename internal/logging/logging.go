// Package logging builds the daemon's zerolog logger: JSON or console output, UTC RFC 3339
// timestamps, and a component field per part of the daemon.
package logging

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Output formats accepted by New (LOG_FORMAT).
const (
	FormatJSON    = "json"
	FormatConsole = "console"
)

// ComponentField is the field Component sets.
const ComponentField = "component"

// New returns a logger writing to w at level (debug, info, warn|warning or error; any case;
// "" means info) in format (json or console; "" means json).
func New(w io.Writer, level, format string) (zerolog.Logger, error) {
	lvl := zerolog.InfoLevel
	if level != "" {
		var err error
		if lvl, err = ParseLevel(level); err != nil {
			return zerolog.Nop(), err
		}
	}
	switch strings.ToLower(format) {
	case "", FormatJSON:
	case FormatConsole:
		w = zerolog.ConsoleWriter{
			Out:          w,
			NoColor:      !isTerminalWriter(w),
			TimeFormat:   time.RFC3339,
			TimeLocation: time.UTC,
		}
	default:
		return zerolog.Nop(), fmt.Errorf("unknown log format %q: want %s or %s", format, FormatJSON, FormatConsole)
	}
	// A hook rather than Context.Timestamp, which would read zerolog's global clock and format.
	return zerolog.New(w).Level(lvl).Hook(utcTimestamp{}), nil
}

// Component returns l with the component field set to name.
func Component(l zerolog.Logger, name string) zerolog.Logger {
	return l.With().Str(ComponentField, name).Logger()
}

// ParseLevel reads a level name: debug, info, warn (or warning) and error, in any case.
func ParseLevel(s string) (zerolog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return zerolog.DebugLevel, nil
	case "info":
		return zerolog.InfoLevel, nil
	case "warn", "warning":
		return zerolog.WarnLevel, nil
	case "error":
		return zerolog.ErrorLevel, nil
	default:
		return zerolog.NoLevel, fmt.Errorf("unknown log level %q: want debug, info, warn or error", s)
	}
}

// utcTimestamp adds the time field in UTC, RFC 3339.
type utcTimestamp struct{}

func (utcTimestamp) Run(e *zerolog.Event, _ zerolog.Level, _ string) {
	e.Str(zerolog.TimestampFieldName, time.Now().UTC().Format(time.RFC3339))
}

// isTerminalWriter reports whether w is a terminal, so console output is coloured only there.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && IsTerminal(f)
}
