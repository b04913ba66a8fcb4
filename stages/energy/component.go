package energy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/iotime"
	"github.com/tracecast/tracecast/stages/signal"
)

// Register registers the "energy" stage.
func Register(r *component.Registry) {
	component.RegisterStage(r, "energy", "energy per node, state class and window from states and power samples", DefaultStageConfig, newStage)
}

// StageConfig is the configuration of an "energy" stage: the energy of each
// execution state class per node, from a trace's states and a power stream
// (see tracecast energy). Inputs: a paje parser's entities, a power
// parser's samples and, for the storage class, an iocall parser's I/O calls
// (every call is time in I/O, failed ones included, as in tracecast energy
// --io) or an iotime stage's "IO State" records (the calls iotime
// categorises). It integrates at the end of input: timelines need every
// state. Samples are joined in arrival order: lateness bounds how far out
// of order a node's samples may come.
type StageConfig struct {
	Rules    string            `yaml:"rules"`     // starpu (default), smpi, or auto: the first of them whose states the trace has
	TimeUnit string            `yaml:"time_unit"` // of the trace: s, ms, us, ns (default: the paje parser's, else ms for starpu)
	Node     string            `yaml:"node"`      // node of unmapped workers
	Map      map[string]string `yaml:"map"`       // worker container -> node
	NodeType string            `yaml:"node_type"` // unmapped workers go to their ancestor of this type
	// Lengths of time: a duration with a unit (500ms) or seconds.
	Window   tracecast.Seconds `yaml:"window"`    // window length (0: the whole run)
	MaxGap   tracecast.Seconds `yaml:"max_gap"`   // longest integrated interval between samples
	Lateness tracecast.Seconds `yaml:"lateness"`  // how late a sample may arrive
	Offset   tracecast.Seconds `yaml:"offset"`    // power time minus trace time
	IOOffset tracecast.Seconds `yaml:"io_offset"` // I/O-stream time minus trace time
	// MaxSamples bounds the power samples held: they are integrated at the
	// end of input, once the timelines are complete, so each one received
	// is held until then (SampleBytes each). Past it the run fails with an
	// error saying so: cut the power stream to the run's time span, or
	// raise it. Default DefaultMaxSamples.
	MaxSamples int `yaml:"max_samples"`
	// Result also emits, after the rows, the full result as one item
	// ([]*energy.Result): coverage, gaps, timelines, what a report needs.
	// For an in-process sink (a command's); file sinks take records: energy.
	Result bool `yaml:"result"`
}

// DefaultStageConfig are the command's defaults.
func DefaultStageConfig() StageConfig {
	return StageConfig{Rules: "starpu", Node: DefaultNode, Window: 1, MaxGap: 5, MaxSamples: DefaultMaxSamples}
}

// DefaultMaxSamples is 16 Mi samples (768 MiB): four and a half hours of
// a 1 kHz wattmeter on one node, or under three minutes on a hundred.
const DefaultMaxSamples = 1 << 24

// SampleBytes is what a held power sample costs (tracecast.PowerSample).
const SampleBytes = int64(unsafe.Sizeof(tracecast.PowerSample{}))

// Validate checks the options.
func (o *StageConfig) Validate() error {
	var errs []error
	if _, ok := signal.Presets[o.Rules]; !ok && o.Rules != "auto" {
		errs = append(errs, fmt.Errorf("rules: %q is not starpu, smpi or auto", o.Rules))
	}
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); o.TimeUnit != "" && !ok {
		errs = append(errs, fmt.Errorf("time_unit: %q is not one of s, ms, us, ns", o.TimeUnit))
	}
	if o.Window < 0 || o.Lateness < 0 {
		errs = append(errs, errors.New("window, lateness: must not be negative"))
	}
	if !(o.MaxGap > 0) {
		errs = append(errs, fmt.Errorf("max_gap: must be positive (got %g)", o.MaxGap))
	}
	if o.MaxSamples <= 0 {
		errs = append(errs, fmt.Errorf("max_samples: must be positive (got %d)", o.MaxSamples))
	}
	errs = append(errs, CheckOffset("offset", o.Offset), CheckOffset("io_offset", o.IOOffset))
	return errors.Join(errs...)
}

// MaxOffset bounds a clock offset (power or I/O-stream time minus trace
// time), in seconds: 1e11 s, over 3000 years, beyond any two clocks' gap
// (epoch seconds are 1.8e9), so that the times it makes stay readable.
const MaxOffset = 1e11

// CheckOffset checks a clock offset option (name: offset, io_offset).
func CheckOffset(name string, s tracecast.Seconds) error {
	if v := float64(s); !(math.Abs(v) <= MaxOffset) {
		return fmt.Errorf("%s: %g s is beyond ±%g s (it is a clock's time minus trace time: epoch seconds are about 1.8e9)", name, v, float64(MaxOffset))
	}
	return nil
}

type stage struct {
	o   StageConfig
	env component.Env
	// cols has one collector per candidate rule set: one, or with rules
	// auto StarPU's then SMPI's (Flush keeps the first that found states,
	// as the signal stage and the HTML report choose).
	cols  []*Collector
	names []string
	// samples are the power parser's batches, kept as they came (the
	// parser hands each in a fresh slice): no copy, no growth.
	samples  [][]tracecast.PowerSample
	nsamples int
	stream   string
	// unit is the trace's time unit as its parser said (Batch.Meta).
	unit string
}

func newStage(env component.Env, o StageConfig) (tracecast.Processor, error) {
	names := []string{o.Rules}
	if o.Rules == "auto" {
		names = []string{"starpu", "smpi"}
	}
	st := &stage{o: o, env: env, names: names}
	for _, n := range names {
		r := signal.Presets[n]()
		if err := r.Compile(); err != nil {
			return nil, err
		}
		col := NewCollector(r, o.Map, o.Node)
		col.SetNodeType(o.NodeType)
		st.cols = append(st.cols, col)
	}
	return st, nil
}

func (st *stage) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	switch items := in.Items.(type) {
	case []tracecast.Entity:
		if st.stream == "" {
			st.stream = in.Stream
		}
		if u := in.Meta["time_unit"]; u != "" && st.unit == "" {
			st.unit = u // the paje parser's, given or detected
		}
		// The iotime stage's records are the storage class.
		for _, col := range st.cols {
			if len(items) > 0 && items[0].Type == iotime.StateType {
				col.AddIO(items, float64(st.o.IOOffset))
			} else {
				col.Add(items)
			}
		}
	case []tracecast.IOCall:
		// An iocall parser's calls: each is an "in I/O" interval, as
		// iotime states it, but none is left out (iotime skips failed
		// calls, whose time was spent in the kernel's I/O path too).
		ios := make([]tracecast.Entity, len(items))
		for i := range items {
			ios[i] = iotime.State(&items[i])
		}
		for _, col := range st.cols {
			col.AddIO(ios, float64(st.o.IOOffset))
		}
	case []tracecast.PowerSample:
		if st.nsamples+len(items) > st.o.MaxSamples {
			return fmt.Errorf("energy: more than %d power samples (max_samples): each is held until the trace ends; "+
				"cut the power stream to the run's time span or raise max_samples", st.o.MaxSamples)
		}
		st.samples = append(st.samples, items)
		st.nsamples += len(items)
	}
	return nil
}

// Flush builds the nodes' timelines, integrates the samples and emits the
// rows: node × class × window, then the totals (window -1).
func (st *stage) Flush(ctx context.Context, emit tracecast.Emit) error {
	var tls map[string]*Timeline
	var col *Collector
	var first error
	for i, c := range st.cols {
		unit := cmp.Or(st.o.TimeUnit, st.unit, map[bool]string{true: "ms", false: "s"}[st.names[i] == "starpu"])
		perSec, _ := tracecast.UnitsPerSecond(unit)
		var err error
		if tls, err = c.Build(perSec); err == nil {
			col = c
			break
		}
		first = cmp.Or(first, err)
	}
	if col == nil {
		return first
	}
	// Arrival order, not sorted: the joiner reorders each node's samples
	// within lateness and counts later ones, as with tracecast
	j := NewJoiner(tls, Options{Window: float64(st.o.Window), MaxGap: float64(st.o.MaxGap), Lateness: float64(st.o.Lateness), Offset: float64(st.o.Offset)})
	for _, b := range st.samples {
		j.Add(b)
	}
	res := j.Finish()
	res.Warnings = append(res.Warnings, col.IOWarnings()...)
	for _, w := range res.Warnings {
		st.env.Logger.Warn().Msg(w)
	}
	// Rows of 0 J from a wrong node name or clock offset are an error, not
	// a measurement.
	if err := res.Check(); err != nil {
		return err
	}
	total := 0.0
	for _, t := range res.Totals {
		total += t.EnergyJ
	}
	st.env.Logger.Info().Int("nodes", len(tls)).Int("samples", st.nsamples).Int("io_intervals", col.IOIntervals()).
		Float64("energy_j", math.Round(total*1000)/1000).Msg("energy")
	rows := append(Rows(res.Windows), Rows(res.Totals)...)
	if err := emit(ctx, tracecast.Batch{Stream: st.stream, Items: rows}); err != nil || !st.o.Result {
		return err
	}
	return emit(ctx, tracecast.Batch{Stream: st.stream, Items: []*Result{res}})
}

// ParseMap reads CONTAINER=NODE placements (the energy command's --map)
// into the stage's map option.
func ParseMap(specs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, s := range specs {
		c, n, ok := strings.Cut(s, "=")
		if !ok || c == "" || n == "" {
			return nil, fmt.Errorf("--map %q: want CONTAINER=NODE", s)
		}
		m[c] = n
	}
	return m, nil
}
