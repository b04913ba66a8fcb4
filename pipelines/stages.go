package pipelines

import (
	"context"
	"errors"
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/stages/ks"
	"github.com/tracecast/tracecast/stages/predict"
	"github.com/tracecast/tracecast/stages/signal"
)

// PredictOptions are the options of a "predict" stage: seed 004's
// prediction phase on the entities of one trace (see tracecast predict).
type PredictOptions struct {
	// Rules: auto, starpu or smpi (state classes and selected containers).
	Rules string `yaml:"rules"`
	// Class is the class whose signal fixes the period (default idle).
	Class string `yaml:"class"`
	// Period is Δ in trace units; 0 is seed 004's rule with the floors.
	Period     float64 `yaml:"period"`
	MinPeriod  float64 `yaml:"min_period"`
	MaxSamples int     `yaml:"max_samples"`
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
}

// DefaultPredictOptions are the command's defaults.
func DefaultPredictOptions() PredictOptions {
	return PredictOptions{Rules: "auto", Class: "idle", MaxSamples: 10_000_000, Queries: []string{"idle>=25%"},
		Method: "matlab", Alpha: 0.05, IdleThreshold: 0.8, RegimeMisses: 3}
}

// Validate checks the options.
func (o *PredictOptions) Validate() error {
	var errs []error
	if o.Window <= 0 {
		errs = append(errs, errors.New("window: required, a positive number of samples"))
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
		if _, err := predict.ParseQuery(q, 1<<30); err != nil {
			errs = append(errs, fmt.Errorf("queries: %w", err))
		}
	}
	if _, ok := timeUnits[o.TimeUnit]; o.TimeUnit != "" && !ok {
		errs = append(errs, fmt.Errorf("time_unit: %q is not one of s, ms, us, ns", o.TimeUnit))
	}
	return errors.Join(errs...)
}

// predictStage collects the selected states of its input (a signal needs
// all of them to choose its period) and, at the end of input, runs the
// prediction phase, emitting windows, predictions, verdicts and alerts as
// four batches. A live, incremental version needs a given period and the
// parser's watermark.
type predictStage struct {
	o        PredictOptions
	rules    []*signal.Rules
	builders []*signal.Builder
	stream   string
	env      Env
}

func newPredictStage(env Env, o PredictOptions) (tracecast.Processor, error) {
	st := &predictStage{o: o, env: env}
	names := []string{o.Rules}
	if o.Rules == "auto" {
		names = []string{"starpu", "smpi"}
	}
	for _, n := range names {
		r := signal.Presets[n]()
		if err := r.Compile(); err != nil {
			return nil, err
		}
		st.rules = append(st.rules, r)
		st.builders = append(st.builders, signal.NewBuilder(r))
	}
	return st, nil
}

func (st *predictStage) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	es, ok := in.Items.([]tracecast.Entity)
	if !ok {
		return nil // other records pass by
	}
	if st.stream == "" {
		st.stream = in.Stream
	}
	for _, b := range st.builders {
		b.Add(es)
	}
	return nil
}

func (st *predictStage) Flush(ctx context.Context, emit tracecast.Emit) error {
	var sig *signal.Signal
	var rules *signal.Rules
	var firstErr error
	for i, b := range st.builders {
		s, err := b.Build()
		if err == nil {
			sig, rules = s, st.rules[i]
			break
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if sig == nil {
		return firstErr
	}
	class, _ := signal.ParseClass(st.o.Class)
	period, why, err := sig.Period(class, st.o.Period, st.o.MinPeriod, st.o.MaxSamples)
	if err != nil {
		return err
	}
	unit := st.o.TimeUnit
	if unit == "" {
		unit = "s"
		if rules.Name == "starpu" {
			unit = "ms"
		}
	}
	trace := st.o.Trace
	if trace == "" {
		trace = predict.TraceID(st.stream)
	}
	st.env.Logger.Info().Str("rules", rules.Name).Int("containers", sig.R).Float64("period", period).Str("why", why).
		Int("samples", sig.Samples(period)).Msg("signal")
	m, _ := ks.ParseMethod(st.o.Method)
	var ws []tracecast.Window
	var ps []tracecast.Prediction
	var vs []tracecast.Verdict
	var as []tracecast.Alert
	err = predict.Run(sig, trace, period, timeUnits[unit], predict.Options{Window: st.o.Window, Queries: st.o.Queries,
		Method: m, Alpha: st.o.Alpha, IdleThreshold: st.o.IdleThreshold, RegimeMisses: st.o.RegimeMisses},
		predict.Sink{Window: func(w tracecast.Window) { ws = append(ws, w) },
			Prediction: func(p tracecast.Prediction) { ps = append(ps, p) },
			Verdict:    func(v tracecast.Verdict) { vs = append(vs, v) },
			Alert:      func(a tracecast.Alert) { as = append(as, a) }})
	if err != nil {
		return err
	}
	for _, items := range []any{ws, ps, vs, as} {
		if err := emit(ctx, tracecast.Batch{Stream: trace, Items: items}); err != nil {
			return err
		}
	}
	return nil
}
