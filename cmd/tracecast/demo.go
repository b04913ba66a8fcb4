package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/report"
)

func newDemoCmd() *cobra.Command {
	var out string
	var noProgress bool
	cmd := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "Run the built-in pipelines on the StarPU trace built into the binary",
		Long: `demo needs nothing but the binary: it writes the StarPU 1.4.9 trace built into
it (a Cholesky factorisation on 2 CPU workers, 50k lines, unsorted, in
milliseconds) to DIR and runs the built-in pipelines on it:
replay-starpu (file replay, Paje reader, Arrow IPC file and stream, JSON
lines) and idle-starpu (occurrence signal of idle workers, windows, KS
verdicts, predictions of idleness over the next window, alerts, as Arrow
files and JSON lines). It prints a short summary of what came out.`,
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
			var rs report.Replay
			var ps report.Predictions
			err = readJSONL(replay["records"], func(r io.Reader, name string) (err error) { rs, err = report.ReadReplay(r, name); return err })
			if err == nil {
				err = readJSONL(idle["records"], func(r io.Reader, name string) (err error) { ps, err = report.ReadPredictions(r, name); return err })
			}
			if err != nil {
				return err
			}
			if err := report.WriteDemo(os.Stdout, rs, took, ps); err != nil {
				return err
			}
			// The page to look at: Gantt chart, occupancy, forecasts.
			page := filepath.Join(out, "report.html")
			if err := writeReport(cmd.Context(), trace, page, "auto", nil, false, false); err != nil {
				return err
			}
			fmt.Printf("  %-12s %s (open it in a browser)\n", "report", page)
			for _, outputs := range []map[string]string{replay, idle} {
				ids := make([]string, 0, len(outputs))
				for id := range outputs {
					ids = append(ids, id)
				}
				sort.Strings(ids)
				for _, id := range ids {
					fmt.Printf("  %-12s %s\n", id, outputs[id])
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "tracecast-demo", "directory for the trace and the outputs")
	cmd.Flags().BoolVar(&noProgress, "no-progress", false, "no progress bar")
	return cmd
}

// runBuiltin runs a built-in pipeline on trace with its outputs in
// dir/NAME/, and returns the output paths by sink id.
func runBuiltin(cmd *cobra.Command, name, trace, dir string, bar bool) (map[string]string, error) {
	cfg, err := loadPipeline(name, nil)
	if err != nil {
		return nil, err
	}
	sets := []string{"trace.path=" + trace}
	outputs := map[string]string{}
	for _, c := range cfg.Sinks {
		p, _ := c.Option("path")
		outputs[c.ID] = filepath.Join(dir, name, filepath.Base(p))
		sets = append(sets, c.ID+".path="+outputs[c.ID])
	}
	if cfg, err = loadPipeline(name, sets); err != nil {
		return nil, err
	}
	return outputs, runPipeline(cmd.Context(), cfg, bar, "")
}

// readJSONL opens a pipeline's JSON-lines output for read.
func readJSONL(path string, read func(io.Reader, string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return read(f, path)
}
