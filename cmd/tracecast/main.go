// Command tracecast analyses and predicts the behaviour of task-based HPC
// executions from their traces. See `tracecast --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tracecast/tracecast/internal/buildinfo"
	"github.com/tracecast/tracecast/internal/clilog"
	"github.com/tracecast/tracecast/internal/memlimit"
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
	// No collection before the heap reaches its working size: a short
	// run has none (GOGC in the environment turns this off).
	memlimit.Floor(memlimit.DefaultFloor)
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

Exit codes: 0 success (also after a graceful stop on SIGINT/SIGTERM), 1
failure (bad trace, I/O error), 2 usage error (a bad flag, argument or
option, an invalid pipeline file).`,
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
	root.AddCommand(newComponentsCmd(), newStatesCmd(), newSignalCmd(), newKSCmd(), newHitrateCmd(), newPredictCmd(), newBackfillCmd(), newVerifyCmd(), newReportCmd(), newRunCmd(), newValidateCmd(), newDemoCmd())
	root.AddCommand(newBrokerCmd(), newPublishCmd(), newSubscribeCmd(), newLiveCmd(), newTopicsCmd())
	root.AddCommand(newIOCallsCmd(), newIOTimeCmd(), newIOBenchCmd(), newIOPredictCmd())
	root.AddCommand(energyCommands()...)
	root.AddCommand(studyCommands()...)
	root.AddCommand(taskCommands()...)
	root.SetHelpCommand(newHelpCmd())
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

// usageError is a usage error: a bad flag or argument (exit code 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usageErr(err error) error { return usageError{err} }

func usageErrOrNil(err error) error {
	if err == nil {
		return nil
	}
	return usageErr(err)
}

// exitCode is the process exit code of a command's error: 2 for a usage
// error (a bad flag, argument or option, an invalid pipeline file: bad
// configuration is a usage error), 1 otherwise.
func exitCode(err error) int {
	var ue usageError
	var oe *specs.OptionError
	var ce *pipelines.ConfigError
	var se *study.UsageError
	switch {
	case errors.As(err, &ce),
		errors.As(err, &ue), errors.As(err, &oe), errors.As(err, &se), strings.HasPrefix(err.Error(), "unknown command "):
		return 2
	}
	return 1
}

// runner runs the commands' pipelines with the CLI's logger.
func runner() specs.Runner {
	return specs.Runner{Log: log, NewLogger: func(w io.Writer) zerolog.Logger { return clilog.New(w, logConsole) }}
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// checkOutputs refuses, before anything is opened, output files that are
// one of the inputs or each other (by their real paths): a usage error.
func checkOutputs(inputs []string, outputs ...string) error {
	return usageErrOrNil(paths.CheckOutputs(inputs, outputs...))
}

// checkNamedOutputs is checkOutputs for a command with several output
// flags: each Use names its flag (Who), so that a conflict says which two
// flags write one file.
func checkNamedOutputs(uses ...paths.Use) error {
	for i := range uses {
		uses[i].Output = true
	}
	return usageErrOrNil(errors.Join(paths.Conflicts(uses)...))
}

// inDir is what a command writes with -o DIR: DIR itself and the files
// names in it (none when dir is "").
func inDir(dir string, names ...string) []string {
	if dir == "" {
		return nil
	}
	outs := []string{dir}
	for _, n := range names {
		outs = append(outs, filepath.Join(dir, n))
	}
	return outs
}

// nonEmpty is the paths of ps that are given.
func nonEmpty(ps ...string) []string {
	var out []string
	for _, p := range ps {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
