package main

import (
	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/pipelines/specs"
	"github.com/tracecast/tracecast/stages/energy"
)

// taskCommands are the commands of issue 18: task records from traces and
// Eiger's models of them.
func taskCommands() []*cobra.Command {
	return []*cobra.Command{newTasksCmd(), newFitModelCmd(), newPredictTaskCmd()}
}

func newTasksCmd() *cobra.Command {
	var f specs.Tasks
	cmd := &cobra.Command{
		Use:   "tasks TRACE... [--power FILE]... [-o FILE] [--format jsonl|arrow|csv]",
		Short: "One record per task of StarPU traces: codelet, worker, duration, parameters, energy",
		Long: `tasks reads StarPU traces (Paje, with the task fields StarPU writes as extra
fields of its worker states: Size, Params, Footprint, JobId, ...) and emits one
tracecast.task/1 record per task: run (the trace's path), codelet, worker,
worker kind, job id, footprint, start and duration in seconds, and the
task's parameters as numbers — Size, the data handles of Params
(M240x240x4 → h0_nx, h0_ny, h0_elemsize), every other numeric extra field
(JobId, Footprint and Tag are identifiers, not parameters).

With --power (once per trace, in the same order) each task also gets its
energy: its worker's share of the node's power while it ran, as the energy
command attributes it (--map, --node, --node-type, --offset, --max-gap as
there); a task a power gap cuts gets none (null).

Output: JSON lines (default), an Arrow IPC file (--format arrow, with -o) or
CSV with one column per parameter (--format csv); the format is guessed
from -o's extension. A summary goes to standard error. 'tracecast fit-model'
reads any of the three.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.Traces = args
			sum, err := runner().Tasks(cmd.Context(), f, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			return sum.Write(cmd.ErrOrStderr(), len(args), len(f.Powers) > 0, f.Out)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.Powers, "power", nil, "power stream of the trace (repeat: one per trace, in order)")
	fl.StringVar(&f.PowerFormat, "power-format", "auto", "power format: auto, csv, jsonl, rapl, kwollect")
	fl.StringVar(&f.Node, "node", energy.DefaultNode, "node of unmapped workers and of power rows without a node")
	fl.StringArrayVar(&f.Map, "map", nil, "CONTAINER=NODE: put a worker on a node (repeatable)")
	fl.StringVar(&f.NodeType, "node-type", "", "put each unmapped worker on its nearest ancestor container of this type")
	fl.Float64Var(&f.Offset, "offset", 0, "power time minus trace time, seconds")
	fl.Float64Var(&f.MaxGap, "max-gap", 5, "longest interval between power samples that is integrated, seconds")
	fl.Float64Var(&f.Lateness, "lateness", 0, "how late (s) a power sample may arrive and still be used")
	fl.StringVar(&f.TimeUnit, "time-unit", "ms", "unit of the traces' times: s, ms (StarPU), us, ns")
	fl.StringVarP(&f.Out, "output", "o", "", "output file (default: standard output)")
	fl.StringVar(&f.Format, "format", "", "jsonl, arrow or csv (default: from -o's extension, else jsonl)")
	fl.BoolVar(&f.Lenient, "lenient", false, "skip bad trace and power lines instead of failing")
	return cmd
}
