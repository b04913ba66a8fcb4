// Package front is what the tracecast command's two binaries share: the
// root command (its flags, logs, version and exit codes) and the states
// command. The front binary, cmd/tracecast-front (installed as
// tracecast), runs states and --version itself with only their packages
// linked, and hands every other command to the full binary installed
// beside it, cmd/tracecast (installed as tracecast-full): a command's
// start-up is its packages' initializers and the page faults of its
// binary, 2.5 ms for states' against 7 ms for all of them
// (docs/performance.md).
package front

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/reader"
	"github.com/tracecast/tracecast/internal/buildinfo"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/internal/clilog"
	"github.com/tracecast/tracecast/internal/memlimit"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines"
)

// FullName is the full binary's name, beside the front binary.
const FullName = "tracecast-full"

// NewRoot is the tracecast command's root: long is its description;
// setup gets the logger its --log-level and --log-format make (and
// whether the logs are for a person) before any command runs.
func NewRoot(long string, setup func(log zerolog.Logger, console bool)) *cobra.Command {
	var level, format string
	root := &cobra.Command{
		Use:           "tracecast",
		Short:         "Streaming analysis and prediction of task-based HPC executions from their traces",
		Long:          long,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Version(),
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			log, console, err := clilog.Setup(os.Stderr, level, format)
			setup(log, console)
			return cliflags.Usage(err)
		},
	}
	root.PersistentFlags().StringVar(&level, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&format, "log-format", "auto", "log format: auto (console on a terminal, JSON otherwise), console, json")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return cliflags.Usage(err) })
	return root
}

// ExitCode is the process exit code of a command's error: 2 for a usage
// error (a bad flag, argument or option, an invalid pipeline file: bad
// configuration is a usage error; usage says which others are), 1
// otherwise.
func ExitCode(err error, usage func(error) bool) int {
	var ue cliflags.UsageError
	var oe *reader.OptionError
	var ce *pipelines.ConfigError
	switch {
	case errors.As(err, &ce), errors.As(err, &ue), errors.As(err, &oe), usage != nil && usage(err),
		strings.HasPrefix(err.Error(), "unknown command "):
		return 2
	}
	return 1
}

// Execute runs root and exits as ExitCode says on an error.
func Execute(root *cobra.Command, usage func(error) bool) {
	// No collection before the heap reaches its working size: a short
	// run has none (GOGC in the environment turns this off).
	memlimit.Floor(memlimit.DefaultFloor)
	// Commands that run pipelines handle SIGINT/SIGTERM themselves (a
	// graceful then a hard stop); the others stop at once, as usual.
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "tracecast:", err)
		os.Exit(ExitCode(err, usage))
	}
}

// NewStatesCmd is the states command; run runs it.
func NewStatesCmd(run func(ctx context.Context, o reader.States) error) *cobra.Command {
	o := reader.States{Format: "pjdump", Out: "-", Parser: paje.DefaultParserConfig(), Skipped: os.Stderr}
	o.Parser.ReorderHorizon = new(tracecast.TraceUnits(-1)) // -1: the reader's default
	cmd := &cobra.Command{
		Use:   "states [flags] TRACE|-",
		Short: "Resolve a Paje trace into containers, states, variables, events and links (a pj_dump replacement)",
		Long: `states reads a Paje trace (plain or gzip, a file or - for standard input) and
prints every container, state, variable, event and link it resolves: as
pajeng's pj_dump prints them (--format pjdump, in completion order: sort
both to compare), as CSV with a header row, JSON lines, an Arrow IPC file
or a Parquet file (schemas in docs/reading.md and docs/outputs.md). It streams: memory is bounded by the live
containers, open states and pending links, not by the trace's length.
Variable samples up to --reorder-horizon late are put back in order, so raw
StarPU traces, which pj_dump rejects, are read as written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Trace = args[0]
			return run(cmd.Context(), o)
		},
	}
	cliflags.Bind(cmd.Flags(), &o)
	cliflags.Bind(cmd.Flags(), &o.Parser)
	return cmd
}

// Main is the front binary: states and --version run here, every other
// command (help included: it lists them all) in the full binary, which
// replaces this process.
func Main(args []string) {
	if !own(args) {
		execFull(args)
	}
	var log zerolog.Logger
	var console bool
	root := NewRoot("", func(l zerolog.Logger, c bool) { log, console = l, c })
	root.AddCommand(NewStatesCmd(func(ctx context.Context, o reader.States) error {
		r := reader.Runner{Log: log, NewLogger: func(w io.Writer) zerolog.Logger { return clilog.New(w, console) }}
		return r.RunStates(ctx, o)
	}))
	cliflags.UsageArgs(root)
	root.SetArgs(args)
	Execute(root, nil)
}

// own says whether the front binary runs args itself: the version, or
// states without a request for help (whose text is the full binary's)
// in a text format (Arrow and Parquet are the full binary's: their
// libraries' initializers were a quarter of this one's start-up).
func own(args []string) bool {
	if len(args) == 1 && args[0] == "--version" {
		return true
	}
	if len(args) == 0 || args[0] != "states" {
		return false
	}
	for i, a := range args[1:] {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" || strings.HasPrefix(a, "--help=") {
			return false
		}
		format, ok := strings.CutPrefix(a, "--format=")
		if a == "--format" && i+2 < len(args) {
			format, ok = args[i+2], true
		}
		if ok && format != "pjdump" && format != "csv" && format != "jsonl" {
			return false // arrow, parquet, or an error the full binary words
		}
	}
	return true
}

// execFull replaces the process with the full binary, beside this one,
// running args.
func execFull(args []string) {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracecast:", err)
		os.Exit(1)
	}
	full := filepath.Join(filepath.Dir(self), FullName)
	err = syscall.Exec(full, append([]string{full}, args...), os.Environ())
	// Exec returns only when it failed.
	fmt.Fprintf(os.Stderr, "tracecast: %s: %v (this command runs in the full binary, which make build writes beside tracecast)\n", full, err)
	os.Exit(1)
}
