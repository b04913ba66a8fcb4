package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/study"
)

// registerSynthFlags binds the workload flags to c (synth, and reproduce,
// which sets the tasks, workers and seed per trace itself).
func registerSynthFlags(cmd *cobra.Command, c *study.SynthConfig) {
	fl := cmd.Flags()
	fl.IntVar(&c.Tasks, "tasks", 1000, "number of tasks T (Table I: 1000–4000)")
	fl.IntVar(&c.Workers, "workers", 8, "number of workers R (the paper: 8–256)")
	fl.Uint64Var(&c.Seed, "seed", 1, "random seed: the same seed gives the same DAG and trace")
	fl.IntVar(&c.Levels, "levels", 0, "graph level (0: random in Table I's range for T)")
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
