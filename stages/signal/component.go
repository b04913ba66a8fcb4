package signal

import (
	"context"
	"errors"
	"fmt"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
	"strconv"
)

// Register registers the "signal" stage.
func Register(r *component.Registry) {
	component.RegisterStage(r, "signal", "the sampled occurrence signal of a class (how many workers are idle, ...)", DefaultStageConfig, newStage)
}

// Collector gathers the selected states of a stage's input: a signal
// needs all of them to choose its period, so the signal and offline predict
// stages work at the end of input (the live predict stage is the
// incremental version, for a given period).
type Collector struct {
	rules    []*Rules
	builders []*Builder
	stream   string
}

// NewCollector returns a collector for rules: starpu, smpi, or auto (the
// first of them that selects states).
func NewCollector(rules string) (*Collector, error) {
	c := &Collector{}
	names := []string{rules}
	if rules == "auto" {
		names = []string{"starpu", "smpi"}
	}
	for _, n := range names {
		r := Presets[n]()
		if err := r.Compile(); err != nil {
			return nil, err
		}
		c.rules = append(c.rules, r)
		c.builders = append(c.builders, NewBuilder(r))
	}
	return c, nil
}

// Process adds a batch's entities; other records pass by.
func (c *Collector) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	es, ok := in.Items.([]tracecast.Entity)
	if !ok {
		return nil // other records pass by
	}
	if c.stream == "" {
		c.stream = in.Stream
	}
	for _, b := range c.builders {
		b.Add(es)
	}
	return nil
}

// Stream is the stream (trace) the collector read.
func (c *Collector) Stream() string { return c.stream }

// Build returns the signal of the first rules that select something, its
// period for class, and the trace's time unit.
//
// given and minPeriod are in the trace's unit (plain numbers) or durations,
// converted to the unit: given unit, or the rules' (ms for StarPU, s for
// SMPI) when it is empty.
func (c *Collector) Build(env component.Env, className string, given, minPeriod tracecast.TraceTime, maxSamples int, unit string) (*Signal, *Rules, float64, string, error) {
	var firstErr error
	for i, b := range c.builders {
		sig, err := b.Build()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		class, _ := ParseClass(className)
		if unit == "" {
			unit = "s"
			if c.rules[i].Name == "starpu" {
				unit = "ms"
			}
		}
		period, why, err := sig.Period(class, given.In(unit), minPeriod.In(unit), maxSamples)
		if err != nil {
			return nil, nil, 0, "", err
		}
		env.Logger.Info().Str("trace", c.stream).Str("rules", c.rules[i].Name).Int("containers", sig.R).Str("class", class.String()).
			Float64("period", period).Str("why", why).Str("unit", unit).Int("samples", sig.Samples(period)).
			Float64("t0", sig.T0()).Float64("end", sig.End).Msg("signal")
		return sig, c.rules[i], period, unit, nil
	}
	if len(c.rules) > 1 {
		return nil, nil, 0, "", fmt.Errorf("%s: neither StarPU worker states (%q on %q containers) nor SMPI rank states (%q on %q containers): nothing to count",
			c.stream, c.rules[0].StateType, c.rules[0].ContainerType, c.rules[1].StateType, c.rules[1].ContainerType)
	}
	return nil, nil, 0, "", fmt.Errorf("%s: %w", c.stream, firstErr)
}

// Meta describes a signal for the sinks (Batch.Meta): class, period, R,
// rules, t0 and time unit, so that an output file is self-describing.
func Meta(sig *Signal, rules *Rules, class Class, period float64, unit string) map[string]string {
	return map[string]string{"class": class.String(), "period": strconv.FormatFloat(period, 'g', -1, 64),
		"r": strconv.Itoa(sig.R), "time_unit": unit, "rules": rules.Name, "t0": strconv.FormatFloat(sig.T0(), 'g', -1, 64)}
}

// StageConfig are the options of a "signal" stage: the sampled occurrence
// signal (see tracecast signal), as []tracecast.Sample batches.
type StageConfig struct {
	Rules string `yaml:"rules"`
	Class string `yaml:"class"`
	// Period and MinPeriod are durations with a unit (1ms) or plain
	// numbers in the trace's unit.
	Period     tracecast.TraceTime `yaml:"period"`
	MinPeriod  tracecast.TraceTime `yaml:"min_period"`
	MaxSamples int                 `yaml:"max_samples"`
}

// DefaultStageConfig are the command's defaults.
func DefaultStageConfig() StageConfig {
	return StageConfig{Rules: "auto", Class: "idle", MaxSamples: 10_000_000}
}

// Validate checks the options.
func (o *StageConfig) Validate() error {
	var errs []error
	if _, ok := Presets[o.Rules]; !ok && o.Rules != "auto" {
		errs = append(errs, fmt.Errorf("rules: %q is not auto, starpu or smpi", o.Rules))
	}
	if _, err := ParseClass(o.Class); err != nil {
		errs = append(errs, fmt.Errorf("class: %w", err))
	}
	if o.MaxSamples <= 0 {
		errs = append(errs, fmt.Errorf("max_samples: must be positive (got %d)", o.MaxSamples))
	}
	return errors.Join(errs...)
}

type stage struct {
	*Collector
	o   StageConfig
	env component.Env
}

func newStage(env component.Env, o StageConfig) (tracecast.Processor, error) {
	one := func(string) (tracecast.Processor, error) {
		c, err := NewCollector(o.Rules)
		if err != nil {
			return nil, err
		}
		return &stage{Collector: c, o: o, env: env}, nil
	}
	if _, err := one(""); err != nil {
		return nil, err
	}
	return component.NewPerStream(0, one).LogTo(env.Logger), nil
}

func (st *stage) Flush(ctx context.Context, emit tracecast.Emit) error {
	sig, rules, period, unit, err := st.Build(st.env, st.o.Class, st.o.Period, st.o.MinPeriod, st.o.MaxSamples, "")
	if err != nil {
		return err
	}
	class, _ := ParseClass(st.o.Class)
	meta := Meta(sig, rules, class, period, unit) // on the first batch
	batch := make([]tracecast.Sample, 0, 8192)
	var emitErr error
	sig.Sample(class, period, func(k int, t float64, x int) {
		if emitErr != nil {
			return
		}
		batch = append(batch, tracecast.Sample{K: int64(k), T: t, X: int32(x)})
		if len(batch) == cap(batch) {
			emitErr = emit(ctx, tracecast.Batch{Stream: st.Stream(), Items: batch, Meta: meta})
			batch, meta = make([]tracecast.Sample, 0, 8192), nil // downstream may keep the last one
		}
	})
	if emitErr == nil && len(batch) > 0 {
		emitErr = emit(ctx, tracecast.Batch{Stream: st.Stream(), Items: batch, Meta: meta})
	}
	return emitErr
}
