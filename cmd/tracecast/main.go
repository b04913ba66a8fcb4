// Command tracecast analyses and predicts the behaviour of task-based HPC
// executions from their traces. See `tracecast --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/buildinfo"
	"github.com/tracecast/tracecast/internal/clilog"
	"github.com/tracecast/tracecast/internal/paths"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/specs"
	"github.com/tracecast/tracecast/study"
)

var (
	logLevel, logFormat string
	log                 zerolog.Logger
	logConsole          bool // logs are for a person (a terminal)
)

func main() {
	// Commands that run pipelines handle SIGINT/SIGTERM themselves (a
	// graceful then a hard stop); the others stop at once, as usual.
	if err := newRootCmd().ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "tracecast:", err)
		os.Exit(exitCode(err))
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "tracecast",
		Short: "Streaming analysis and prediction of task-based HPC executions from their traces",
		Long: `tracecast reads execution traces of task-based HPC runtimes (Paje traces from
StarPU and SimGrid), resolves them into states, links, variables and events,
and turns them into signals, forecasts, alerts and reports. 'tracecast demo'
shows it on a trace built into the binary; README.md and docs/ say more.

Exit codes: 0 success, 1 failure (bad trace, I/O error), 2 usage error,
78 invalid pipeline configuration.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Version(),
		PersistentPreRunE: func(cmd *cobra.Command, args []string) (err error) {
			log, logConsole, err = clilog.Setup(os.Stderr, logLevel, logFormat)
			return usageErrOrNil(err)
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&logFormat, "log-format", "auto", "log format: auto (console on a terminal, JSON otherwise), console, json")
	root.AddCommand(newComponentsCmd(), newStatesCmd(), newSignalCmd(), newKSCmd(), newHitrateCmd(), newPredictCmd(), newVerifyCmd(), newReportCmd(), newRunCmd(), newValidateCmd(), newDemoCmd())
	root.AddCommand(newBrokerCmd(), newPublishCmd(), newSubscribeCmd(), newLiveCmd())
	root.AddCommand(ioCommands()...)
	root.AddCommand(energyCommands()...)
	root.AddCommand(studyCommands()...)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageErr(err) })
	usageArgs(root)
	return root
}

// usageArgs makes a wrong number of arguments, in every command, a usage
// error (exit 2) like a bad flag.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error { return usageErrOrNil(check(cmd, args)) }
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(err error) error { return &exitError{code: 2, err: err} }

func usageErrOrNil(err error) error {
	if err == nil {
		return nil
	}
	return usageErr(err)
}

// exitCode is the process exit code of a command's error: 2 for a usage
// error (a bad flag, argument or option), 78 for an invalid pipeline file,
// 1 otherwise.
func exitCode(err error) int {
	var ee *exitError
	var oe *specs.OptionError
	var ce *pipelines.ConfigError
	var se *study.UsageError
	switch {
	case errors.As(err, &ce):
		return 78 // EX_CONFIG
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &oe), errors.As(err, &se), strings.HasPrefix(err.Error(), "unknown command "):
		return 2
	}
	return 1
}

// runner runs the commands' pipelines with the CLI's logger.
func runner() specs.Runner { return specs.Runner{Log: log} }

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// checkOutputs refuses, before anything is opened, output files that are
// one of the inputs or each other (by their real paths): a usage error.
// Pipelines check their sinks themselves (pipelines.Check).
func checkOutputs(inputs []string, outputs ...string) error {
	var uses []paths.Use
	for _, in := range inputs {
		uses = append(uses, paths.Use{Who: "the command", Path: in})
	}
	for _, out := range outputs {
		uses = append(uses, paths.Use{Who: "-o", Path: out, Output: true})
	}
	return usageErrOrNil(errors.Join(paths.Conflicts(uses)...))
}

// unitValue is a flag bound to a float64 in unit (s, ms) that reads a
// duration with a unit (100ms) or a plain number in that unit.
type unitValue struct {
	p    *float64
	unit string
}

func (v unitValue) Set(s string) error {
	d, err := tracecast.ParseTraceTime(s)
	if err == nil {
		*v.p = d.In(v.unit)
	}
	return err
}

func (v unitValue) String() string { return strconv.FormatFloat(*v.p, 'g', -1, 64) }
func (v unitValue) Type() string   { return "duration" }
