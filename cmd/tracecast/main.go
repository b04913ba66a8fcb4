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
	err := newRootCmd().ExecuteContext(context.Background())
	if err == nil {
		return
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if strings.HasPrefix(err.Error(), "unknown command ") {
		code = 2
	}
	var ce *pipelines.ConfigError
	if errors.As(err, &ce) {
		code = 78 // EX_CONFIG
	}
	fmt.Fprintln(os.Stderr, "tracecast:", err)
	os.Exit(code)
}
