// Package clilog makes the command line's zerolog logger: human-readable
// on a terminal, JSON lines otherwise, at a level given by name.
package clilog

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/term"
)

// Setup sets the global level (debug, info, warn, error) and returns the
// logger writing to w in format auto (console when w is a terminal, JSON
// otherwise), console or json, and whether it is for a person (console).
func Setup(w io.Writer, level, format string) (zerolog.Logger, bool, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), false, err
	}
	console := format == "console"
	switch format {
	case "auto":
		if f, ok := w.(*os.File); ok {
			console = term.IsTerminal(int(f.Fd()))
		}
	case "console", "json":
	default:
		return zerolog.Nop(), false, fmt.Errorf("unknown --log-format %q (auto, console or json)", format)
	}
	zerolog.SetGlobalLevel(lvl)
	return New(w, console), console, nil
}

// New returns a logger writing to w: human-readable when console is set,
// JSON lines otherwise.
func New(w io.Writer, console bool) zerolog.Logger {
	if console {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).With().Timestamp().Logger()
}
