package study

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/study/synth"
)

// SynthMeta is the metadata file the synthesizer writes next to a trace:
// the DAG's properties (Table I's columns) and how it was run. Train reads
// it for T (the DAG size, the model's second axis) and the labels.
type SynthMeta struct {
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

// SynthConfig is one synthetic workload: a DAG of Tasks tasks run on Workers
// workers. Zero Levels, MaxOutDegree and EdgeRatio are drawn in Table I's
// ranges from Seed.
type SynthConfig struct {
	Tasks        int     `flag:"tasks" help:"number of tasks T (the study: 1000–4000)"`
	Workers      int     `flag:"workers" help:"number of workers R (the study: 8–256)"`
	Seed         uint64  `flag:"seed" help:"random seed: the same seed gives the same DAG and trace"`
	Levels       int     `flag:"levels" help:"levels of the DAG (0: random, in the study's range for T)"`
	MaxOutDegree int     `flag:"max-out-degree" help:"maximum out-degree (0: random, 7–18)"`
	EdgeRatio    float64 `flag:"edge-ratio" help:"edges per task (0: random, 1.72–1.98)"`
	Codelets     string  `flag:"codelets" help:"task kinds NAME:MEAN_MS[:CV[:WEIGHT]],... (lognormal durations)"`
	TransferProb float64 `flag:"transfer-prob" help:"probability that a task fetches input first (a FetchingInput state)"`
	// Milliseconds. --transfer-ms and --overhead-ms, their old names,
	// still work (deprecated).
	TransferMS float64 `flag:"transfer" alias:"transfer-ms" unit:"ms" help:"mean data-transfer time (exponential): a duration (500us) or a number of ms"`
	OverheadMS float64 `flag:"overhead" alias:"overhead-ms" unit:"ms" help:"length of each runtime state around a task: a duration (1us) or a number of ms"`
}

// DefaultSynthConfig are synth's defaults: 1000 tasks of 10 ms on 8
// workers, 1 ms transfers, 1 µs runtime states.
func DefaultSynthConfig() SynthConfig {
	return SynthConfig{Tasks: 1000, Workers: 8, Seed: 1, Codelets: "dag_task:10:0.3:1", TransferMS: 1, OverheadMS: 0.001}
}

// synthPlan is a checked SynthConfig: its codelets and its DAG, drawn.
type synthPlan struct {
	codelets []synth.Codelet
	dag      *synth.DAG
	trace    synth.TraceParams
}

// plan checks every option and draws the DAG: whatever synth can refuse is
// refused here, as a *UsageError naming the option, before anything is
// written.
func (c *SynthConfig) plan() (*synthPlan, error) {
	cs, err := synth.ParseCodelets(c.Codelets)
	if err != nil {
		return nil, usageErr(fmt.Errorf("--codelets: %w", err))
	}
	// R mixed into the schedule's seed: the same DAG on another cluster
	// size gets its own draws of durations and transfers.
	tp := synth.TraceParams{Workers: c.Workers, Seed: c.Seed ^ uint64(c.Workers)<<32, Codelets: cs,
		TransferProb: c.TransferProb, TransferMeanMS: c.TransferMS, OverheadMS: c.OverheadMS}
	if err := tp.Check(); err != nil {
		return nil, synthUsageErr(err)
	}
	d, err := synth.NewDAG(synth.DAGParams{Tasks: c.Tasks, Seed: c.Seed, Levels: c.Levels, EdgeRatio: c.EdgeRatio, MaxOutDegree: c.MaxOutDegree})
	if err != nil {
		return nil, synthUsageErr(err)
	}
	return &synthPlan{codelets: cs, dag: d, trace: tp}, nil
}

// Workload checks the options and draws the DAG and the run's parameters
// exactly as synth does (the closed loop, backfill/closedloop, runs the
// same DAG with the same draws); errors are *UsageError.
func (c *SynthConfig) Workload() (*synth.DAG, synth.TraceParams, error) {
	p, err := c.plan()
	if err != nil {
		return nil, synth.TraceParams{}, err
	}
	return p.dag, p.trace, nil
}

// synthUsageErr is a usage error naming the option of a synth.ParamError.
func synthUsageErr(err error) error {
	var pe *synth.ParamError
	if errors.As(err, &pe) {
		return usageErr(fmt.Errorf("--%s: %s", pe.Param, pe.Msg))
	}
	return usageErr(err)
}

// Synthesize draws the DAG, streams the trace to w and returns the
// metadata (without the file names, which only the caller knows). dot, when
// not nil, receives the DAG. Options are checked before anything is written.
func (c *SynthConfig) Synthesize(w io.Writer, dot io.Writer) (*SynthMeta, error) {
	p, err := c.plan()
	if err != nil {
		return nil, err
	}
	return c.write(p, w, dot)
}

func (c *SynthConfig) write(p *synthPlan, w io.Writer, dot io.Writer) (*SynthMeta, error) {
	d := p.dag
	if dot != nil {
		if err := d.WriteDOT(dot, fmt.Sprintf("dag_T%d_s%d", c.Tasks, c.Seed)); err != nil {
			return nil, err
		}
	}
	sum, err := synth.WriteTrace(w, d, p.trace)
	if err != nil {
		return nil, err
	}
	return &SynthMeta{Kind: "tracecast.synth", Version: 1, Seed: c.Seed, Tasks: c.Tasks, Workers: c.Workers, DAG: d.Props(),
		Params: d.Params, Codelets: p.codelets, Transfer: [2]float64{c.TransferProb, c.TransferMS}, Summary: sum}, nil
}

// SynthFiles are where WriteSynth writes: the trace (gzip-compressed when
// its name ends in .gz), the DAG in DOT (none when empty) and the metadata
// (default: the trace's name without .trace[.gz], plus .meta.json).
type SynthFiles struct {
	Trace, DOT, Meta string
}

// MetaPath is the metadata file's path: Meta, or the default next to Trace.
func (f SynthFiles) MetaPath() string {
	if f.Meta != "" {
		return f.Meta
	}
	return strings.TrimSuffix(strings.TrimSuffix(f.Trace, ".gz"), ".trace") + ".meta.json"
}

// WriteSynth synthesizes c into the files f and returns the metadata it
// wrote, whose paths are relative to the metadata file so that a directory
// of traces can be moved as a whole.
//
// Every option is checked, and the DAG drawn, before any file is created:
// a usage error leaves existing files as they were. A failure after that
// removes the trace and the DOT file (no partial file passes for one).
func WriteSynth(c SynthConfig, f SynthFiles, log zerolog.Logger) (*SynthMeta, error) {
	p, err := c.plan()
	if err != nil {
		return nil, err
	}
	w, closeW, err := create(f.Trace)
	if err != nil {
		return nil, err
	}
	var dot io.Writer
	closeDot := func() error { return nil }
	if f.DOT != "" {
		df, err := os.Create(f.DOT)
		if err != nil {
			closeW()
			os.Remove(f.Trace)
			return nil, err
		}
		dot, closeDot = df, df.Close
	}
	meta, err := c.write(p, w, dot)
	if err = firstErr(err, firstErr(closeW(), closeDot())); err != nil {
		// A failed write leaves no file that could pass for a trace.
		os.Remove(f.Trace)
		if f.DOT != "" {
			os.Remove(f.DOT)
		}
		return nil, err
	}
	metaPath := f.MetaPath()
	meta.Trace = relTo(metaPath, f.Trace)
	if f.DOT != "" {
		meta.DOT = relTo(metaPath, f.DOT)
	}
	log.Info().Str("trace", f.Trace).Int("tasks", meta.DAG.Tasks).Int("edges", meta.DAG.Edges).Int("max_out_degree", meta.DAG.MaxOutDegree).
		Int("level", meta.DAG.Level).Int("workers", c.Workers).Float64("makespan_ms", meta.Summary.MakespanMS).Int64("lines", meta.Summary.Lines).Msg("synthesized")
	return meta, writeJSON(metaPath, meta)
}

// create creates a file, gzip-compressed when its name ends in .gz. The
// fastest level: the study writes many traces and reads each once.
func create(path string) (io.Writer, func() error, error) {
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

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeBytes(path, append(b, '\n'))
}

// writeBytes writes b to path, complete or not at all (internal/output).
func writeBytes(path string, b []byte) error {
	return output.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// relTo is target relative to the directory of base (or target when it cannot be).
func relTo(base, target string) string {
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
