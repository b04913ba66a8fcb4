package clilog

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestSetup(t *testing.T) {
	defer zerolog.SetGlobalLevel(zerolog.GlobalLevel())
	for _, tc := range []struct {
		level, format string
		console       bool
		err           string
		want          string // in the output of an info line
	}{
		{level: "info", format: "json", want: `"message":"hello"`},
		{level: "info", format: "auto", want: `"message":"hello"`}, // a buffer is no terminal
		{level: "info", format: "console", console: true, want: "hello\x1b[0m\n"},
		{level: "warn", format: "json", want: ""},
		{level: "loud", format: "json", err: "Unknown Level String"},
		{level: "info", format: "xml", err: `unknown --log-format "xml" (auto, console or json)`},
	} {
		var b bytes.Buffer
		log, console, err := Setup(&b, tc.level, tc.format)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: %v, want %q", tc.level, tc.format, err, tc.err)
			}
			continue
		}
		log.Info().Msg("hello")
		if err != nil || console != tc.console || (tc.want == "") != (b.Len() == 0) || !strings.Contains(b.String(), tc.want) {
			t.Errorf("%s %s: %v, console %v, %q", tc.level, tc.format, err, console, b.String())
		}
	}
}
