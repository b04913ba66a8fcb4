package backfill

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tracecast/tracecast"
	bf "github.com/tracecast/tracecast/backfill"
	"github.com/tracecast/tracecast/pipelines/component"
	fstage "github.com/tracecast/tracecast/stages/forecast"
	"github.com/tracecast/tracecast/stages/signal"
)

// Register registers the "backfill" stage.
func Register(r *component.Registry) {
	component.RegisterStage(r, "backfill", "idle-spell forecasts, and back-end tasks put on idle workers by the causal policies", DefaultStageConfig, newStage)
}

// StageConfig are the options of a "backfill" stage (see tracecast backfill).
type StageConfig struct {
	// Rules: auto, starpu or smpi.
	Rules string `yaml:"rules"`
	// Tasks are the back-end task lengths, durations with a unit.
	Tasks []string `yaml:"tasks"`
	// Overhead is the tasks' set-up cost (a duration; "" for none).
	Overhead string `yaml:"overhead"`
	// Mode: kill or wait.
	Mode string `yaml:"mode"`
	// Gang K ≥ 2: a task needs K idle workers at once.
	Gang int `yaml:"gang"`
	// Alphas are the costs of waste or delay the α policies decide for.
	Alphas []float64 `yaml:"alphas"`
	// Policies: the causal ones (never, greedy, timeout, online-timeout,
	// residual, forecast); default forecast.
	Policies []string `yaml:"policies"`
	// Timeouts are the timeout policy's τ.
	Timeouts []string `yaml:"timeouts"`
	// Spells are the lengths d of the spell forecasts (tracecast.spell/1)
	// issued at each idle start and every `every` while idle.
	Spells []string `yaml:"spells"`
	// Every is the spell forecasts' cadence (default: a quarter of the
	// shortest task or spell length).
	Every string `yaml:"every"`
	// Plans: publish the forecast policy's plans (tracecast.plan/1), what
	// a scheduler acting on them needs (default true).
	Plans bool `yaml:"plans"`
	// RunID names the run (default: as the forecast stage names it).
	RunID string `yaml:"run_id"`
	// Workers names the selected containers when known in advance (a
	// scheduler knows its workers): each counts from the run's first state
	// on, in the rules' no-state class until its own (idle for StarPU
	// workers), as backfill counts them on a file. None: a worker counts
	// from its first state.
	Workers []string `yaml:"workers"`
	// TimeUnit of the trace: s, ms, us, ns (default ms for StarPU rules).
	TimeUnit string `yaml:"time_unit"`
	// MaxStreams bounds the runs followed at once (a Kafka source).
	MaxStreams int `yaml:"max_streams"`
}

// DefaultStageConfig are the defaults: a 10 ms task in wait mode at α = 10,
// decided by the forecast policy; spell forecasts for 1, 10 and 100 ms.
func DefaultStageConfig() StageConfig {
	return StageConfig{Rules: "auto", Tasks: []string{"10ms"}, Mode: string(bf.Wait), Alphas: []float64{10},
		Policies: []string{bf.Forecast}, Spells: []string{"1ms", "10ms", "100ms"}, Plans: true, MaxStreams: component.DefaultMaxStreams}
}

// config checks the options and returns the engine's configuration (Run
// left empty).
func (o *StageConfig) config() (bf.Config, error) {
	var errs []error
	durs := func(what string, ss []string) []float64 {
		var v []float64
		for _, s := range ss {
			d, err := fstage.ParseDuration(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", what, err))
			}
			v = append(v, d)
		}
		return v
	}
	cfg := bf.Config{Tasks: durs("tasks", o.Tasks), Mode: bf.Mode(o.Mode), Gang: o.Gang, Alphas: o.Alphas, Policies: o.Policies,
		Timeouts: durs("timeouts", o.Timeouts), SpellLengths: durs("spells", o.Spells)}
	if o.Overhead != "" {
		cfg.Overhead = durs("overhead", []string{o.Overhead})[0]
	}
	if o.Every != "" {
		cfg.Every = durs("every", []string{o.Every})[0]
	}
	if _, ok := signal.Presets[o.Rules]; !ok && o.Rules != "auto" {
		errs = append(errs, fmt.Errorf("rules: %q is not auto, starpu or smpi", o.Rules))
	}
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); o.TimeUnit != "" && !ok {
		errs = append(errs, fmt.Errorf("time_unit: %q is not one of s, ms, us, ns", o.TimeUnit))
	}
	if o.MaxStreams < 0 {
		errs = append(errs, fmt.Errorf("max_streams: %d is negative", o.MaxStreams))
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, err
	}
	if _, err := bf.New(cfg, bf.Sink{}); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// Validate checks the options.
func (o *StageConfig) Validate() error {
	_, err := o.config()
	return err
}

func newStage(env component.Env, o StageConfig) (tracecast.Processor, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	ps := &perStream{}
	ps.PerStream = component.NewPerStream(o.MaxStreams, func(stream string) (tracecast.Processor, error) {
		st := &stage{stream: stream}
		c := cfg
		c.Run = o.RunID
		if c.Run == "" {
			c.Run = fstage.StreamRunID(stream, ps.files)
		}
		sink := bf.Sink{
			Decision: func(d tracecast.Decision) { st.ds = append(st.ds, d) },
			Spell:    func(s tracecast.SpellForecast) { st.ss = append(st.ss, s) }}
		if o.Plans {
			sink.Plan = func(p tracecast.Plan) { st.ps = append(st.ps, p) }
		}
		eng, err := bf.New(c, sink)
		if err != nil {
			return nil, err
		}
		var survey *Survey
		if len(o.Workers) > 0 {
			survey = &Survey{Workers: slices.Sorted(slices.Values(o.Workers)), T0: math.NaN()}
		}
		st.eng, st.feed = eng, NewFeed(eng, o.Rules, o.TimeUnit, survey)
		return st, nil
	}).LogTo(env.Logger)
	return ps, nil
}

// perStream is the stage's PerStream, told whether its streams are whole
// files (a file's run is named as predict names it).
type perStream struct {
	*component.PerStream
	files bool
}

// FirstPass records whether the input can be read again from its start.
func (ps *perStream) FirstPass(rereadable bool) (tracecast.Processor, error) {
	ps.files = rereadable
	return nil, nil
}

// stage follows one run: a worker counts from its first state (a stream
// read once cannot know the workers that have not started yet), or from
// the run's first state when the workers are named (workers).
type stage struct {
	stream string
	eng    *bf.Engine
	feed   *Feed
	ds     []tracecast.Decision
	ss     []tracecast.SpellForecast
	ps     []tracecast.Plan
}

func (st *stage) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	if err := st.feed.Write(ctx, in); err != nil {
		return err
	}
	return st.emit(ctx, emit)
}

// Flush ends the run at its workers' last state end.
func (st *stage) Flush(ctx context.Context, emit tracecast.Emit) error {
	if err := st.feed.Close(ctx); err != nil {
		return err
	}
	if end := st.feed.End(); !math.IsNaN(end) {
		st.eng.Finish(end)
	}
	return st.emit(ctx, emit)
}

func (st *stage) emit(ctx context.Context, emit tracecast.Emit) error {
	if len(st.ss) > 0 {
		if err := emit(ctx, tracecast.Batch{Stream: st.stream, Items: st.ss}); err != nil {
			return err
		}
	}
	if len(st.ps) > 0 {
		if err := emit(ctx, tracecast.Batch{Stream: st.stream, Items: st.ps}); err != nil {
			return err
		}
	}
	if len(st.ds) > 0 {
		if err := emit(ctx, tracecast.Batch{Stream: st.stream, Items: st.ds}); err != nil {
			return err
		}
	}
	st.ds, st.ss, st.ps = nil, nil, nil // downstream may keep the batches
	return nil
}
