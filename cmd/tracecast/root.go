package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

var (
	logLevel  string
	logFormat string
	log       zerolog.Logger
	// logConsole is true when logs are for a person (a terminal).
	logConsole bool
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "tracecast",
		Short: "Streaming analysis and prediction of task-based HPC executions from their traces",
		Long: `tracecast reads execution traces of task-based HPC runtimes (Paje traces from
StarPU and SimGrid), resolves them into states, links, variables and events,
and turns them into signals, predictions and alerts.

Exit codes: 0 success, 1 failure (bad trace, I/O error), 2 usage error,
78 invalid pipeline configuration.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return setupLogging(os.Stderr)
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&logFormat, "log-format", "auto", "log format: auto (console on a terminal, JSON otherwise), console, json")
	root.AddCommand(newComponentsCmd(), newStatesCmd(), newSignalCmd(), newKSCmd(), newHitrateCmd(), newPredictCmd(), newVerifyCmd(), newReportCmd(), newRunCmd(), newValidateCmd(), newDemoCmd())
	root.AddCommand(newBrokerCmd(), newPublishCmd(), newSubscribeCmd(), newLiveCmd())
	root.AddCommand(ioCommands()...)
	root.AddCommand(energyCommands()...)
	root.AddCommand(studyCommands()...)
	root.AddCommand(taskCommands()...)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageErr(err) })
	usageArgs(root)
	return root
}

// usageArgs makes a wrong number of arguments, in every command, a usage
// error (exit 2) like a bad flag.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageErr(err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// version is the module version and the VCS revision the binary was built
// from (go build records them), e.g. "v0.0.0-... (rev 1a2b3c4d5e6f, modified)".
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " (rev " + rev + modified + ")"
	}
	return v + " " + bi.GoVersion
}

func usageErr(err error) error { return &exitError{code: 2, err: err} }

func setupLogging(w io.Writer) error {
	lvl, err := zerolog.ParseLevel(logLevel)
	if err != nil {
		return usageErr(err)
	}
	logConsole = logFormat == "console"
	switch logFormat {
	case "auto":
		if f, ok := w.(*os.File); ok {
			logConsole = term.IsTerminal(int(f.Fd()))
		}
	case "console", "json":
	default:
		return usageErr(fmt.Errorf("unknown --log-format %q (auto, console or json)", logFormat))
	}
	zerolog.SetGlobalLevel(lvl)
	log = newLogger(w)
	return nil
}

// newLogger returns the CLI's logger writing to w: human-readable on a
// terminal, JSON lines otherwise.
func newLogger(w io.Writer) zerolog.Logger {
	if logConsole {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).With().Timestamp().Logger()
}
