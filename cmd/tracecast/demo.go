package main

import (
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/builtin"
	"github.com/tracecast/tracecast/report"
)

func newDemoCmd() *cobra.Command {
	var out string
	var noProgress bool
	cmd := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "Run the built-in pipelines on the StarPU trace built into the binary",
		Long: `demo needs nothing but the binary: it writes the StarPU trace built into it
(a Cholesky factorisation on 2 CPU workers, 50k lines, in milliseconds) to
DIR and runs two built-in pipelines on it: replay-starpu (the trace's
entities as Arrow files and JSON lines) and idle-starpu (how many workers
are idle, predicted window after window, with alerts). It prints a short
summary and the files written.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			trace := filepath.Join(out, "starpu-cholesky-2cpu.trace.gz")
			if err := os.WriteFile(trace, pipelines.DemoTrace(), 0o644); err != nil {
				return err
			}
			start := time.Now()
			replay, err := runBuiltin(cmd, "replay-starpu", trace, out, !noProgress)
			if err != nil {
				return err
			}
			took := time.Since(start)
			idle, err := runBuiltin(cmd, "idle-starpu", trace, out, false)
			if err != nil {
				return err
			}
			return report.WriteDemoFiles(os.Stdout, replay["records"], idle["records"], took, replay, idle)
		},
	}
	cmd.Flags().StringVar(&out, "out", "tracecast-demo", "directory for the trace and the outputs")
	cmd.Flags().BoolVar(&noProgress, "no-progress", false, "no progress bar")
	return cmd
}

// runBuiltin runs a built-in pipeline on trace with its outputs in
// dir/NAME/, and returns the output paths by sink id.
func runBuiltin(cmd *cobra.Command, name, trace, dir string, bar bool) (map[string]string, error) {
	cfg, err := loadPipeline(name, []string{"trace.path=" + trace})
	if err != nil {
		return nil, err
	}
	outputs := map[string]string{}
	for _, c := range cfg.Sinks {
		p, _ := c.Option("path")
		outputs[c.ID] = filepath.Join(dir, name, filepath.Base(p))
		c.SetOption("path", outputs[c.ID])
	}
	if err := pipelines.Check(builtin.Registry(), cfg); err != nil {
		return nil, err
	}
	return outputs, runPipeline(cmd.Context(), cfg, bar, "")
}
