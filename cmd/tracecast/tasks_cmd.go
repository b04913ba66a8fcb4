package main

import (
	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/app/specs"
	"github.com/tracecast/tracecast/internal/cliflags"
)

// taskCommands are the commands of issue 18: task records from traces and
// Eiger's models of them.
func taskCommands() []*cobra.Command {
	return []*cobra.Command{newTasksCmd(), newFitModelCmd(), newPredictTaskCmd()}
}

func newTasksCmd() *cobra.Command {
	f := specs.DefaultTasks()
	cmd := &cobra.Command{
		Use:   "tasks TRACE... [--power FILE]... [-o FILE] [--format jsonl|arrow|parquet|csv]",
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
there); a task a power gap cuts gets none (null). When no power sample meets
the run (another node than --node/--map, or no --offset for an epoch-stamped
stream) the command fails and says why.

Output: JSON lines (default), an Arrow IPC file (--format arrow, with -o), a
Parquet file with the same columns (--format parquet, with -o) or CSV with
one column per parameter (--format csv); without --format, -o's extension
says which (.jsonl, .arrow, .parquet, .csv; another is refused). A summary
goes to standard error. 'tracecast fit-model' reads the JSON-lines, Arrow
and CSV outputs.`,
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
	cliflags.Bind(cmd.Flags(), &f)
	return cmd
}
