package specs

import (
	"cmp"
	"context"
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models"
	"github.com/tracecast/tracecast/models/modelio"
	"github.com/tracecast/tracecast/parsers/power"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/report"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/signal"
)

// Attribution are the options that put workers on nodes and join their
// states with the nodes' power samples: the energy and tasks commands'.
type Attribution struct {
	PowerFormat string   `flag:"power-format" help:"power format: auto, csv, jsonl, rapl, kwollect"`
	Node        string   `flag:"node" help:"node of unmapped workers and of power rows without a node"`
	Map         []string `flag:"map" help:"CONTAINER=NODE: put a worker on a node (repeatable)"`
	NodeType    string   `flag:"node-type" help:"put each unmapped worker on its nearest ancestor container of this type (e.g. \"Memory Node\"), named as that container"`
	// Seconds.
	MaxGap   float64 `flag:"max-gap" unit:"s" help:"longest interval between samples that is integrated: a duration or seconds"`
	Lateness float64 `flag:"lateness" unit:"s" help:"how late a sample may arrive and still be used: a duration or seconds"`
	Offset   float64 `flag:"offset" unit:"s" help:"power time minus trace time: a duration or seconds"`
}

// DefaultAttribution are the defaults: every worker on energy.DefaultNode,
// gaps up to 5 s integrated.
func DefaultAttribution() Attribution {
	return Attribution{PowerFormat: "auto", Node: energy.DefaultNode, MaxGap: 5}
}

// Energy are the energy command's inputs and options: the paje, power and
// iocall parsers' and the energy stage's.
type Energy struct {
	Trace    string `flag:"trace" help:"Paje trace (plain or gzip)"`
	Power    string `flag:"power" help:"power stream (plain or gzip)"`
	Metric   string `flag:"metric" help:"with Kwollect input: keep only this metric_id (e.g. wattmetre_power_watt)"`
	Params   string `flag:"params" help:"per-state powers file (JSON or YAML: idle, app, storage, net: the node's whole power in each state, not increments); default: fitted"`
	Rules    string `flag:"rules" help:"state classes: starpu, smpi"`
	TimeUnit string `flag:"time-unit" help:"unit of the trace's times: auto, s, ms, us, ns"`
	Attribution
	Window  float64 `flag:"window" unit:"s" help:"window length: a duration (100ms) or seconds (0: the whole run)"`
	Lenient bool    `flag:"lenient" help:"skip bad trace and power lines instead of failing"`
	// MaxSamples bounds the power samples held until the trace ends.
	MaxSamples int `flag:"max-samples" help:"most power samples held until the trace ends (48 B each); past it the run fails saying so"`
	// IO, optional, is an I/O-call stream: time in I/O calls is storage.
	IO       string  `flag:"io" help:"an I/O-call stream (strace -f -tt -T, or the CSV/JSON-lines schema): time in I/O calls is the storage class"`
	IOFormat string  `flag:"io-format" help:"format of --io: strace, csv, jsonl (default: guessed)"`
	IOOffset float64 `flag:"io-offset" unit:"s" help:"I/O-stream time minus trace time: a duration or seconds (strace -tt times are seconds since midnight)"`
	// Series keeps the power samples (for the plots), at most
	// PlotMaxSamples of them, all nodes together: past it they are thinned
	// uniformly (report.EnergyCollector).
	Series         bool
	PlotMaxSamples int `flag:"plot-max-samples" help:"with -o: most power samples held for the plots, all nodes together (48 B each); past it they are thinned uniformly (every 2nd, 4th, ... sample kept)"`
}

// DefaultEnergy are the energy command's defaults.
func DefaultEnergy() Energy {
	return Energy{Rules: "starpu", TimeUnit: "auto", Attribution: DefaultAttribution(), Window: 1, MaxSamples: energy.DefaultMaxSamples,
		PlotMaxSamples: report.DefaultMaxSeries}
}

// Energy runs the energy stage on the trace and the power stream (and the
// I/O calls) and returns its report and what it collected. Bad options
// are *OptionError naming their flags.
func (r Runner) Energy(ctx context.Context, o Energy) (*report.Energy, *report.EnergyCollector, error) {
	// Checked here, not left to the components, so that the message
	// names the flag.
	bad := func(format string, args ...any) error {
		return &OptionError{Msgs: []string{fmt.Sprintf(format, args...)}}
	}
	if _, err := power.ParseFormat(o.PowerFormat); err != nil {
		return nil, nil, &OptionError{Msgs: []string{err.Error()}}
	}
	if _, ok := signal.Presets[o.Rules]; !ok {
		return nil, nil, bad("unknown --rules %q (starpu, smpi)", o.Rules)
	}
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); !ok && o.TimeUnit != "auto" {
		return nil, nil, bad("unknown --time-unit %q", o.TimeUnit)
	}
	if o.Window < 0 || o.MaxGap < 0 || o.Lateness < 0 {
		return nil, nil, bad("--window, --max-gap and --lateness must not be negative")
	}
	if o.PlotMaxSamples <= 0 {
		return nil, nil, bad("--plot-max-samples %d: must be positive", o.PlotMaxSamples)
	}
	mapping, err := energy.ParseMap(o.Map)
	if err != nil {
		return nil, nil, &OptionError{Msgs: []string{err.Error()}}
	}
	var params *models.StatePowers
	if o.Params != "" {
		p, err := modelio.ReadStatePowers(o.Params)
		if err != nil {
			return nil, nil, err
		}
		params = &p
	}
	stage := map[string]any{"rules": o.Rules, "node": o.Node, "node_type": o.NodeType, "window": o.Window, "max_gap": o.MaxGap,
		"lateness": o.Lateness, "offset": o.Offset, "result": true, "max_samples": o.MaxSamples}
	if o.TimeUnit != "auto" { // else the unit the paje parser detects
		stage["time_unit"] = o.TimeUnit
	}
	if len(mapping) > 0 {
		stage["map"] = mapping
	}
	spec := pipelines.Spec{Name: "energy",
		Sources: []pipelines.Node{{ID: "trace", Type: "file", Options: map[string]any{"path": o.Trace},
			Parser: &pipelines.Node{Type: "paje", Options: map[string]any{"lenient": o.Lenient, "time_unit": o.TimeUnit}}},
			{ID: "power", Type: "file", Options: map[string]any{"path": o.Power},
				Parser: &pipelines.Node{Type: "power", Options: map[string]any{"format": o.PowerFormat, "lenient": o.Lenient, "node": o.Node, "metric": o.Metric}}}},
		Stages: []pipelines.Node{{ID: "energy", Type: "energy", Inputs: []string{"trace", "power"}, Options: stage}},
		Sinks:  []pipelines.Node{collect("collect", "energy")}}
	if o.IO != "" { // every call, failed ones too, is time in I/O: no iotime stage
		spec.Sources = append(spec.Sources, pipelines.Node{ID: "io", Type: "file", Options: map[string]any{"path": o.IO},
			Parser: &pipelines.Node{Type: "iocall", Options: map[string]any{"format": cmp.Or(o.IOFormat, "auto"), "lenient": o.Lenient}}})
		spec.Stages[0].Inputs = append(spec.Stages[0].Inputs, "io")
		stage["io_offset"] = o.IOOffset
	}
	if o.Series {
		spec.Sinks[0].Inputs = append(spec.Sinks[0].Inputs, "power")
	}
	c := &report.EnergyCollector{MaxSeries: o.PlotMaxSamples}
	if err := r.Run(ctx, spec, map[string]tracecast.Sink{"collect": c}); err != nil {
		return nil, nil, err
	}
	if c.Stride > 1 {
		r.Log.Info().Int("plot_max_samples", o.PlotMaxSamples).Int("kept_one_in", c.Stride).
			Msg("power samples thinned for the plots (--plot-max-samples): every node's kept uniformly")
	}
	rep, err := c.Report(params)
	return rep, c, err
}
