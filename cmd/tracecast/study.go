package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/study"
)

// studyCommands are the window-size study's commands: the workload
// synthesizer, the model training and the reduced reproduction. Their logic
// is package study.
func studyCommands() []*cobra.Command {
	return []*cobra.Command{newSynthCmd(), newTrainCmd(), newReproduceCmd()}
}

// studyErr gives the study's errors in its options the usage exit code.
func studyErr(err error) error {
	if ue := (*study.UsageError)(nil); errors.As(err, &ue) {
		return usageErr(err)
	}
	return err
}

// registerSynthFlags binds the workload flags to c (synth, and reproduce,
// which sets the tasks, workers and seed per trace itself).
func registerSynthFlags(cmd *cobra.Command, c *study.SynthConfig) {
	fl := cmd.Flags()
	fl.IntVar(&c.Tasks, "tasks", 1000, "number of tasks T (the study: 1000–4000)")
	fl.IntVar(&c.Workers, "workers", 8, "number of workers R (the study: 8–256)")
	fl.Uint64Var(&c.Seed, "seed", 1, "random seed: the same seed gives the same DAG and trace")
	fl.IntVar(&c.Levels, "levels", 0, "levels of the DAG (0: random, in the study's range for T)")
	fl.IntVar(&c.MaxOutDegree, "max-out-degree", 0, "maximum out-degree (0: random, 7–18)")
	fl.Float64Var(&c.EdgeRatio, "edge-ratio", 0, "edges per task (0: random, 1.72–1.98)")
	fl.StringVar(&c.Codelets, "codelets", "dag_task:10:0.3:1", "task kinds NAME:MEAN_MS[:CV[:WEIGHT]],... (lognormal durations)")
	fl.Float64Var(&c.TransferProb, "transfer-prob", 0, "probability that a task fetches input first (a FetchingInput state)")
	fl.Float64Var(&c.TransferMS, "transfer-ms", 1, "mean data-transfer time, ms (exponential)")
	fl.Float64Var(&c.OverheadMS, "overhead-ms", 0.001, "length of each runtime state around a task, ms")
}

func newSynthCmd() *cobra.Command {
	var c study.SynthConfig
	var files study.SynthFiles
	cmd := &cobra.Command{
		Use:   "synth --tasks N --workers R --seed S -o TRACE [--dot FILE] [--meta FILE]",
		Short: "Write a random DAG workload run on R workers as a StarPU Paje trace",
		Long: `synth draws a random layered DAG of --tasks tasks (shape drawn unless given),
schedules it on --workers workers (ready tasks in order, to the first free
worker) with task durations drawn per kind (--codelets) and optional input
transfers, and writes the run as a StarPU 1.4 Paje trace (milliseconds).
The same --seed gives the same trace. TRACE ending in .gz is compressed.
--dot writes the DAG (Graphviz), --meta its properties (default: TRACE's
name with .meta.json), which 'tracecast train' reads. docs/reproduce.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if files.Trace == "" {
				return usageErr(fmt.Errorf("-o TRACE is required"))
			}
			_, err := study.WriteSynth(c, files, log)
			return studyErr(err)
		},
	}
	registerSynthFlags(cmd, &c)
	cmd.Flags().StringVarP(&files.Trace, "output", "o", "", "trace file (.trace, or .trace.gz)")
	cmd.Flags().StringVar(&files.DOT, "dot", "", "write the DAG in Graphviz DOT here")
	cmd.Flags().StringVar(&files.Meta, "meta", "", "metadata JSON (default: TRACE without .trace[.gz], plus .meta.json)")
	return cmd
}

// trainFlags are train's analysis and fit flags, also reproduce's.
type trainFlags struct {
	windows, method string
	cfg             study.TrainConfig
}

func (t *trainFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&t.windows, "windows", "1000:50000:1000", "candidate window sizes in samples: a list or FROM:TO:STEP")
	fl.Float64Var(&t.cfg.Target, "target", 0.95, "hit-rate at which the fitted surface is cut")
	fl.StringVar(&t.method, "method", "matlab", "KS p-value method: matlab, scipy, r")
	fl.Float64Var(&t.cfg.Alpha, "alpha", 0.05, "KS significance level")
	fl.Float64Var(&t.cfg.Period, "period", 0, "sampling period in trace units (ms for StarPU) for every trace; 0: per trace, half the shortest time between two changes, raised by --min-period and --max-samples")
	fl.Float64Var(&t.cfg.MinPeriod, "min-period", 0, "floor for the per-trace period (--period 0)")
	fl.IntVar(&t.cfg.MaxSamples, "max-samples", 10_000_000, "the per-trace period is raised so that a signal has at most this many samples (--period 0)")
	fl.IntVar(&t.cfg.Degree, "degree", 4, "total degree of the polynomial surface")
	fl.IntVar(&t.cfg.Jobs, "jobs", runtime.GOMAXPROCS(0), "traces analysed in parallel")
	fl.BoolVar(&t.cfg.Plots, "plots", true, "write the plots (PNG and SVG)")
}

func newTrainCmd() *cobra.Command {
	var t trainFlags
	var metaDir, out string
	cmd := &cobra.Command{
		Use:   "train (--meta-dir DIR | META.json... | TRACE...) -o DIR",
		Short: "Build a window-size model from traces: KS hit-rates per cluster size, fitted and cut at a target",
		Long: `train reads traces (the metadata files 'tracecast synth' writes: --meta-dir
DIR or META.json arguments; or trace files, whose workers and tasks are
counted), samples each one's idle-worker signal, classifies it (mostly
idle, mixed, mostly computing) and computes the KS hit-rate of every
candidate window size. Per number of workers, the (window, tasks,
hit-rate) points are fitted by a polynomial surface of degree --degree and
cut at --target: the window size to use for a number of tasks.

Writes DIR/window-model.json (for 'tracecast predict --model'),
traces.jsonl, points.csv and plots/, and prints one line per trace.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr(fmt.Errorf("-o DIR is required"))
			}
			if err := t.cfg.Parse(t.windows, t.method); err != nil {
				return studyErr(err)
			}
			ins, err := study.Inputs(metaDir, args)
			if err != nil {
				return err
			}
			if len(ins) == 0 {
				return usageErr(fmt.Errorf("no trace: give --meta-dir DIR, metadata files or traces"))
			}
			start := time.Now()
			as, _, err := study.Train(ins, out, &t.cfg)
			if err != nil {
				return studyErr(err)
			}
			for _, a := range as {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\tR=%d\tT=%d\t%s\tidle=%.2f\tsamples=%d\n", a.Trace, a.R, a.T, a.Class.State, a.Class.IdleFraction, a.Samples)
			}
			log.Info().Int("traces", len(as)).Dur("took", time.Since(start)).Str("model", filepath.Join(out, "window-model.json")).Msg("trained")
			return nil
		},
	}
	t.register(cmd)
	cmd.Flags().StringVar(&metaDir, "meta-dir", "", "directory of *.meta.json files written by 'tracecast synth'")
	cmd.Flags().StringVarP(&out, "output", "o", "", "output directory")
	return cmd
}

func newReproduceCmd() *cobra.Command {
	var t trainFlags
	var c study.ReproduceConfig
	var sizes, clusterSizes string
	cmd := &cobra.Command{
		Use:   "reproduce [-o DIR]",
		Short: "Run the window-size study at a reduced scale: synthesize, train, validate, write REPORT.md",
		Long: `reproduce runs the whole window-size study on synthetic workloads (see
'tracecast synth' and 'tracecast train'): --train-subsets sets of one DAG per
size in --sizes, each run on every cluster size, train the model;
--validation-subsets other sets are then predicted with the model's window
size, and DIR/REPORT.md gives the model, the validation hit-rates against
DAG size per cluster size and their averages, with plots. Traces are
analysed as they are written; --keep-traces also writes them to
DIR/traces. docs/reproduce.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := t.cfg.Parse(t.windows, t.method); err != nil {
				return studyErr(err)
			}
			var err error
			if c.Sizes, err = study.ParseInts(sizes); err != nil {
				return usageErr(fmt.Errorf("--sizes: %w", err))
			}
			if c.ClusterSizes, err = study.ParseInts(clusterSizes); err != nil {
				return usageErr(fmt.Errorf("--cluster-sizes: %w", err))
			}
			c.TrainConfig, c.SizesSpec, c.ClusterSizesSpec = t.cfg, sizes, clusterSizes
			return studyErr(study.Reproduce(&c, log))
		},
	}
	t.register(cmd)
	registerSynthFlags(cmd, &c.Synth)
	fl := cmd.Flags()
	fl.StringVarP(&c.Out, "output", "o", "reproduce/out", "output directory")
	fl.IntVar(&c.TrainSubsets, "train-subsets", 8, "training DAG subsets (one DAG per size each)")
	fl.IntVar(&c.ValidationSubsets, "validation-subsets", 3, "validation DAG subsets, disjoint from the training ones")
	fl.StringVar(&sizes, "sizes", "1000:4000:200", "DAG size groups (tasks): a list or FROM:TO:STEP")
	fl.StringVar(&clusterSizes, "cluster-sizes", "8,16,32,64,128,256", "cluster sizes R (workers)")
	fl.Uint64Var(&c.Seed, "study-seed", 2013, "seed of the whole study")
	fl.BoolVar(&c.KeepTraces, "keep-traces", false, "also write the traces and metadata to DIR/traces")
	return cmd
}
