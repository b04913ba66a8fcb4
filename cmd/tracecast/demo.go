package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/pipelines"
)

func newDemoCmd() *cobra.Command {
	var out string
	var noProgress bool
	cmd := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "Run the replay-starpu pipeline on the StarPU trace built into the binary",
		Long: `demo needs nothing but the binary: it writes the StarPU 1.4.9 trace built into
it (a Cholesky factorisation on 2 CPU workers, 50k lines, unsorted, in
milliseconds) to DIR, runs the built-in replay-starpu pipeline on it — file
replay, Paje reader, Arrow IPC file and stream, JSON lines — and prints a
short summary of what came out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			trace := filepath.Join(out, "starpu-cholesky-2cpu.trace.gz")
			if err := os.WriteFile(trace, pipelines.DemoTrace(), 0o644); err != nil {
				return err
			}
			sets := []string{"trace.path=" + trace}
			cfg, err := loadPipeline("replay-starpu", nil)
			if err != nil {
				return err
			}
			outputs := map[string]string{}
			for _, c := range cfg.Sinks {
				p, _ := c.Option("path")
				outputs[c.ID] = filepath.Join(out, filepath.Base(p))
				sets = append(sets, c.ID+".path="+outputs[c.ID])
			}
			if cfg, err = loadPipeline("replay-starpu", sets); err != nil {
				return err
			}
			start := time.Now()
			if err := runPipeline(cmd.Context(), cfg, !noProgress); err != nil {
				return err
			}
			return summarize(outputs["records"], outputs, time.Since(start))
		},
	}
	cmd.Flags().StringVar(&out, "out", "tracecast-demo", "directory for the trace and the outputs")
	cmd.Flags().BoolVar(&noProgress, "no-progress", false, "no progress bar")
	return cmd
}

// summarize prints what the pipeline produced, from its JSON-lines output.
func summarize(jsonlPath string, outputs map[string]string, took time.Duration) error {
	f, err := os.Open(jsonlPath)
	if err != nil {
		return err
	}
	defer f.Close()
	var rec struct {
		Nature, Container, Type, Value string
		Start, End                     float64
	}
	byNature := map[string]int{}
	busy := map[string]float64{} // Worker State time per value
	workers := map[string]bool{}
	end := 0.0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return fmt.Errorf("%s: %w", jsonlPath, err)
		}
		byNature[rec.Nature]++
		end = max(end, rec.End)
		if rec.Nature == "State" && rec.Type == "Worker State" {
			busy[rec.Value] += rec.End - rec.Start
			workers[rec.Container] = true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Printf("tracecast demo: StarPU Cholesky, %d workers, %.0f ms of execution, read in %s\n", len(workers), end, took.Round(time.Millisecond))
	fmt.Printf("  records: %d containers, %d states, %d variables, %d events, %d links\n",
		byNature["Container"], byNature["State"], byNature["Variable"], byNature["Event"], byNature["Link"])
	var values []string
	total := 0.0
	for v, d := range busy {
		values = append(values, v)
		total += d
	}
	sort.Slice(values, func(i, j int) bool { return busy[values[i]] > busy[values[j]] })
	fmt.Printf("  worker time by state (all imbrication levels):")
	for i, v := range values {
		if i == 6 {
			break
		}
		fmt.Printf(" %s %.1f%%", v, 100*busy[v]/total)
	}
	fmt.Println()
	ids := make([]string, 0, len(outputs))
	for id := range outputs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Printf("  %-8s %s\n", id, outputs[id])
	}
	return nil
}
