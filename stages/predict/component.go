package predict

import (
	"context"
	"errors"
	"fmt"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stats/ks"
	"math"
	"reflect"
	"strconv"
)

// Register registers the "predict" stage.
func Register(r *component.Registry) {
	component.RegisterStage(r, "predict", "seed 004's prediction phase: windows, predictions, verdicts and alerts", DefaultStageConfig, newStage)
}

// StageConfig are the options of a "predict" stage: seed 004's
// prediction phase on the entities of one trace (see tracecast predict).
type StageConfig struct {
	// Rules: auto, starpu or smpi (state classes and selected containers).
	Rules string `yaml:"rules"`
	// Class is the class whose signal fixes the period (default idle).
	Class string `yaml:"class"`
	// Period is Δ, a duration with a unit (1ms) or a plain number in trace
	// units; 0 is seed 004's rule with the floors.
	Period     tracecast.TraceTime `yaml:"period"`
	MinPeriod  tracecast.TraceTime `yaml:"min_period"`
	MaxSamples int                 `yaml:"max_samples"`
	// Window is w, in samples (required).
	Window  int      `yaml:"window"`
	Queries []string `yaml:"queries"`
	Method  string   `yaml:"method"`
	Alpha   float64  `yaml:"alpha"`
	// IdleThreshold and RegimeMisses raise alerts (0 disables).
	IdleThreshold float64 `yaml:"idle_threshold"`
	RegimeMisses  int     `yaml:"regime_misses"`
	// TimeUnit of the trace for horizons in seconds: s, ms, us, ns
	// (default ms for StarPU rules, s otherwise).
	TimeUnit string `yaml:"time_unit"`
	// Trace names the trace in the records (default: the stream's file name).
	Trace string `yaml:"trace"`
	// Live predicts while the trace is read (a tailed trace): windows are
	// sampled as the parser's watermark passes them. Needs a period; the
	// rules must be starpu or smpi.
	Live bool `yaml:"live"`
	// MaxStreams bounds the traces predicted at once (a Kafka source).
	MaxStreams int `yaml:"max_streams"`
}

// DefaultStageConfig are the command's defaults.
func DefaultStageConfig() StageConfig {
	return StageConfig{Rules: "auto", Class: "idle", MaxSamples: 10_000_000, Queries: []string{"idle>=25%"},
		Method: "matlab", Alpha: 0.05, IdleThreshold: 0.8, RegimeMisses: 3, MaxStreams: component.DefaultMaxStreams}
}

// Validate checks the options.
func (o *StageConfig) Validate() error {
	var errs []error
	if o.Window <= 0 {
		errs = append(errs, errors.New("window: required, a positive number of samples"))
	}
	if o.MaxSamples <= 0 {
		errs = append(errs, fmt.Errorf("max_samples: must be positive (got %d)", o.MaxSamples))
	}
	if o.MaxStreams <= 0 {
		errs = append(errs, fmt.Errorf("max_streams: must be positive (got %d)", o.MaxStreams))
	}
	if _, ok := signal.Presets[o.Rules]; !ok && o.Rules != "auto" {
		errs = append(errs, fmt.Errorf("rules: %q is not auto, starpu or smpi", o.Rules))
	}
	if _, err := signal.ParseClass(o.Class); err != nil {
		errs = append(errs, fmt.Errorf("class: %w", err))
	}
	if _, err := ks.ParseMethod(o.Method); err != nil {
		errs = append(errs, fmt.Errorf("method: %w", err))
	}
	for _, q := range o.Queries {
		if _, err := ParseQuery(q, 1<<30); err != nil {
			errs = append(errs, fmt.Errorf("queries: %w", err))
		}
	}
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); o.TimeUnit != "" && !ok {
		errs = append(errs, fmt.Errorf("time_unit: %q is not one of s, ms, us, ns", o.TimeUnit))
	}
	if o.Live && (o.Period.Sign() <= 0 || o.Rules == "auto") {
		errs = append(errs, errors.New("live: needs a period and rules starpu or smpi (the paper's period needs the whole trace)"))
	}
	return errors.Join(errs...)
}

// stage runs the prediction phase at the end of input, emitting
// windows, predictions, verdicts and alerts as four batches.
type stage struct {
	*signal.Collector
	o   StageConfig
	env component.Env
}

// newStage runs one predictor per trace (stream): a Kafka source
// interleaves traces, each flushed at its end marker.
func newStage(env component.Env, o StageConfig) (tracecast.Processor, error) {
	one := func(string) (tracecast.Processor, error) {
		if o.Live {
			return newLivePredict(env, o)
		}
		c, err := signal.NewCollector(o.Rules)
		if err != nil {
			return nil, err
		}
		return &stage{Collector: c, o: o, env: env}, nil
	}
	if _, err := one(""); err != nil { // report bad options at start
		return nil, err
	}
	return component.NewPerStream(o.MaxStreams, one).LogTo(env.Logger), nil
}

func (st *stage) Flush(ctx context.Context, emit tracecast.Emit) error {
	sig, rules, period, unit, err := st.Build(st.env, st.o.Class, st.o.Period, st.o.MinPeriod, st.o.MaxSamples, st.o.TimeUnit)
	if err != nil {
		return err
	}
	trace := st.o.Trace
	if trace == "" {
		trace = TraceID(st.Stream())
	}
	m, _ := ks.ParseMethod(st.o.Method)
	var ws []tracecast.Window
	var ps []tracecast.Prediction
	var vs []tracecast.Verdict
	var as []tracecast.Alert
	err = Run(sig, trace, period, tracecast.PerSecond(unit), Options{Window: st.o.Window, Queries: st.o.Queries,
		Method: m, Alpha: st.o.Alpha, IdleThreshold: st.o.IdleThreshold, RegimeMisses: st.o.RegimeMisses},
		Sink{Window: func(w tracecast.Window) { ws = append(ws, w) },
			Prediction: func(p tracecast.Prediction) { ps = append(ps, p) },
			Verdict:    func(v tracecast.Verdict) { vs = append(vs, v) },
			Alert:      func(a tracecast.Alert) { as = append(as, a) }})
	if err != nil {
		return err
	}
	// The outputs say how the signal was sampled.
	meta := map[string]string{"time_unit": unit, "period": strconv.FormatFloat(period, 'g', -1, 64), "rules": rules.Name}
	for _, items := range []any{ws, ps, vs, as} {
		if err := emit(ctx, tracecast.Batch{Stream: trace, Items: items, Meta: meta}); err != nil {
			return err
		}
	}
	return nil
}

// earlySample is a sample taken before R is fixed.
type earlySample struct {
	t float64
	x int
}

// livePredict is the predict stage on a trace still being read: each class's
// signal is sampled up to the input's watermark and fed to the engines, so
// predictions come out while the run goes on.
type livePredict struct {
	o       StageConfig
	env     component.Env
	rules   *signal.Rules
	classes []signal.Class
	lives   map[signal.Class]*signal.Live
	engines map[signal.Class]*Engine
	early   map[signal.Class][]earlySample // samples before the engine exists
	trace   string
	perSec  float64
	period  float64 // trace units
	out     struct {
		ws []tracecast.Window
		ps []tracecast.Prediction
		vs []tracecast.Verdict
		as []tracecast.Alert
	}
}

func newLivePredict(env component.Env, o StageConfig) (tracecast.Processor, error) {
	r := signal.Presets[o.Rules]()
	if err := r.Compile(); err != nil {
		return nil, err
	}
	unit := o.TimeUnit
	if unit == "" {
		unit = map[bool]string{true: "ms", false: "s"}[o.Rules == "starpu"]
	}
	st := &livePredict{o: o, env: env, rules: r,
		lives: map[signal.Class]*signal.Live{}, engines: map[signal.Class]*Engine{}, early: map[signal.Class][]earlySample{},
		perSec: tracecast.PerSecond(unit), period: o.Period.In(unit)}
	for _, q := range o.Queries {
		// Percentages are resolved against R once the containers are known;
		// parse the class now.
		pq, err := ParseQuery(q, 1<<30)
		if err != nil {
			return nil, err
		}
		if _, ok := st.lives[pq.Class]; !ok {
			st.classes = append(st.classes, pq.Class)
			st.lives[pq.Class] = signal.NewLive(r, pq.Class, st.period)
		}
	}
	return st, nil
}

func (st *livePredict) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	es, ok := in.Items.([]tracecast.Entity)
	if !ok {
		return nil
	}
	if st.trace == "" {
		st.trace = st.o.Trace
		if st.trace == "" {
			st.trace = TraceID(in.Stream)
		}
	}
	w := in.Watermark
	if tw, ok := in.TypeWatermarks[st.rules.StateType]; ok {
		w = tw
	}
	return st.advance(ctx, es, w, emit)
}

func (st *livePredict) Flush(ctx context.Context, emit tracecast.Emit) error {
	return st.advance(ctx, nil, math.Inf(1), emit)
}

func (st *livePredict) advance(ctx context.Context, es []tracecast.Entity, w float64, emit tracecast.Emit) error {
	if math.IsNaN(w) {
		return nil
	}
	m, _ := ks.ParseMethod(st.o.Method)
	for _, c := range st.classes {
		l := st.lives[c]
		l.Add(es)
		l.Advance(w, func(_ int, t float64, x int) {
			if e := st.engines[c]; e != nil {
				e.Add(x)
			} else {
				st.early[c] = append(st.early[c], earlySample{t, x})
			}
		})
		// R (and the queries' counts) is fixed once the first window is
		// final: the containers with a state in it. Counting at the first
		// sample instead would depend on how far the first batch reached.
		fix := l.T0() + float64(st.o.Window)*st.period
		if st.engines[c] != nil || !l.Started() || w < fix {
			continue
		}
		r := l.RBefore(fix)
		var qs []Query
		for _, q := range st.o.Queries {
			pq, err := ParseQuery(q, r)
			if err != nil {
				return err
			}
			if pq.Class == c {
				qs = append(qs, pq)
			}
		}
		e := NewEngine(Config{Trace: st.trace, Class: c, R: r, Window: st.o.Window, Period: st.period,
			T0: l.T0(), PerSec: st.perSec, Queries: qs, Compare: KS(m, st.o.Alpha), Method: string(m),
			IdleThreshold: st.o.IdleThreshold, RegimeMisses: st.o.RegimeMisses}, Sink{
			Window:     func(x tracecast.Window) { st.out.ws = append(st.out.ws, x) },
			Prediction: func(x tracecast.Prediction) { st.out.ps = append(st.out.ps, x) },
			Verdict:    func(x tracecast.Verdict) { st.out.vs = append(st.out.vs, x) },
			Alert:      func(x tracecast.Alert) { st.out.as = append(st.out.as, x) }})
		st.engines[c] = e
		// The offline signal counts every container from t_0, in the
		// Outside class before its first state: so do the samples of the
		// first window, whatever order the containers started in.
		for _, s := range st.early[c] {
			x := s.x
			if c == l.Outside() {
				x += l.StartedWithin(s.t, fix)
			}
			e.Add(x)
		}
		delete(st.early, c)
	}
	for _, items := range []any{st.out.ws, st.out.ps, st.out.vs, st.out.as} {
		if reflect.ValueOf(items).Len() == 0 {
			continue
		}
		if err := emit(ctx, tracecast.Batch{Stream: st.trace, Items: items}); err != nil {
			return err
		}
	}
	// Downstream may keep the batches: start new slices.
	st.out.ws, st.out.ps, st.out.vs, st.out.as = nil, nil, nil, nil
	return nil
}
