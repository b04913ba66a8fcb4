package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/study"
)

// studyCommands are the window-size study's commands: the workload
// synthesizer, the model training and the reduced reproduction. Their logic
// is package study.
func studyCommands() []*cobra.Command {
	return []*cobra.Command{newSynthCmd(), newTrainCmd(), newReproduceCmd()}
}

func newSynthCmd() *cobra.Command {
	c := study.DefaultSynthConfig()
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
			if err := files.Check(); err != nil {
				return err
			}
			_, err := study.WriteSynth(c, files, log)
			return err
		},
	}
	cliflags.Bind(cmd.Flags(), &c)
	cmd.Flags().StringVarP(&files.Trace, "output", "o", "", "trace file (.trace, or .trace.gz)")
	cmd.Flags().StringVar(&files.DOT, "dot", "", "write the DAG in Graphviz DOT here")
	cmd.Flags().StringVar(&files.Meta, "meta", "", "metadata JSON (default: TRACE without .trace[.gz], plus .meta.json)")
	return cmd
}

func newTrainCmd() *cobra.Command {
	t := study.DefaultTrainFlags()
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
			if err := study.TrainInputs(metaDir, out, args); err != nil {
				return err
			}
			cfg, err := t.Config()
			if err != nil {
				return err
			}
			start := time.Now()
			as, err := study.TrainFrom(metaDir, args, out, &cfg)
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
	cliflags.Bind(cmd.Flags(), &t)
	cmd.Flags().StringVar(&metaDir, "meta-dir", "", "directory of *.meta.json files written by 'tracecast synth'")
	cmd.Flags().StringVarP(&out, "output", "o", "", "output directory")
	return cmd
}

func newReproduceCmd() *cobra.Command {
	o := study.DefaultReproduceFlags()
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
			c, err := o.Config()
			if err != nil {
				return err
			}
			return study.Reproduce(c, log)
		},
	}
	cliflags.Bind(cmd.Flags(), &o)
	return cmd
}
