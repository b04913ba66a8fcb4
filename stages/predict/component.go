package predict

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stats/ks"
)

// Register registers the "predict" stage.
func Register(r *component.Registry) {
	component.RegisterStage(r, "predict", "KS windows: cuts the signal into windows, predicts each from the previous one and tests the prediction (windows, predictions, verdicts, alerts)", DefaultStageConfig, newStage)
}

// StageConfig are the options of a "predict" stage: Pallipuram et al.'s (2014)
// prediction phase on the entities of one trace (see tracecast predict).
type StageConfig struct {
	// Rules: auto, starpu or smpi (state classes and selected containers).
	Rules string `yaml:"rules"`
	// Class is the class whose signal fixes the period (default idle).
	Class string `yaml:"class"`
	// Period is Δ, a duration with a unit (1ms) or a plain number in trace
	// units; 0 is Pallipuram et al.'s (2014) rule with the floors.
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
	if err := ks.CheckAlpha(o.Alpha); err != nil {
		errs = append(errs, fmt.Errorf("alpha: %w", err))
	}
	if !(o.IdleThreshold >= 0 && o.IdleThreshold <= 1) {
		errs = append(errs, fmt.Errorf("idle_threshold: %g: a likelihood must be in [0, 1] (0: no idle-opportunity alert)", o.IdleThreshold))
	}
	if o.RegimeMisses < 0 {
		errs = append(errs, fmt.Errorf("regime_misses: %d: must be positive (0: no regime-change alert)", o.RegimeMisses))
	}
	errs = append(errs, signal.CheckPeriods(o.Period, o.MinPeriod)...)
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

// stage runs the prediction phase on one trace: an engine per class the
// queries name, fed while the trace is read (a Sampler after a first pass,
// or online with a given period), or at the end of input from every state
// kept (a Collector, when the runtime offers no first pass). Either way it
// emits windows, predictions, verdicts and alerts as four batches at the
// end, class after class, as the offline phase (Run) orders them.
type stage struct {
	col *signal.Collector
	smp *signal.Sampler
	// surveyed: smp samples after a first pass.
	surveyed bool
	o        StageConfig
	env      component.Env
	stream   string
	trace    string
	period   float64
	unit     string
	rules    string
	// classes the queries name, in class order; per class its engine and
	// records.
	classes []signal.Class
	engines []*Engine
	out     []records
	err     error
}

type records struct {
	ws []tracecast.Window
	ps []tracecast.Prediction
	vs []tracecast.Verdict
	as []tracecast.Alert
}

// newStage runs one predictor per trace (stream): a Kafka source
// interleaves traces, each flushed at its end marker.
func newStage(env component.Env, o StageConfig) (tracecast.Processor, error) {
	if o.Live {
		one := func(string) (tracecast.Processor, error) { return newLivePredict(env, o) }
		if _, err := one(""); err != nil { // report bad options at start
			return nil, err
		}
		return component.NewPerStream(o.MaxStreams, one).LogTo(env.Logger), nil
	}
	if _, err := signal.NewCollector(o.Rules); err != nil {
		return nil, err
	}
	class, _ := signal.ParseClass(o.Class)
	var classes []signal.Class
	for c := signal.Class(0); c < signal.NumClasses; c++ {
		for _, q := range o.Queries {
			if pq, err := ParseQuery(q, 1<<30); err == nil && pq.Class == c {
				classes = append(classes, c)
				break
			}
		}
	}
	return signal.NewTwoPass(o.Rules, class, o.Period, o.MaxStreams, env.Logger, func(stream string, pass signal.Pass, sum *signal.Summary) (tracecast.Processor, error) {
		st := &stage{o: o, env: env, stream: stream, classes: classes, rules: o.Rules, trace: o.Trace}
		if st.trace == "" {
			st.trace = TraceID(stream)
		}
		if pass == signal.Surveyed && sum.Late > 0 {
			signal.LateWarning(env.Logger, stream, sum)
			pass, st.rules = signal.Collected, sum.Rules.Name
		}
		switch pass {
		case signal.Collected:
			c, err := signal.NewCollector(st.rules)
			if err != nil {
				return nil, err
			}
			st.col = c
		case signal.Surveyed:
			u := cmp.Or(o.TimeUnit, signal.DefaultUnit(sum.Rules))
			period, why, err := sum.Period(o.Period.In(u), o.MinPeriod.In(u), o.MaxSamples, u)
			if err != nil {
				return nil, err
			}
			st.period, st.unit = period, o.TimeUnit
			if st.unit == "" {
				st.unit = signal.DefaultUnit(sum.Rules)
			}
			sum.Log(env.Logger, stream, class, period, why, st.unit)
			st.smp, st.surveyed = signal.NewSampler(sum, classes, period), true
			if err := st.start(sum.R, sum.T0); err != nil {
				return nil, err
			}
		default:
			smp, err := signal.NewOnlineSampler(o.Rules, classes, o.Period, o.TimeUnit)
			if err != nil {
				return nil, err
			}
			st.smp = smp // its period is known with its rules
		}
		return st, nil
	}), nil
}

// start makes the engines once R and t_0 are known.
func (st *stage) start(r int, t0 float64) error {
	if st.o.Window <= 0 {
		return fmt.Errorf("window: must be a positive number of samples")
	}
	if len(st.o.Queries) == 0 {
		return fmt.Errorf("queries: give at least one (idle>=25%%)")
	}
	m, _ := ks.ParseMethod(st.o.Method)
	st.engines, st.out = make([]*Engine, len(st.classes)), make([]records, len(st.classes))
	for i, c := range st.classes {
		qs, err := classQueries(st.o.Queries, c, r)
		if err != nil {
			return err
		}
		out := &st.out[i]
		st.engines[i] = NewEngine(Config{Trace: st.trace, Class: c, R: r, Window: st.o.Window, Period: st.period, T0: t0,
			PerSec: tracecast.PerSecond(st.unit), Queries: qs, Compare: KS(m, st.o.Alpha), Method: string(m),
			IdleThreshold: st.o.IdleThreshold, RegimeMisses: st.o.RegimeMisses}, Sink{
			Window:     func(w tracecast.Window) { out.ws = append(out.ws, w) },
			Prediction: func(p tracecast.Prediction) { out.ps = append(out.ps, p) },
			Verdict:    func(v tracecast.Verdict) { out.vs = append(out.vs, v) },
			Alert:      func(a tracecast.Alert) { out.as = append(out.as, a) }})
	}
	return nil
}

// sample feeds a sample of class i to its engine (online: the engines
// start at the first sample, when R and t_0 are fixed).
func (st *stage) sample(i, _ int, _ float64, x int) {
	if st.err != nil {
		return
	}
	if st.engines == nil {
		st.unit = st.o.TimeUnit
		if st.unit == "" {
			st.unit = signal.DefaultUnit(st.smp.Rules())
		}
		st.period = st.smp.Period()
		if st.err = st.start(st.smp.R(), st.smp.T0()); st.err != nil {
			return
		}
	}
	st.engines[i].Add(x)
}

func (st *stage) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	if st.col != nil {
		return st.col.Process(ctx, in, emit)
	}
	st.smp.Add(in, st.sample)
	if st.err == nil {
		st.err = st.smp.Err()
	}
	return st.err
}

func (st *stage) Flush(ctx context.Context, emit tracecast.Emit) error {
	if st.col != nil {
		return st.flushCollected(ctx, emit)
	}
	st.smp.Finish(st.sample)
	if st.err == nil {
		st.err = st.smp.Err()
	}
	if st.err != nil {
		return st.err
	}
	if st.smp.Rules() == nil || !st.smp.Started() {
		return fmt.Errorf("%s: no StarPU worker or SMPI rank states: nothing to predict", st.stream)
	}
	if n := st.smp.Dropped(); n > 0 && st.surveyed {
		return fmt.Errorf("%s: %d states of containers the first pass did not see: the trace changed while it was read", st.stream, n)
	} else if n > 0 {
		st.env.Logger.Warn().Str("trace", st.stream).Int("states", n).Int("containers", st.smp.R()).
			Msg("states of containers first seen after the signal started are left out (R is fixed at the first sample when the trace is read once)")
	}
	var all records
	for _, r := range st.out {
		all.ws, all.ps = append(all.ws, r.ws...), append(all.ps, r.ps...)
		all.vs, all.as = append(all.vs, r.vs...), append(all.as, r.as...)
	}
	st.out = nil
	return st.emitAll(ctx, emit, all, st.smp.Rules().Name)
}

// emitAll emits the records as four batches; the outputs say how the
// signal was sampled.
func (st *stage) emitAll(ctx context.Context, emit tracecast.Emit, r records, rules string) error {
	meta := map[string]string{"time_unit": st.unit, "period": strconv.FormatFloat(st.period, 'g', -1, 64), "rules": rules}
	for _, items := range []any{r.ws, r.ps, r.vs, r.as} {
		if err := emit(ctx, tracecast.Batch{Stream: st.trace, Items: items, Meta: meta}); err != nil {
			return err
		}
	}
	return nil
}

// flushCollected runs the prediction phase on the signal of every state
// kept.
func (st *stage) flushCollected(ctx context.Context, emit tracecast.Emit) error {
	sig, rules, period, unit, err := st.col.Build(st.env, st.o.Class, st.o.Period, st.o.MinPeriod, st.o.MaxSamples, st.o.TimeUnit)
	if err != nil {
		return err
	}
	m, _ := ks.ParseMethod(st.o.Method)
	var r records
	err = Run(sig, st.trace, period, tracecast.PerSecond(unit), Options{Window: st.o.Window, Queries: st.o.Queries,
		Method: m, Alpha: st.o.Alpha, IdleThreshold: st.o.IdleThreshold, RegimeMisses: st.o.RegimeMisses},
		Sink{Window: func(w tracecast.Window) { r.ws = append(r.ws, w) },
			Prediction: func(p tracecast.Prediction) { r.ps = append(r.ps, p) },
			Verdict:    func(v tracecast.Verdict) { r.vs = append(r.vs, v) },
			Alert:      func(a tracecast.Alert) { r.as = append(r.as, a) }})
	if err != nil {
		return err
	}
	st.period, st.unit = period, unit
	return st.emitAll(ctx, emit, r, rules.Name)
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
			st.lives[pq.Class].MergeRuns() // samples only
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
		if err := l.Err(); err != nil {
			return err
		}
		// R (and the queries' counts) is fixed once the first window is
		// final: the containers with a state in it. Counting at the first
		// sample instead would depend on how far the first batch reached.
		fix := l.T0() + float64(st.o.Window)*st.period
		if st.engines[c] != nil || !l.Started() || w < fix {
			continue
		}
		r := l.RBefore(fix)
		qs, err := classQueries(st.o.Queries, c, r)
		if err != nil {
			return err
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

// classQueries parses the queries for r resources and returns those of
// class c.
func classQueries(queries []string, c signal.Class, r int) ([]Query, error) {
	var qs []Query
	for _, q := range queries {
		pq, err := ParseQuery(q, r)
		if err != nil {
			return nil, err
		}
		if pq.Class == c {
			qs = append(qs, pq)
		}
	}
	return qs, nil
}
