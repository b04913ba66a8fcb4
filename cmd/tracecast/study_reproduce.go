package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/study"
)

func newReproduceCmd() *cobra.Command {
	var t studyTrainFlags
	var c study.ReproduceConfig
	var sizes, clusterSizes string
	cmd := &cobra.Command{
		Use:   "reproduce [-o DIR]",
		Short: "Seed 004's study at a reduced scale: synthesize, train the window-size model, validate, write REPORT.md",
		Long: `reproduce runs seed 004's benchmarking and prediction phases on synthetic
workloads (see 'tracecast synth'): --train-subsets subsets of one DAG per
size in --sizes, each run on every cluster size in --workers, are analysed
(one pass per trace, every candidate window size) and fitted into the
window-size model; --validation-subsets disjoint subsets are then run through
the prediction phase with the model's window size for their (R, T), and
DIR/REPORT.md gives the model, the per-trace validation hit-rates against
DAG size per cluster size (the paper's Fig. 10) and their averages, with the
plots in DIR/plots and DIR/model/plots.

Traces are synthesized into a pipe and analysed as they are written; with
--keep-traces they are also written to DIR/traces (gzip) with their metadata.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tc, err := t.config()
			if err != nil {
				return err
			}
			if c.Sizes, err = studyInts(sizes); err != nil {
				return usageErr(fmt.Errorf("--sizes: %w", err))
			}
			if c.ClusterSizes, err = studyInts(clusterSizes); err != nil {
				return usageErr(fmt.Errorf("--cluster-sizes: %w", err))
			}
			c.TrainConfig, c.SizesSpec, c.ClusterSizesSpec = *tc, sizes, clusterSizes
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
