// Command tracecast analyses and predicts the behaviour of task-based HPC
// executions from their traces. See `tracecast --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/specs"
)

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	// Commands that run pipelines handle SIGINT/SIGTERM themselves (a
	// graceful then a hard stop); the others stop at once, as usual.
	if err := newRootCmd().ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "tracecast:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode is the process exit code of a command's error: 2 for a usage
// error (a bad flag, argument or option), 78 for an invalid pipeline file,
// 1 otherwise.
func exitCode(err error) int {
	var ee *exitError
	var oe *specs.OptionError
	var ce *pipelines.ConfigError
	switch {
	case errors.As(err, &ce):
		return 78 // EX_CONFIG
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &oe), strings.HasPrefix(err.Error(), "unknown command "):
		return 2
	}
	return 1
}
