package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/power"
	"github.com/tracecast/tracecast/pipelines"
	tcsv "github.com/tracecast/tracecast/sinks/csv"
	"github.com/tracecast/tracecast/stages/energy"
)

// taskCommands are the commands of issue 18: task records from traces and
// Eiger's models of them.
func taskCommands() []*cobra.Command {
	return []*cobra.Command{newTasksCmd(), newFitModelCmd(), newPredictTaskCmd()}
}

type tasksFlags struct {
	powers                                []string
	powerFormat, node, nodeType, timeUnit string
	out, format                           string
	mapping                               []string
	offset, maxGap, lateness              float64
	lenient                               bool
}

func newTasksCmd() *cobra.Command {
	var f tasksFlags
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
there); a task a power gap cuts gets none (null). When no power sample meets
the run (another node than --node/--map, or no --offset for an epoch-stamped
stream) the command fails and says why.

Output: JSON lines (default), an Arrow IPC file (--format arrow, with -o) or
CSV with one column per parameter (--format csv); the format is guessed
from -o's extension. A summary goes to standard error. 'tracecast fit-model'
reads any of the three.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTasks(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.powers, "power", nil, "power stream of the trace (repeat: one per trace, in order)")
	fl.StringVar(&f.powerFormat, "power-format", "auto", "power format: auto, csv, jsonl, rapl, kwollect")
	fl.StringVar(&f.node, "node", energy.DefaultNode, "node of unmapped workers and of power rows without a node")
	fl.StringArrayVar(&f.mapping, "map", nil, "CONTAINER=NODE: put a worker on a node (repeatable)")
	fl.StringVar(&f.nodeType, "node-type", "", "put each unmapped worker on its nearest ancestor container of this type")
	fl.Float64Var(&f.offset, "offset", 0, "power time minus trace time, seconds")
	fl.Float64Var(&f.maxGap, "max-gap", 5, "longest interval between power samples that is integrated, seconds")
	fl.Float64Var(&f.lateness, "lateness", 0, "how late (s) a power sample may arrive and still be used")
	fl.StringVar(&f.timeUnit, "time-unit", "ms", "unit of the traces' times: s, ms (StarPU), us, ns")
	fl.StringVarP(&f.out, "output", "o", "", "output file (default: standard output)")
	fl.StringVar(&f.format, "format", "", "jsonl, arrow or csv (default: from -o's extension, else jsonl)")
	fl.BoolVar(&f.lenient, "lenient", false, "skip bad trace and power lines instead of failing")
	return cmd
}

func runTasks(ctx context.Context, stdout, stderr io.Writer, traces []string, f *tasksFlags) error {
	format := f.format
	if format == "" {
		switch strings.ToLower(filepath.Ext(strings.TrimSuffix(f.out, ".gz"))) {
		case ".arrow":
			format = "arrow"
		case ".csv":
			format = "csv"
		default:
			format = "jsonl"
		}
	}
	switch format {
	case "jsonl", "csv":
	case "arrow":
		if f.out == "" || f.out == "-" {
			return usageErr(fmt.Errorf("--format arrow needs -o FILE"))
		}
	default:
		return usageErr(fmt.Errorf("unknown --format %q (jsonl, arrow, csv)", format))
	}
	if len(f.powers) > 0 && len(f.powers) != len(traces) {
		return usageErr(fmt.Errorf("%d --power for %d traces: give one power stream per trace, in order", len(f.powers), len(traces)))
	}
	if _, err := power.ParseFormat(f.powerFormat); err != nil {
		return usageErr(err)
	}
	if _, ok := tracecast.UnitsPerSecond(f.timeUnit); !ok {
		return usageErr(fmt.Errorf("unknown --time-unit %q (s, ms, us, ns)", f.timeUnit))
	}
	mapping := map[string]string{}
	for _, m := range f.mapping {
		c, n, ok := strings.Cut(m, "=")
		if !ok || c == "" || n == "" {
			return usageErr(fmt.Errorf("--map %q: want CONTAINER=NODE", m))
		}
		mapping[c] = n
	}
	if format == "csv" && f.out != "" && f.out != "-" {
		if err := checkOutputs(append(append([]string(nil), traces...), f.powers...), f.out); err != nil {
			return err
		}
	}

	// The summary is counted as the tasks pass; only CSV, whose header
	// needs every parameter name, holds them all.
	var all []tracecast.Task
	sum := newTasksSummary()
	collect := pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		if ts, ok := b.Items.([]tracecast.Task); ok {
			sum.add(ts)
			if format == "csv" {
				all = append(all, ts...)
			}
		}
		return nil
	})
	spec := tasksSpec(traces, f, mapping, format)
	if err := runSpec(ctx, spec, map[string]tracecast.Sink{"collect": collect}); err != nil {
		return err
	}
	if format == "csv" {
		w := stdout
		if f.out != "" && f.out != "-" {
			fh, err := os.Create(f.out)
			if err != nil {
				return err
			}
			defer fh.Close()
			w = fh
		}
		if err := tcsv.WriteTasks(w, all); err != nil {
			return err
		}
	}
	return sum.write(stderr, traces, len(f.powers) > 0, f.out)
}

// tasksSpec is the tasks command's pipeline: each trace (paje, user-defined
// fields kept) into the tasks stage — one stage per trace with its power
// stream when there is power, else one for all — and the stages into the
// output sink (jsonl or arrow; csv is written by the command) and the
// command's "collect" sink.
func tasksSpec(traces []string, f *tasksFlags, mapping map[string]string, format string) pipelines.Spec {
	spec := pipelines.Spec{Name: "tasks"}
	var stageIDs []string
	var allTraces []string
	for i, tr := range traces {
		id := fmt.Sprintf("trace%d", i)
		spec.Sources = append(spec.Sources, pipelines.Node{ID: id, Type: "file", Options: map[string]any{"path": tr},
			Parser: &pipelines.Node{Type: "paje", Options: map[string]any{"lenient": f.lenient, "user_defined": true}}})
		allTraces = append(allTraces, id)
		if len(f.powers) == 0 {
			continue
		}
		pid := fmt.Sprintf("power%d", i)
		spec.Sources = append(spec.Sources, pipelines.Node{ID: pid, Type: "file", Options: map[string]any{"path": f.powers[i]},
			Parser: &pipelines.Node{Type: "power", Options: map[string]any{"format": f.powerFormat, "lenient": f.lenient, "node": f.node}}})
		opts := map[string]any{"time_unit": f.timeUnit, "energy": true, "node": f.node, "node_type": f.nodeType,
			"offset": f.offset, "max_gap": f.maxGap, "lateness": f.lateness}
		if len(mapping) > 0 {
			opts["map"] = mapping
		}
		sid := fmt.Sprintf("tasks%d", i)
		spec.Stages = append(spec.Stages, pipelines.Node{ID: sid, Type: "tasks", Inputs: []string{id, pid}, Options: opts})
		stageIDs = append(stageIDs, sid)
	}
	if len(f.powers) == 0 {
		spec.Stages = append(spec.Stages, pipelines.Node{ID: "tasks", Type: "tasks", Inputs: allTraces, Options: map[string]any{"time_unit": f.timeUnit}})
		stageIDs = []string{"tasks"}
	}
	spec.Sinks = append(spec.Sinks, pipelines.Node{ID: "collect", Type: "collect", Inputs: stageIDs})
	out := f.out
	if out == "" {
		out = "-"
	}
	switch format {
	case "jsonl":
		spec.Sinks = append(spec.Sinks, pipelines.Node{ID: "out", Type: "jsonl", Inputs: stageIDs, Options: map[string]any{"path": out, "records": "tasks"}})
	case "arrow":
		spec.Sinks = append(spec.Sinks, pipelines.Node{ID: "out", Type: "arrow", Inputs: stageIDs, Options: map[string]any{"path": out, "format": "file", "records": "tasks"}})
	}
	return spec
}

// tasksSummary counts, per codelet and worker kind, the tasks, their
// durations and, with power, their energies.
type tasksSummary struct {
	by   map[string]*taskAcc
	keys []string
	n    int
}

type taskAcc struct {
	n, withE   int
	dur, e     float64
	minD, maxD float64
}

func newTasksSummary() *tasksSummary { return &tasksSummary{by: map[string]*taskAcc{}} }

func (s *tasksSummary) add(ts []tracecast.Task) {
	for i := range ts {
		s.n++
		k := ts[i].Codelet + " (" + ts[i].WorkerKind + ")"
		a := s.by[k]
		if a == nil {
			a = &taskAcc{minD: ts[i].DurationS, maxD: ts[i].DurationS}
			s.by[k] = a
			s.keys = append(s.keys, k)
		}
		a.n++
		a.dur += ts[i].DurationS
		a.minD, a.maxD = min(a.minD, ts[i].DurationS), max(a.maxD, ts[i].DurationS)
		if ts[i].EnergyJ != nil {
			a.withE++
			a.e += *ts[i].EnergyJ
		}
	}
}

// write prints the table: tasks, mean, min and max duration (ms) and, with
// power, the mean energy (mJ) and how many tasks got none.
func (s *tasksSummary) write(w io.Writer, traces []string, withPower bool, out string) error {
	sort.Strings(s.keys)
	fmt.Fprintf(w, "tracecast tasks: %d tasks from %d trace(s)", s.n, len(traces))
	if out != "" && out != "-" {
		fmt.Fprintf(w, " -> %s", out)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-32s %7s %12s %12s %12s", "codelet (worker kind)", "tasks", "mean ms", "min ms", "max ms")
	if withPower {
		fmt.Fprintf(w, " %12s %9s", "mean mJ", "no energy")
	}
	fmt.Fprintln(w)
	for _, k := range s.keys {
		a := s.by[k]
		fmt.Fprintf(w, "  %-32s %7d %12.4f %12.4f %12.4f", k, a.n, a.dur/float64(a.n)*1e3, a.minD*1e3, a.maxD*1e3)
		if withPower {
			if a.withE > 0 {
				fmt.Fprintf(w, " %12.4f", a.e/float64(a.withE)*1e3)
			} else {
				fmt.Fprintf(w, " %12s", "—")
			}
			fmt.Fprintf(w, " %9d", a.n-a.withE)
		}
		fmt.Fprintln(w)
	}
	if s.n == 0 {
		fmt.Fprintln(w, "  no task: the traces have no worker state with a JobId field (StarPU ≥ 1.3 writes them)")
	}
	return nil
}
