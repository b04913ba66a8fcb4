package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models"
	"github.com/tracecast/tracecast/models/modelio"
	"github.com/tracecast/tracecast/parsers/power"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/report"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/signal"
)

type energyFlags struct {
	ioFile, ioFormat                                                           string
	ioOffset                                                                   float64
	trace, power, format, params, out, rules, timeUnit, node, metric, nodeType string
	mapping                                                                    []string
	window, maxGap, lateness, offset                                           float64
	lenient                                                                    bool
	plotPoints                                                                 int
}

func newEnergyCmd() *cobra.Command {
	var f energyFlags
	cmd := &cobra.Command{
		Use:   "energy --trace TRACE --power POWER [--params FILE] [-o DIR]",
		Short: "Energy per node and state class from a Paje trace and a power-meter stream",
		Long: `energy joins a trace's execution states with power samples, per node, and
reports the energy spent in each state class (idle, compute, comm, other).

Storage: with --io, an I/O-call stream (strace -f -tt -T, or the CSV/JSON-
lines schema of docs/io.md); every I/O call is storage activity on its node
(--map "pid N"=NODE, else --node) beside the workers' classes, and the
node's energy at each instant is shared equally among its activities.

Power (--power, plain or gzip; --power-format auto guesses):
  csv       time,node,watts rows at any rate (header optional; "time,watts"
            rows are for --node)
  jsonl     {"time":…,"node":…,"watts":…} per line
  rapl      time,node,energy_uj,max_energy_range_uj counter readings; wraps
            are handled, a wrap with an unknown range is skipped and counted
  kwollect  Grid'5000 Kwollect JSON ({timestamp, device_id, metric_id, value})
Times are seconds (numbers) or RFC 3339. Power time = trace time in seconds
+ --offset (e.g. the run's start epoch for Kwollect).

Nodes: by default all the trace's workers are on one node, --node (node0);
--map CONTAINER=NODE (repeatable) places workers on nodes named as in the
power stream; --node-type TYPE places each other worker on its nearest
ancestor container of that type in the trace's container tree.

Energy between two samples is integrated by the trapezoid rule
(counter-derived mean power: exactly), over the node's run only, and split
between the classes in proportion to the node's workers in each class.
Intervals longer than --max-gap are not integrated and are reported as
gaps. Windows of --window seconds are reported; samples up to --lateness s
out of order are reordered.

When no power sample meets the run (the stream names other nodes than
--node/--map, or its clock is not trace time + --offset) the command fails
and says why, rather than report 0 J; I/O calls that all miss the run (no
--io-offset) are a warning.

Seed 000's model E = P_idle·T + Σ (P_state − P_idle)·T_state: with --params
(JSON or YAML: idle, app, storage, net in watts, each the node's whole power
with one worker in that state and the others idle, NOT the increment: a
worker adding 15 W to an idle 100 W gives app: 115; a state left out is at
idle power; a state below idle is refused) the run's energy is predicted and
the inaccuracy |1 − E_pred/E| printed; without, the per-state powers are
fitted by least squares over the windows, and a fit giving a negative power
or a state clearly below idle is reported as no model, with the reason.
compute → app, comm → net, other → storage. See docs/energy.md.

-o DIR writes energy.arrow (node × class × window rows), totals.arrow,
model.json, energy.png/.svg (stacked energy per node by class) and
power.png/.svg (power over time with the workers' states underneath).`,
		Args: energyArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := energyRequire(cmd, "trace", "power"); err != nil {
				return err
			}
			return runEnergy(cmd.Context(), cmd.OutOrStdout(), &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.trace, "trace", "", "Paje trace (plain or gzip)")
	fl.StringVar(&f.power, "power", "", "power stream (plain or gzip)")
	fl.StringVar(&f.format, "power-format", "auto", "power format: auto, csv, jsonl, rapl, kwollect")
	fl.StringVar(&f.metric, "metric", "", "with Kwollect input: keep only this metric_id (e.g. wattmetre_power_watt)")
	fl.StringVar(&f.params, "params", "", "per-state powers file (JSON or YAML: idle, app, storage, net: the node's whole power in each state, not increments)")
	fl.StringVarP(&f.out, "output", "o", "", "directory for Arrow files, model.json and plots")
	fl.StringVar(&f.rules, "rules", "starpu", "state classes: starpu, smpi")
	fl.StringVar(&f.timeUnit, "time-unit", "auto", "unit of the trace's times: auto, s, ms, us, ns")
	fl.StringVar(&f.node, "node", energy.DefaultNode, "node of unmapped workers and of power rows without a node")
	fl.StringArrayVar(&f.mapping, "map", nil, "CONTAINER=NODE: put a worker on a node (repeatable)")
	fl.StringVar(&f.nodeType, "node-type", "", "put each unmapped worker on its nearest ancestor container of this type (e.g. \"Memory Node\"), named as that container")
	fl.Float64Var(&f.window, "window", 1, "window length in seconds (0: the whole run)")
	fl.Float64Var(&f.maxGap, "max-gap", 5, "longest interval between samples that is integrated, seconds")
	fl.Float64Var(&f.lateness, "lateness", 0, "how late (s) a sample may arrive and still be used")
	fl.Float64Var(&f.offset, "offset", 0, "power time minus trace time, seconds")
	fl.StringVar(&f.ioFile, "io", "", "an I/O-call stream (strace -f -tt -T, or the CSV/JSON-lines schema): time in I/O calls is the storage class")
	fl.StringVar(&f.ioFormat, "io-format", "", "format of --io: strace, csv, jsonl (default: guessed)")
	fl.Float64Var(&f.ioOffset, "io-offset", 0, "I/O-stream time minus trace time, seconds (strace -tt times are seconds since midnight)")
	fl.BoolVar(&f.lenient, "lenient", false, "skip bad trace and power lines instead of failing")
	fl.IntVar(&f.plotPoints, "plot-points", 20000, "most power samples kept per node for the plot")
	return cmd
}

// runEnergy runs the energy pipeline the flags describe and prints its
// report; with -o it writes the report's files too.
func runEnergy(ctx context.Context, w io.Writer, f *energyFlags) error {
	// Flags are checked here, not left to the components' validation, so
	// that a bad one is a usage error naming the flag.
	if _, err := power.ParseFormat(f.format); err != nil {
		return usageErr(err)
	}
	if _, ok := signal.Presets[f.rules]; !ok {
		return usageErr(fmt.Errorf("unknown --rules %q (starpu, smpi)", f.rules))
	}
	switch f.timeUnit {
	case "auto", "s", "ms", "us", "ns":
	default:
		return usageErr(fmt.Errorf("unknown --time-unit %q", f.timeUnit))
	}
	if f.window < 0 || f.maxGap < 0 || f.lateness < 0 {
		return usageErr(fmt.Errorf("--window, --max-gap and --lateness must not be negative"))
	}
	mapping := map[string]string{}
	for _, m := range f.mapping {
		c, n, ok := strings.Cut(m, "=")
		if !ok || c == "" || n == "" {
			return usageErr(fmt.Errorf("--map %q: want CONTAINER=NODE", m))
		}
		mapping[c] = n
	}
	var params *models.StatePowers
	if f.params != "" {
		p, err := modelio.ReadStatePowers(f.params)
		if err != nil {
			return err
		}
		params = &p
	}

	// The pipeline's own sink: the energy stage's full result, and the
	// power samples for the plot.
	var res *energy.Result
	series := map[string][]tracecast.PowerSample{}
	collect := pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		switch items := b.Items.(type) {
		case []*energy.Result:
			res = items[0]
		case []tracecast.PowerSample:
			for _, s := range items {
				series[s.Node] = append(series[s.Node], s)
			}
		}
		return nil
	})
	if err := runSpec(ctx, energySpec(f, mapping), map[string]tracecast.Sink{"collect": collect}); err != nil {
		return err
	}
	if res == nil {
		return errors.New("energy: the pipeline ended without a result")
	}
	rep := report.NewEnergy(res, params)
	if err := rep.WriteText(w); err != nil {
		return err
	}
	if f.out == "" {
		return nil
	}
	return rep.WriteFiles(report.EnergyFiles{Dir: f.out, Series: series, PlotPoints: f.plotPoints, Offset: f.offset,
		Meta: map[string]string{"trace": f.trace, "power": f.power, "window_s": fmt.Sprint(f.window)}})
}

// energySpec is the pipeline of the energy command: the trace (paje) and
// the power stream (power: lines, or a Kwollect document) into the energy stage,
// with --io the I/O calls (iocall) too; the stage's rows and full result,
// and with -o the power samples, go to the command's "collect" sink.
func energySpec(f *energyFlags, mapping map[string]string) pipelines.Spec {
	stage := map[string]any{
		"rules": f.rules, "node": f.node, "node_type": f.nodeType,
		"window": f.window, "max_gap": f.maxGap, "lateness": f.lateness, "offset": f.offset,
		"result": true,
	}
	if f.timeUnit != "auto" { // else the unit the paje parser detects
		stage["time_unit"] = f.timeUnit
	}
	if len(mapping) > 0 {
		stage["map"] = mapping
	}
	spec := pipelines.Spec{
		Name: "energy",
		Sources: []pipelines.Node{
			{ID: "trace", Type: "file", Options: map[string]any{"path": f.trace},
				Parser: &pipelines.Node{Type: "paje", Options: map[string]any{"lenient": f.lenient, "time_unit": f.timeUnit}}},
			{ID: "power", Type: "file", Options: map[string]any{"path": f.power},
				Parser: &pipelines.Node{Type: "power", Options: map[string]any{"format": f.format, "lenient": f.lenient, "node": f.node, "metric": f.metric}}},
		},
		Stages: []pipelines.Node{{ID: "energy", Type: "energy", Inputs: []string{"trace", "power"}, Options: stage}},
		Sinks:  []pipelines.Node{{ID: "collect", Type: "collect", Inputs: []string{"energy"}}},
	}
	if f.ioFile != "" {
		// The calls go to the stage as they are, not through an iotime
		// stage: every call, failed ones included, is time in I/O.
		spec.Sources = append(spec.Sources, pipelines.Node{ID: "io", Type: "file", Options: map[string]any{"path": f.ioFile},
			Parser: &pipelines.Node{Type: "iocall", Options: map[string]any{"format": cmp.Or(f.ioFormat, "auto"), "lenient": f.lenient}}})
		spec.Stages[0].Inputs = append(spec.Stages[0].Inputs, "io")
		stage["io_offset"] = f.ioOffset
	}
	if f.out != "" {
		spec.Sinks[0].Inputs = append(spec.Sinks[0].Inputs, "power")
	}
	return spec
}
