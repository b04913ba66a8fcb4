package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/internal/paths"
	"github.com/tracecast/tracecast/study"
)

// studyCommands are the window-size study's commands: the workload
// synthesizer, the model training and the reduced reproduction. Their logic
// is package study.
func studyCommands() []*cobra.Command {
	return []*cobra.Command{newSynthCmd(), newTrainCmd(), newReproduceCmd()}
}

// registerSynthFlags binds the workload flags to c (synth, and reproduce,
// which sets the tasks, workers and seed per trace itself).
func registerSynthFlags(cmd *cobra.Command, c *study.SynthConfig) {
	*c = study.DefaultSynthConfig()
	cliflags.Bind(cmd.Flags(), c)
}

func newSynthCmd() *cobra.Command {
	var c study.SynthConfig
	var files study.SynthFiles
	cmd := &cobra.Command{
		Use:   "synth --tasks N --workers R --seed S -o TRACE [--dot FILE] [--meta FILE]",
		Short: "Write a random DAG workload run on R workers as a StarPU Paje trace",
		Long: `synth draws a random DAG of --tasks tasks, schedules it on --workers workers
with task durations drawn per kind (--codelets), and writes the run as a
StarPU Paje trace (.gz: compressed); the same --seed gives the same trace.
--dot writes the DAG (Graphviz), --meta its properties, which 'tracecast
train' reads. docs/reproduce.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if files.Trace == "" {
				return usageErr(fmt.Errorf("-o TRACE is required"))
			}
			uses := []paths.Use{{Who: "-o", Path: files.Trace, Output: true}, {Who: "--meta", Path: files.MetaPath(), Output: true},
				{Who: "--dot", Path: files.DOT, Output: true}} // each named by its flag
			if err := usageErrOrNil(errors.Join(paths.Conflicts(uses)...)); err != nil {
				return err
			}
			_, err := study.WriteSynth(c, files, log)
			return err
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
	t.cfg = study.DefaultTrainConfig()
	fl := cmd.Flags()
	cliflags.Bind(fl, &t.cfg)
	fl.StringVar(&t.windows, "windows", "1000:50000:1000", "candidate window sizes in samples: a list or FROM:TO:STEP")
	fl.StringVar(&t.method, "method", "matlab", "KS p-value method: matlab, scipy, r")
}

func newTrainCmd() *cobra.Command {
	var t trainFlags
	var metaDir, out string
	cmd := &cobra.Command{
		Use:   "train (--meta-dir DIR | META.json... | TRACE...) -o DIR",
		Short: "Build a window-size model from traces: KS hit-rates per cluster size, fitted and cut at a target",
		Long: `train reads traces ('tracecast synth' metadata files, or traces), computes
the KS hit-rate of every candidate window size on each one's idle-worker
signal and, per number of workers, fits the (window, tasks, hit-rate)
points by a polynomial surface cut at --target: the window size to use for
a number of tasks. Writes DIR/window-model.json (for 'tracecast predict
--model'), traces.jsonl, points.csv and plots, and prints one line per trace.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr(fmt.Errorf("-o DIR is required"))
			}
			ins := args
			if metaDir != "" {
				metas, _ := filepath.Glob(filepath.Join(metaDir, "*.meta.json"))
				ins = append(ins, metas...)
			}
			if err := checkOutputs(ins, inDir(out, "window-model.json", "traces.jsonl", "points.csv")...); err != nil {
				return err
			}
			if err := t.cfg.Parse(t.windows, t.method); err != nil {
				return err
			}
			start := time.Now()
			as, err := study.TrainFrom(metaDir, args, out, &t.cfg)
			if err != nil {
				return err
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
		Long: `reproduce runs the window-size study on synthetic workloads: traces of every
size in --sizes on every cluster size train the model ('tracecast train'),
other traces are then predicted with the model's window size, and
DIR/REPORT.md gives the model and the validation hit-rates, with plots.
docs/reproduce.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := t.cfg.Parse(t.windows, t.method); err != nil {
				return err
			}
			if err := c.ParseSizes(sizes, clusterSizes); err != nil {
				return err
			}
			c.TrainConfig = t.cfg
			return study.Reproduce(&c, log)
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
