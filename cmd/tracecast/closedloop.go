package main

import (
	"fmt"
	"github.com/tracecast/tracecast/internal/paths"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tracecast/tracecast/backfill/closedloop"
	"github.com/tracecast/tracecast/internal/cliflags"
)

func newClosedLoopCmd() *cobra.Command {
	c := closedloop.DefaultConfig()
	var out string
	var traces bool
	cmd := &cobra.Command{
		Use:   "closed-loop --tasks N --workers R [--levels L] [--seeds K] [--task D]... [--alpha A] [--policy P]... [-o DIR [--traces]]",
		Short: "Run a synthetic DAG with back-end tasks placed live by each policy: the primary's slowdown against the back-end throughput",
		Long: `closed-loop draws the DAG 'tracecast synth' draws with the same flags, runs
it on --workers workers without back-end tasks, then once per policy and
back-end task length --task d with a second queue of back-end tasks that
the policy places live, seeing only the run so far (the backfill engine of
'tracecast backfill', fed as the run goes), in wait mode: a worker running
a back-end task is not available to the primary, whose tasks wait and
whose delay propagates through the DAG. Policies: never, greedy, timeout
(once per --timeout τ), online-timeout, residual and forecast (the last
three decide by --alpha).

It prints, per policy, the back-end work U, the primary's makespan T and
its slowdown (T - T0)/T0 against the run without back-end tasks, the
back-end throughput U/T, the p99 of the primary tasks' start delays, and
whether forecast harvests more than every timeout of equal or lower
slowdown; with --seeds K, the means over K DAGs (seeds SEED to SEED+K-1).
-o DIR writes every run's row and the means to DIR/closedloop.jsonl and
the frontier (slowdown against throughput) to DIR/frontier.svg; --traces
keeps every run's trace in DIR/traces (the back-end tasks are "Backfill"
states). docs/backfill.md#closed-loop.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if traces && out == "" {
				return cliflags.Usage(fmt.Errorf("--traces needs -o DIR"))
			}
			if err := checkOutputs(nil, paths.InDir(out, "closedloop.jsonl", "frontier.svg", "traces")...); err != nil {
				return err
			}
			var tr closedloop.Traces
			if traces {
				tr = closedloop.TraceFiles(filepath.Join(out, "traces"))
			}
			res, err := closedloop.Run(c, tr)
			if err != nil {
				return err
			}
			if err := closedloop.WriteTable(os.Stdout, res); err != nil {
				return err
			}
			if out == "" {
				return nil
			}
			return closedloop.WriteFiles(out, res)
		},
	}
	fl := cmd.Flags()
	cliflags.Bind(fl, &c)
	fl.StringVarP(&out, "output", "o", "", "directory for closedloop.jsonl (every run and the means) and frontier.svg")
	fl.BoolVar(&traces, "traces", false, "keep every run's trace in DIR/traces (gzip)")
	return cmd
}
