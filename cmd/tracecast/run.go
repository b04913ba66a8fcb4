package main

import (
	"github.com/tracecast/tracecast/internal/cliflags"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracecast/tracecast/app/specs"
	"github.com/tracecast/tracecast/live"
	"github.com/tracecast/tracecast/pipelines"
)

func newRunCmd() *cobra.Command {
	var o specs.RunFile
	cmd := &cobra.Command{
		Use:   "run [flags] PIPELINE",
		Short: "Run a pipeline declared in YAML",
		Long: `run loads a pipeline file, or by name one built into the binary (` + strings.Join(pipelines.Shipped(), ", ") + `:
they run from any directory), checks it strictly and runs it until its input ends:
a first SIGINT/SIGTERM stops it gracefully (sinks write their footers), a
second at once. A progress bar on a terminal, else a status line every
status_interval. --speed paces file sources by trace time (realtime, 10x;
max: as fast as possible); --set overrides an option: --set trace.path=F.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runner().RunFile(cmd.Context(), args[0], o) },
	}
	cliflags.Bind(cmd.Flags(), &o)
	o.Kafka = live.AddKafkaFlags(cmd.Flags(), "point every kafka source and sink of the pipeline at these brokers")
	return cmd
}

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate PIPELINE...",
		Short: "Check pipeline files without running them",
		Long: `validate decodes each pipeline file strictly (unknown keys are errors that
name the key and its line), checks the graph (inputs exist, no cycles) and
every component's options. Exit code 2 when a file is invalid.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return specs.Validate(os.Stdout, os.Stderr, args) },
	}
}

func newComponentsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "components [TYPE]",
		Short: "List the pipeline components (sources, parsers, stages, sinks) with their options and defaults",
		Long: `components lists every component type a pipeline file can use (given a
name, that type), with each option's YAML key, type and default: what
'tracecast validate' accepts.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return specs.Components(os.Stdout, args) },
	}
}

func newDemoCmd() *cobra.Command {
	var out string
	var noProgress bool
	cmd := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "Run the built-in pipelines on the StarPU trace built into the binary",
		Long: `demo needs nothing but the binary: it writes the StarPU trace built into it
(a Cholesky factorisation on 2 CPU workers) to DIR and prints what tracecast
makes of it: forecasts of idle capacity over three horizons with their skill
against the KS windows, persistence and climatology; the value of
backfilling 10 ms back-end tasks on the idle workers by the forecast policy
(DIR/backfill/); the KS windows of the built-in pipeline idle-starpu; and
the files written, among them those of replay-starpu (the entities as Arrow
and JSON lines) and DIR/report.html (the HTML report, with the energy of
the run's power stream built into the binary).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runner().Demo(cmd.Context(), out, !noProgress, os.Stdout)
		},
	}
	cmd.Flags().StringVar(&out, "out", "tracecast-demo", "directory for the trace and the outputs")
	cmd.Flags().BoolVar(&noProgress, "no-progress", false, "no progress bar")
	return cmd
}
