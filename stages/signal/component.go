package signal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
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
	rs, err := compiledPresets(rules)
	if err != nil {
		return nil, err
	}
	c := &Collector{rules: rs}
	for _, r := range rs {
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
		period, why, err := sig.Period(class, given.In(unit), minPeriod.In(unit), maxSamples, unit)
		if err != nil {
			return nil, nil, 0, "", err
		}
		logSignal(env.Logger, c.stream, c.rules[i], sig.R, class, period, why, unit, sig.Samples(period), sig.T0(), sig.End)
		return sig, c.rules[i], period, unit, nil
	}
	return nil, nil, 0, "", nothingToCount(c.stream, c.rules, firstErr)
}

// Meta describes a signal for the sinks (Batch.Meta): class, period, R,
// rules, t0 and time unit, so that an output file is self-describing.
func Meta(sig *Signal, rules *Rules, class Class, period float64, unit string) map[string]string {
	return metaOf(class, period, sig.R, unit, rules, sig.T0())
}

func metaOf(class Class, period float64, r int, unit string, rules *Rules, t0 float64) map[string]string {
	return map[string]string{"class": class.String(), "period": strconv.FormatFloat(period, 'g', -1, 64),
		"r": strconv.Itoa(r), "time_unit": unit, "rules": rules.Name, "t0": strconv.FormatFloat(t0, 'g', -1, 64)}
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
	errs = append(errs, CheckPeriods(o.Period, o.MinPeriod)...)
	return errors.Join(errs...)
}

// CheckPeriods checks a stage's period and min_period: 0 is the automatic
// period (Pallipuram et al.'s (2014) rule) and no floor; a negative one is an error, never
// "automatic".
func CheckPeriods(period, minPeriod tracecast.TraceTime) []error {
	var errs []error
	if period.Sign() < 0 {
		errs = append(errs, fmt.Errorf("period: %s: must be positive (0: automatic)", period))
	}
	if minPeriod.Sign() < 0 {
		errs = append(errs, fmt.Errorf("min_period: %s: must be positive (0: no floor)", minPeriod))
	}
	return errs
}

// stage is the signal of one stream. With a first pass (a file) it samples
// while the trace is read the second time, exactly as the offline signal;
// without one (standard input, a tail, Kafka: the period is required) it
// samples online, R fixed at the first sample. A runtime that never offers
// a first pass gets the collector: every state kept until the end.
type stage struct {
	o      StageConfig
	env    component.Env
	class  Class
	sum    *Summary   // the first pass's, for exact sampling
	smp    *Sampler   // nil with the collector
	col    *Collector // nil with a sampler
	stream string
	unit   string
	period float64
	meta   map[string]string // for the next batch emitted (the first)
	batch  []tracecast.Sample
	// ctx and emit of the call in progress, for the sampler's callback.
	ctx  context.Context
	emit tracecast.Emit
	err  error
}

// Pass says how a stream's signal is made.
type Pass int

const (
	// Collected: the runtime offered no first pass; the states are kept
	// until the end (Collector).
	Collected Pass = iota
	// Surveyed: a first pass read the stream (its Summary); a Sampler
	// makes the offline signal exactly while the stream is read again.
	Surveyed
	// Online: the stream is read once (standard input, a tail, Kafka); the
	// period is given and an online Sampler fixes R at the first sample.
	Online
)

// TwoPass is a stage's PerStream with the first pass of its streams
// (component.FirstPasser): a survey of each, by stream name, which is the
// same in both passes.
type TwoPass struct {
	*component.PerStream
	rules    string
	class    Class
	period   tracecast.TraceTime
	offered  bool // FirstPass was called
	surveyed bool // and the input is read twice
	sums     map[string]*Summary
}

// NewTwoPass returns the PerStream of a stage that samples the signal of
// rules (starpu, smpi, auto), surveyed for class, at period (0: the
// automatic period, which needs a first pass). one makes a stream's
// processor, told how its signal is made (sum is the survey's when pass is
// Surveyed); at most maxStreams at once (component.PerStream).
func NewTwoPass(rules string, class Class, period tracecast.TraceTime, maxStreams int, log zerolog.Logger, one func(stream string, pass Pass, sum *Summary) (tracecast.Processor, error)) *TwoPass {
	tp := &TwoPass{rules: rules, class: class, period: period, sums: map[string]*Summary{}}
	tp.PerStream = component.NewPerStream(maxStreams, func(stream string) (tracecast.Processor, error) {
		switch sum := tp.sums[stream]; {
		case !tp.offered:
			return one(stream, Collected, nil)
		case !tp.surveyed:
			return one(stream, Online, nil)
		case sum == nil:
			return nil, fmt.Errorf("%s: not read in the first pass", stream)
		default:
			return one(stream, Surveyed, sum)
		}
	}).LogTo(log)
	return tp
}

// FirstPass surveys each stream (component.FirstPasser). Without a first
// pass the period must be given.
func (tp *TwoPass) FirstPass(rereadable bool) (tracecast.Processor, error) {
	tp.offered = true
	if !rereadable {
		if tp.period.Sign() <= 0 {
			return nil, ErrNeedsPeriod
		}
		return nil, nil
	}
	tp.surveyed = true
	return NewSurveys(tp.rules, tp.class, func(stream string, s *Summary) { tp.sums[stream] = s }), nil
}

// ErrNeedsPeriod: no first pass, no automatic period.
var ErrNeedsPeriod = errors.New("period: required when the trace cannot be read twice (standard input, a tailed file, Kafka): the automatic period (half the shortest time between two changes of the signal) needs the whole trace; give one (--period), or a file")

// LateWarning logs that a stream's states arrive after the parser's
// watermark, so that it is sampled from every state kept (a Collector).
func LateWarning(log zerolog.Logger, stream string, sum *Summary) {
	log.Warn().Str("trace", stream).Int("late_states", sum.Late).
		Msg("states arrive after the parser's watermark (the trace is not sorted within the reorder horizon): the whole signal is kept in memory; sort the trace or raise the reorder horizon")
}

// NewSurveys is a first-pass processor that surveys each stream of its
// input (entities) and hands the summary to done when the stream ends.
func NewSurveys(rules string, class Class, done func(stream string, s *Summary)) tracecast.Processor {
	return component.NewPerStream(0, func(stream string) (tracecast.Processor, error) {
		sv, err := NewSurvey(rules, class)
		if err != nil {
			return nil, err
		}
		return &surveyProc{sv: sv, stream: stream, done: done}, nil
	})
}

type surveyProc struct {
	sv     *Survey
	stream string
	done   func(string, *Summary)
}

func (p *surveyProc) Process(_ context.Context, in tracecast.Batch, _ tracecast.Emit) error {
	p.sv.Add(in)
	return nil
}

func (p *surveyProc) Flush(context.Context, tracecast.Emit) error {
	sum, err := p.sv.Finish(p.stream)
	if err != nil {
		return err
	}
	p.done(p.stream, sum)
	return nil
}

func newStage(env component.Env, o StageConfig) (tracecast.Processor, error) {
	class, err := ParseClass(o.Class)
	if err != nil {
		return nil, err
	}
	if _, err := NewCollector(o.Rules); err != nil { // bad rules, before anything runs
		return nil, err
	}
	return NewTwoPass(o.Rules, class, o.Period, 0, env.Logger, func(stream string, pass Pass, sum *Summary) (tracecast.Processor, error) {
		st := &stage{o: o, env: env, class: class, stream: stream}
		if pass == Surveyed && sum.Late > 0 {
			// The parser's watermark does not hold for this trace.
			LateWarning(env.Logger, stream, sum)
			pass, o.Rules = Collected, sum.Rules.Name
		}
		switch pass {
		case Collected:
			c, err := NewCollector(o.Rules)
			if err != nil {
				return nil, err
			}
			st.col = c
		case Surveyed:
			u := DefaultUnit(sum.Rules)
			period, why, err := sum.Period(o.Period.In(u), o.MinPeriod.In(u), o.MaxSamples, u)
			if err != nil {
				return nil, err
			}
			st.sum, st.period = sum, period
			st.unit = DefaultUnit(sum.Rules)
			st.smp = NewSampler(sum, []Class{class}, period)
			st.meta = metaOf(class, period, sum.R, st.unit, sum.Rules, sum.T0)
			sum.Log(env.Logger, stream, class, period, why, st.unit)
		default:
			smp, err := NewOnlineSampler(o.Rules, []Class{class}, o.Period, "")
			if err != nil {
				return nil, err
			}
			st.smp = smp // its period is known with its rules
		}
		return st, nil
	}), nil
}

// DefaultUnit is the time unit of a trace the rules select: milliseconds
// for StarPU, seconds otherwise.
func DefaultUnit(r *Rules) string {
	if r.Name == "starpu" {
		return "ms"
	}
	return "s"
}

// Log says which period the signal of a surveyed trace is sampled at, as
// Collector.Build does.
func (s *Summary) Log(log zerolog.Logger, stream string, class Class, period float64, why, unit string) {
	logSignal(log, stream, s.Rules, s.R, class, period, why, unit, s.Samples(period), s.T0, s.End)
}

func logSignal(log zerolog.Logger, stream string, r *Rules, n int, class Class, period float64, why, unit string, samples int, t0, end float64) {
	ev := log.Info().Str("trace", stream).Str("rules", r.Name).Int("containers", n).Str("class", class.String()).
		Float64("period", period).Str("why", why).Str("unit", unit)
	if samples >= 0 { // known once the end is (after a first pass)
		ev = ev.Int("samples", samples)
	}
	ev = ev.Float64("t0", t0)
	if !math.IsInf(end, 0) {
		ev = ev.Float64("end", end)
	}
	ev.Msg("signal")
}

func (st *stage) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	if st.col != nil {
		return st.col.Process(ctx, in, emit)
	}
	st.ctx, st.emit = ctx, emit
	st.smp.Add(in, st.sample)
	if st.err == nil {
		st.err = st.smp.Err()
	}
	return st.err
}

// sample takes the sampler's next sample; full batches go downstream.
func (st *stage) sample(_, k int, t float64, x int) {
	if st.err != nil {
		return
	}
	if st.meta == nil && k == 0 { // online: R and t_0 are fixed now
		st.unit, st.period = DefaultUnit(st.smp.Rules()), st.smp.Period()
		st.meta = metaOf(st.class, st.period, st.smp.R(), st.unit, st.smp.Rules(), st.smp.T0())
		logSignal(st.env.Logger, st.stream, st.smp.Rules(), st.smp.R(), st.class, st.period, "given", st.unit, -1, st.smp.T0(), math.Inf(1))
	}
	if st.batch == nil {
		st.batch = make([]tracecast.Sample, 0, sampleBatch)
	}
	st.batch = append(st.batch, tracecast.Sample{K: int64(k), T: t, X: int32(x)})
	if len(st.batch) == cap(st.batch) {
		st.err = st.send()
	}
}

// sampleBatch is the number of samples per batch.
const sampleBatch = 8192

// send emits the batch (with the metadata the first time) and starts a new
// one: downstream may keep the last.
func (st *stage) send() error {
	err := st.emit(st.ctx, tracecast.Batch{Stream: st.stream, Items: st.batch, Meta: st.meta})
	st.batch, st.meta = nil, nil
	return err
}

func (st *stage) Flush(ctx context.Context, emit tracecast.Emit) error {
	if st.col != nil {
		return st.flushCollected(ctx, emit)
	}
	st.ctx, st.emit = ctx, emit
	st.smp.Finish(st.sample)
	if st.err == nil {
		st.err = st.smp.Err()
	}
	if st.err == nil && len(st.batch) > 0 {
		st.err = st.send()
	}
	if st.err == nil && st.smp.Rules() == nil {
		st.err = nothingToCount(st.stream, st.smp.cands, noStates(st.smp.cands[0]))
	}
	if n := st.smp.Late(); n > 0 && st.err == nil {
		if st.sum != nil {
			// The first pass saw none: the input changed in between.
			st.err = fmt.Errorf("%s: %d states arrived after the parser's watermark on the second pass, none on the first: the trace changed while it was read", st.stream, n)
		} else {
			st.env.Logger.Warn().Str("trace", st.stream).Int("late_states", n).Msg("states arrived after the parser's watermark (the trace is not sorted within the reorder horizon): the signal around them is approximate")
		}
	}
	if n := st.smp.Dropped(); n > 0 && st.sum != nil && st.err == nil {
		st.err = fmt.Errorf("%s: %d states of containers the first pass did not see: the trace changed while it was read", st.stream, n)
	} else if n > 0 {
		st.env.Logger.Warn().Str("trace", st.stream).Int("states", n).Int("containers", st.smp.R()).
			Msg("states of containers first seen after the signal started are left out (R is fixed at the first sample when the trace is read once)")
	}
	return st.err
}

// flushCollected is the signal from every state kept (no first pass).
func (st *stage) flushCollected(ctx context.Context, emit tracecast.Emit) error {
	c := st.col
	sig, rules, period, unit, err := c.Build(st.env, st.o.Class, st.o.Period, st.o.MinPeriod, st.o.MaxSamples, "")
	if err != nil {
		return err
	}
	meta := Meta(sig, rules, st.class, period, unit) // on the first batch
	batch := make([]tracecast.Sample, 0, sampleBatch)
	var emitErr error
	sig.Sample(st.class, period, func(k int, t float64, x int) {
		if emitErr != nil {
			return
		}
		batch = append(batch, tracecast.Sample{K: int64(k), T: t, X: int32(x)})
		if len(batch) == cap(batch) {
			emitErr = emit(ctx, tracecast.Batch{Stream: c.Stream(), Items: batch, Meta: meta})
			batch, meta = make([]tracecast.Sample, 0, sampleBatch), nil // downstream may keep the last one
		}
	})
	if emitErr == nil && len(batch) > 0 {
		emitErr = emit(ctx, tracecast.Batch{Stream: c.Stream(), Items: batch, Meta: meta})
	}
	return emitErr
}
