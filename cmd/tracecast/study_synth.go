package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/study/synth"
)

// studySynthMeta is the metadata file the synthesizer writes next to a trace:
// the DAG's properties (Table I's columns) and how it was run. train reads it.
type studySynthMeta struct {
	Kind     string            `json:"kind"` // "tracecast.synth"
	Version  int               `json:"version"`
	Trace    string            `json:"trace"` // path relative to the metadata file's directory
	DOT      string            `json:"dot,omitempty"`
	Seed     uint64            `json:"seed"`
	Tasks    int               `json:"tasks"`   // T
	Workers  int               `json:"workers"` // R
	DAG      synth.Props       `json:"dag"`
	Params   synth.DAGParams   `json:"dag_params"`
	Codelets []synth.Codelet   `json:"codelets"`
	Transfer [2]float64        `json:"transfer"` // probability, mean ms
	Summary  synth.Summary     `json:"summary"`
	Labels   map[string]string `json:"labels,omitempty"`
}

type studySynthConfig struct {
	tasks, workers        int
	seed                  uint64
	levels, maxOut        int
	edgeRatio             float64
	codelets              string
	transferP, transferMS float64
	overheadMS            float64
}

func (c *studySynthConfig) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&c.tasks, "tasks", 1000, "number of tasks T (Table I: 1000–4000)")
	fl.IntVar(&c.workers, "workers", 8, "number of workers R (the paper: 8–256)")
	fl.Uint64Var(&c.seed, "seed", 1, "random seed: the same seed gives the same DAG and trace")
	fl.IntVar(&c.levels, "levels", 0, "graph level (0: random in Table I's range for T)")
	fl.IntVar(&c.maxOut, "max-out-degree", 0, "maximum out-degree (0: random, 7–18)")
	fl.Float64Var(&c.edgeRatio, "edge-ratio", 0, "edges per task (0: random, 1.72–1.98)")
	fl.StringVar(&c.codelets, "codelets", "dag_task:10:0.3:1", "task kinds NAME:MEAN_MS[:CV[:WEIGHT]],... (lognormal durations)")
	fl.Float64Var(&c.transferP, "transfer-prob", 0, "probability that a task fetches input first (a FetchingInput state)")
	fl.Float64Var(&c.transferMS, "transfer-ms", 1, "mean data-transfer time, ms (exponential)")
	fl.Float64Var(&c.overheadMS, "overhead-ms", 0.001, "length of each runtime state around a task, ms")
}

// synthesize draws the DAG, streams the trace to w and returns the metadata.
// dot, when not nil, receives the DAG.
func (c *studySynthConfig) synthesize(w io.Writer, dot io.Writer) (*studySynthMeta, error) {
	cs, err := synth.ParseCodelets(c.codelets)
	if err != nil {
		return nil, usageErr(fmt.Errorf("--codelets: %w", err))
	}
	if c.tasks < 2 || c.workers < 1 {
		return nil, usageErr(fmt.Errorf("--tasks %d --workers %d: need at least 2 tasks and 1 worker", c.tasks, c.workers))
	}
	d, err := synth.NewDAG(synth.DAGParams{Tasks: c.tasks, Seed: c.seed, Levels: c.levels, EdgeRatio: c.edgeRatio, MaxOutDegree: c.maxOut})
	if err != nil {
		return nil, usageErr(err)
	}
	if dot != nil {
		if err := d.WriteDOT(dot, fmt.Sprintf("dag_T%d_s%d", c.tasks, c.seed)); err != nil {
			return nil, err
		}
	}
	sum, err := synth.WriteTrace(w, d, synth.TraceParams{Workers: c.workers, Seed: c.seed ^ uint64(c.workers)<<32, Codelets: cs,
		TransferProb: c.transferP, TransferMeanMS: c.transferMS, OverheadMS: c.overheadMS})
	if err != nil {
		return nil, err
	}
	return &studySynthMeta{Kind: "tracecast.synth", Version: 1, Seed: c.seed, Tasks: c.tasks, Workers: c.workers, DAG: d.Props(),
		Params: d.Params, Codelets: cs, Transfer: [2]float64{c.transferP, c.transferMS}, Summary: sum}, nil
}

// studyCreate creates a file, gzip-compressed when its name ends in .gz.
func studyCreate(path string) (io.Writer, func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	if strings.HasSuffix(path, ".gz") {
		zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
		return zw, func() error { return firstErr(zw.Close(), f.Close()) }, nil
	}
	return f, f.Close, nil
}

func studyWriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// studyRelTo is target relative to the directory of base (or target when it cannot be).
func studyRelTo(base, target string) string {
	abs, err1 := filepath.Abs(target)
	dir, err2 := filepath.Abs(filepath.Dir(base))
	if err1 != nil || err2 != nil {
		return target
	}
	r, err := filepath.Rel(dir, abs)
	if err != nil {
		return abs
	}
	return r
}

func newSynthCmd() *cobra.Command {
	var c studySynthConfig
	var out, dotPath, metaPath string
	cmd := &cobra.Command{
		Use:   "synth --tasks N --workers R --seed S -o TRACE [--dot FILE] [--meta FILE]",
		Short: "Synthesize a DAG workload and its StarPU 1.4 Paje trace (seed 004's benchmarking traces)",
		Long: `synth draws a random layered DAG whose properties span seed 004's Table I
(1000–4000 tasks, edges ≈1.72–1.98 × tasks, maximum out-degree 7–18, graph
level 26–132; each is drawn unless given), list-schedules it on R workers
(eager: ready tasks in release order go to the lowest-numbered free worker)
with task durations drawn per codelet kind (lognormal, --codelets) and
optional input transfers (FetchingInput, --transfer-prob/--transfer-ms), and
streams the execution as a Paje trace in StarPU 1.4's format: its header
(with the extended PajeSetState 20 carrying JobId, ...), the container
hierarchy MPIP > P > Mn > T > W, milliseconds, codelet names as "Worker State"
values, and Sleeping/Scheduling/Progressing/Overhead between tasks.

The same --seed gives the same DAG and trace. TRACE ending in .gz is
gzip-compressed. --dot writes the DAG (Graphviz), --meta its properties and
the run (default: TRACE's name with .meta.json), which 'tracecast train' reads.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr(fmt.Errorf("-o TRACE is required"))
			}
			w, closeW, err := studyCreate(out)
			if err != nil {
				return err
			}
			var dot io.Writer
			closeDot := func() error { return nil }
			if dotPath != "" {
				f, err := os.Create(dotPath)
				if err != nil {
					closeW()
					return err
				}
				dot, closeDot = f, f.Close
			}
			meta, err := c.synthesize(w, dot)
			if err = firstErr(err, firstErr(closeW(), closeDot())); err != nil {
				return err
			}
			if metaPath == "" {
				metaPath = strings.TrimSuffix(strings.TrimSuffix(out, ".gz"), ".trace") + ".meta.json"
			}
			meta.Trace = studyRelTo(metaPath, out)
			if dotPath != "" {
				meta.DOT = studyRelTo(metaPath, dotPath)
			}
			log.Info().Str("trace", out).Int("tasks", meta.DAG.Tasks).Int("edges", meta.DAG.Edges).Int("max_out_degree", meta.DAG.MaxOutDegree).
				Int("level", meta.DAG.Level).Int("workers", c.workers).Float64("makespan_ms", meta.Summary.MakespanMS).Int64("lines", meta.Summary.Lines).Msg("synthesized")
			return studyWriteJSON(metaPath, meta)
		},
	}
	c.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "trace file (.trace, or .trace.gz)")
	cmd.Flags().StringVar(&dotPath, "dot", "", "write the DAG in Graphviz DOT here")
	cmd.Flags().StringVar(&metaPath, "meta", "", "metadata JSON (default: TRACE without .trace[.gz], plus .meta.json)")
	return cmd
}
