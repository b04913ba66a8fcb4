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
			if err := summarize(replay["records"], took); err != nil {
				return err
			}
			if err := summarizePredictions(idle["records"]); err != nil {
				return err
			}
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
	return outputs, runPipeline(cmd.Context(), cfg, bar)
}

// summarizePredictions prints what the prediction phase said.
func summarizePredictions(jsonlPath string) error {
	f, err := os.Open(jsonlPath)
	if err != nil {
		return err
	}
	defer f.Close()
	var rec map[string]any
	n := map[string]int{}
	hits, verdicts := 0, 0
	lik := map[string][]float64{}
	horizon := 0.0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rec = nil
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return fmt.Errorf("%s: %w", jsonlPath, err)
		}
		switch {
		case rec["kind"] != nil:
			n["alert "+rec["kind"].(string)]++
		case rec["observed"] != nil:
			verdicts++
			if rec["hit"] == true {
				hits++
			}
		case rec["likelihood"] != nil:
			q := rec["query"].(string)
			lik[q] = append(lik[q], rec["likelihood"].(float64))
			horizon = rec["horizon_s"].(float64)
		case rec["compared"] != nil:
			n["window"]++
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Printf("  prediction phase: %d windows of %.3g s; %d verdicts, KS hit rate %.1f%%; alerts: %d idle opportunities, %d regime changes\n",
		n["window"], horizon, verdicts, 100*float64(hits)/float64(max(verdicts, 1)), n["alert idle-opportunity"], n["alert regime-change"])
	qs := make([]string, 0, len(lik))
	for q := range lik {
		qs = append(qs, q)
	}
	sort.Strings(qs)
	for _, q := range qs {
		sum := 0.0
		for _, v := range lik[q] {
			sum += v
		}
		fmt.Printf("  P(%s) over the next %.3g s: mean %.2f over %d predictions\n", q, horizon, sum/float64(len(lik[q])), len(lik[q]))
	}
	return nil
}

// summarize prints what the replay produced, from its JSON-lines output.
func summarize(jsonlPath string, took time.Duration) error {
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
	return nil
}
