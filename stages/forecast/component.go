// Package forecast is the "forecast" stage: idle-capacity forecasts over the
// consumers' horizons (package forecast's Engine), issued while the trace is
// read, from the parser's watermark, for files, tailed files and Kafka
// alike. It emits forecast records when they are issued (trace time t) and
// outcome records once their interval is over.
package forecast

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tracecast/tracecast"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/features"
	"github.com/tracecast/tracecast/stages/signal"
)

// Register registers the "forecast" stage.
func Register(r *component.Registry) {
	component.RegisterStage(r, "forecast", "idle-capacity forecasts over the consumers' horizons, and their outcomes", DefaultStageConfig, newStage)
}

// StageConfig are the options of a "forecast" stage (see tracecast predict).
type StageConfig struct {
	// Rules: auto, starpu or smpi (state classes and selected containers);
	// auto picks by the first state of either kind.
	Rules string `yaml:"rules"`
	// Queries are CLASS>=COUNT or CLASS>=PERCENT% (one class for all).
	Queries []string `yaml:"queries"`
	// Horizons are durations with a unit: 500us, 10ms, 2s.
	Horizons []string `yaml:"horizons"`
	// Every is the issue cadence (default: the shortest horizon / 10).
	Every string `yaml:"every"`
	// Method: auto, ks-paper, persistence, climatology, markov.
	Method string `yaml:"method"`
	// Coverage of the intervals [lo, hi] (default 0.9).
	Coverage float64 `yaml:"coverage"`
	// OpportunityThreshold opens an idle-opportunity episode when a
	// forecast's p reaches it (0: none).
	OpportunityThreshold float64 `yaml:"opportunity_threshold"`
	// RegimeAlpha is the regime-change test's false-alarm level (0: no
	// test), over windows of RegimeWindow (default: the longest horizon).
	RegimeAlpha  float64 `yaml:"regime_alpha"`
	RegimeWindow string  `yaml:"regime_window"`
	// SkillEvery is how often (trace time) the run's rolling scores are
	// published; always at the end.
	SkillEvery string `yaml:"skill_every"`
	// RunID names the run in every id (default: StreamRunID, from the
	// stream's path; docs/forecasts.md, Run ids).
	RunID string `yaml:"run_id"`
	// Workers is R, the number of selected containers, when known (a
	// scheduler knows its workers): the containers not seen yet count in
	// the rules' no-state class (idle for StarPU workers, compute for SMPI
	// ranks) from the start, as the forecast definitions say. 0: a
	// container counts from its first state, R grows as they appear.
	Workers int `yaml:"workers"`
	// TimeUnit of the trace: s, ms, us, ns (default ms for StarPU rules, s
	// otherwise).
	TimeUnit string `yaml:"time_unit"`
	// MaxStreams bounds the runs forecast at once (a Kafka source).
	MaxStreams int `yaml:"max_streams"`
	// Features: the auto method also reads the trace's context (ready
	// and submitted tasks, the kinds of idle, running tasks and their
	// expected remaining time, the application's phase; stages/features).
	// false: the occupancy only.
	Features bool `yaml:"features"`
	// FeatureMaxPending bounds the entities the feature feed holds until
	// the watermark passes them (0: features.DefaultMaxPending); past it
	// the features get staler, the forecasts go on.
	FeatureMaxPending int `yaml:"feature_max_pending"`
	// Explain: at the run's end, explanation records say what carried the
	// auto method's forecasts of each query and horizon (the experts'
	// weights, the features' permutation importance; docs/forecasts.md).
	Explain bool `yaml:"explain"`
}

// DefaultStageConfig are the defaults: the consumers' usual horizons.
func DefaultStageConfig() StageConfig {
	return StageConfig{Rules: "auto", Queries: []string{"idle>=25%"}, Horizons: []string{"10ms", "100ms", "1s"},
		Method: string(fc.Auto), Coverage: 0.9, OpportunityThreshold: 0.8, RegimeAlpha: 0.01, SkillEvery: "10s", MaxStreams: component.DefaultMaxStreams,
		Features: true}
}

// ParseDuration reads a duration with a unit (500us, 10ms, 2s) as seconds.
func ParseDuration(s string) (float64, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a positive duration with a unit (500us, 10ms, 2s)", s)
	}
	return d.Seconds(), nil
}

// engineConfig checks the options and returns the Engine's configuration
// (Run left empty).
func (o *StageConfig) engineConfig() (fc.Config, error) {
	var errs []error
	cfg := fc.Config{Method: fc.Method(o.Method), Coverage: o.Coverage, OpportunityThreshold: o.OpportunityThreshold, RegimeAlpha: o.RegimeAlpha}
	if o.SkillEvery != "" {
		s, err := ParseDuration(o.SkillEvery)
		if err != nil {
			errs = append(errs, fmt.Errorf("skill_every: %w", err))
		}
		cfg.SkillEvery = s
	}
	if o.RegimeWindow != "" {
		s, err := ParseDuration(o.RegimeWindow)
		if err != nil {
			errs = append(errs, fmt.Errorf("regime_window: %w", err))
		}
		cfg.RegimeWindow = s
	}
	if _, ok := signal.Presets[o.Rules]; !ok && o.Rules != "auto" {
		errs = append(errs, fmt.Errorf("rules: %q is not auto, starpu or smpi", o.Rules))
	}
	for _, q := range o.Queries {
		pq, err := fc.ParseQuery(q)
		if err != nil {
			errs = append(errs, fmt.Errorf("queries: %w", err))
			continue
		}
		if _, err := signal.ParseClass(pq.Class); err != nil {
			errs = append(errs, fmt.Errorf("queries: %q: %w", q, err))
			continue
		}
		if cfg.Class != "" && pq.Class != cfg.Class {
			errs = append(errs, fmt.Errorf("queries: %q: one class per stage (%s already)", q, cfg.Class))
			continue
		}
		cfg.Class = pq.Class
		cfg.Queries = append(cfg.Queries, pq)
	}
	for _, h := range o.Horizons {
		s, err := ParseDuration(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("horizons: %w", err))
			continue
		}
		cfg.Horizons = append(cfg.Horizons, s)
	}
	if o.Every != "" {
		s, err := ParseDuration(o.Every)
		if err != nil {
			errs = append(errs, fmt.Errorf("every: %w", err))
		}
		cfg.Every = s
	} else if len(cfg.Horizons) > 0 {
		cfg.Every = slices.Min(cfg.Horizons) / 10
	}
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); o.TimeUnit != "" && !ok {
		errs = append(errs, fmt.Errorf("time_unit: %q is not one of s, ms, us, ns", o.TimeUnit))
	}
	// The engine reads a zero coverage as its default (for the callers
	// that set none); an option set to 0 is an error, as --alpha 0 is.
	if !(o.Coverage > 0 && o.Coverage < 1) {
		errs = append(errs, fmt.Errorf("coverage: %g must be in (0, 1)", o.Coverage))
	}
	if o.Workers < 0 {
		errs = append(errs, fmt.Errorf("workers: %d is negative", o.Workers))
	}
	if o.MaxStreams < 0 {
		errs = append(errs, fmt.Errorf("max_streams: %d is negative", o.MaxStreams))
	}
	if o.FeatureMaxPending < 0 {
		errs = append(errs, fmt.Errorf("feature_max_pending: %d is negative", o.FeatureMaxPending))
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, err
	}
	if _, err := fc.New(cfg, fc.Sink{}); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// Validate checks the options.
func (o *StageConfig) Validate() error {
	_, err := o.engineConfig()
	return err
}

func newStage(env component.Env, o StageConfig) (tracecast.Processor, error) {
	cfg, err := o.engineConfig()
	if err != nil {
		return nil, err
	}
	ps := &perStream{}
	ps.PerStream = component.NewPerStream(o.MaxStreams, func(string) (tracecast.Processor, error) {
		return &stage{o: o, cfg: cfg, env: env, skill: map[string]tracecast.Skill{}, files: ps.files}, nil
	}).LogTo(env.Logger)
	return ps, nil
}

// perStream is the stage's PerStream, told by the runtime whether its
// streams are whole files (component.FirstPasser): a file's run is named
// by RunIDOf, as the predict command names it.
type perStream struct {
	*component.PerStream
	files bool
}

// ForgetsItems: the stage copies what it keeps of an entity (the signal's
// spans, the feed's items), so the parser may fill the batch again
// (tracecast.Batch.Recycle): a fresh batch for every 4096 entities was
// two fifths of predict's allocations.
func (ps *perStream) ForgetsItems() bool { return true }

// FirstPass records whether the input can be read again from its start (a
// regular file, read whole); the stage needs no first pass.
func (ps *perStream) FirstPass(rereadable bool) (tracecast.Processor, error) {
	ps.files = rereadable
	return nil, nil
}

// stage forecasts one run (stream).
type stage struct {
	o     StageConfig
	cfg   fc.Config
	env   component.Env
	rules *signal.Rules
	live  *signal.Live
	eng   *fc.Engine
	// feed is the trace's context for the auto method (nil: none).
	feed   *features.Feed
	perSec float64
	// outside: the class counted is the rules' no-state class.
	outside bool
	stream  string
	last    float64 // time of the last change given to the engine
	swept   float64 // the last finite watermark swept (trace units)
	late    int     // changes before it (beyond the parser's reorder horizon)
	// skill is the last rolling score per query and horizon (metrics), of
	// the run run.
	skill map[string]tracecast.Skill
	run   string
	// endedBy is how the run ended (tracecast.StreamEnd.EndedBy), when
	// told before Flush (EndReason); "": its own end.
	endedBy string
	// files: the stream is a regular file, read whole (its name its path).
	files bool
	out   struct {
		fs []tracecast.Forecast
		os []tracecast.Outcome
		es []tracecast.Episode
		ks []tracecast.Skill
		xs []tracecast.Explanation
	}
	// ctx and emitFn are Process's or Flush's while the engine runs:
	// records go out once spillAt of them are held (spill), and err is
	// the first error doing so.
	ctx    context.Context
	emitFn tracecast.Emit
	err    error
}

// spillAt bounds the records the stage holds: one input batch can make any
// number of them (a batch spans seconds of trace time; a forecast is issued
// every `every`), so they leave in batches of this size as they come.
const spillAt = 4096

// spill emits what is held once it reaches spillAt records.
func (st *stage) spill() {
	if st.err != nil || st.emitFn == nil || len(st.out.fs)+len(st.out.os)+len(st.out.es)+len(st.out.ks) < spillAt {
		return
	}
	st.err = st.emit(st.ctx, st.emitFn)
}

// running runs f with the engine's records going to emit, spilled as they
// come, then emits the rest.
func (st *stage) running(ctx context.Context, emit tracecast.Emit, f func()) error {
	st.ctx, st.emitFn = ctx, emit
	f()
	st.ctx, st.emitFn = nil, nil
	if st.err != nil {
		return st.err
	}
	return st.emit(ctx, emit)
}

// RunID is the default run id of a stream: its last two path elements
// (StarPU names every trace paje.trace; the directory names the run).
func RunID(stream string) string {
	clean := filepath.ToSlash(filepath.Clean(stream))
	parts := strings.Split(strings.TrimSuffix(clean, ".gz"), "/")
	if n := len(parts); n >= 2 && parts[n-2] != "." && parts[n-2] != ".." {
		return parts[n-2] + "/" + parts[n-1]
	}
	return parts[len(parts)-1]
}

// DetectRules resolves "auto" by the first state of StarPU's or SMPI's state
// type in es ("auto" while neither came).
func DetectRules(name string, es []tracecast.Entity) string {
	if name != "auto" {
		return name
	}
	for i := range es {
		if es[i].Nature != tracecast.NatureState {
			continue
		}
		for _, n := range []string{"starpu", "smpi"} {
			if es[i].Type == signal.Presets[n]().StateType {
				return n
			}
		}
	}
	return "auto"
}

// start picks the rules (auto: by the first state of StarPU's or SMPI's
// state type) and builds the engine.
func (st *stage) start(stream string, es []tracecast.Entity) error {
	name := DetectRules(st.o.Rules, es)
	if name == "auto" {
		return nil // not yet known
	}
	r := signal.Presets[name]()
	if err := r.Compile(); err != nil {
		return err
	}
	unit := st.o.TimeUnit
	if unit == "" {
		unit = map[bool]string{true: "ms", false: "s"}[name == "starpu"]
	}
	class, _ := signal.ParseClass(st.cfg.Class)
	cfg := st.cfg
	cfg.Run = st.o.RunID
	if cfg.Run == "" {
		cfg.Run = StreamRunID(stream, st.files)
	}
	sink := fc.Sink{
		Forecast: func(f tracecast.Forecast) { st.out.fs = append(st.out.fs, f); st.spill() },
		Outcome:  func(o tracecast.Outcome) { st.out.os = append(st.out.os, o); st.spill() },
		Episode:  func(e tracecast.Episode) { st.out.es = append(st.out.es, e); st.spill() },
		Skill: func(k tracecast.Skill) {
			st.out.ks = append(st.out.ks, k)
			st.skill[k.Query+" "+fc.HorizonLabel(k.Horizon)] = k
			st.spill()
		}}
	if st.o.Explain {
		sink.Explain = func(x tracecast.Explanation) { st.out.xs = append(st.out.xs, x) }
	}
	eng, err := fc.New(cfg, sink)
	if err != nil {
		return err
	}
	st.rules, st.live, st.eng, st.perSec, st.last = r, signal.NewLive(r, class, 0), eng, tracecast.PerSecond(unit), math.Inf(-1)
	if st.o.Features && cfg.Method == fc.Auto {
		st.feed = features.New(r, class, st.perSec, features.Limits{MaxPending: st.o.FeatureMaxPending})
		eng.SetContext(st.feed.Context)
	}
	st.run = cfg.Run
	st.outside = class == r.Outside
	st.env.Logger.Debug().Str("run", cfg.Run).Str("rules", name).Str("unit", unit).Msg("forecast")
	return nil
}

func (st *stage) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	es, ok := in.Items.([]tracecast.Entity)
	if !ok {
		return nil
	}
	if st.eng == nil {
		st.stream = in.Stream
		if err := st.start(in.Stream, es); err != nil || st.eng == nil {
			return err
		}
	}
	w := in.Watermark
	if tw, ok := in.TypeWatermarks[st.rules.StateType]; ok {
		w = tw
		if st.feed != nil {
			// The feed reads the task counts and the application
			// thread's states too: the counts wait for the slowest of
			// those types, so that both are swept to one instant
			// whatever the batches (a type not listed has nothing
			// open: nothing of it can start before tw).
			w = features.Watermark(in, tw)
		}
	}
	st.live.Add(es)
	if st.feed != nil {
		st.feed.Add(es)
	}
	return st.running(ctx, emit, func() {
		if !math.IsNaN(w) {
			st.sweep(w)
		}
	})
}

// sweep gives the engine the changes before w (trace units), and the
// feed's events before w in time order with them.
func (st *stage) sweep(w float64) {
	if !math.IsInf(w, 0) {
		st.swept = w
	}
	if st.feed == nil {
		st.live.Changes(w, st.change)
		return
	}
	st.feed.Sweep(w)
	st.live.Changes(w, func(t float64, x, r int) {
		st.feed.ApplyThrough(t/st.perSec, st.eng.Advance)
		st.change(t, x, r)
	})
	st.feed.ApplyAll(st.eng.Advance)
}

func (st *stage) change(t float64, x, r int) {
	if st.err != nil {
		return // the run is failing or cancelled: stop feeding the engine
	}
	t /= st.perSec
	if t < st.last { // a state older than the watermark promised
		st.late++
		t = st.last
	}
	st.last = t
	x, r = withWorkers(x, r, st.o.Workers, st.outside)
	st.eng.Change(t, x, r)
}

// withWorkers counts the w − r containers not seen yet in the rules'
// no-state class (outside: it is the class counted) when R = w is known.
func withWorkers(x, r, w int, outside bool) (int, int) {
	if w <= r {
		return x, r
	}
	if outside {
		x += w - r
	}
	return x, w
}

var _ tracecast.EndReasoner = (*stage)(nil)

// EndReason records how the run ended, for its last skill records: Flush
// follows (tracecast.EndReasoner).
func (st *stage) EndReason(end tracecast.StreamEnd) { st.endedBy = end.EndedBy() }

// Flush ends the run: its last forecasts, outcomes and episodes, and its
// last skill records, which say how it ended (EndReason; the end of a file
// or of the input without it: tracecast.EndMarker).
// flushSlices is how many slices Flush sweeps the held tail in.
var flushSlices = 32 // a variable for TestFlushSlices

func (st *stage) Flush(ctx context.Context, emit tracecast.Emit) error {
	if st.eng == nil {
		return nil
	}
	how := st.endedBy
	if how == "" {
		how = tracecast.EndMarker
	}
	// What the watermark held back is swept in slices up to the latest
	// time seen, each slice's forecasts emitted before the next: one
	// sweep of it all grew the feed's queues and the output to the whole
	// tail (on the 41 MB StarPU trace, where states open early end with
	// the run, 245 k events: 46% of predict's page faults). The records
	// are the same whatever the sweeps (they are the batches' own).
	if hi := st.live.End(); hi > st.swept {
		lo := st.swept
		for k := 1; k < flushSlices; k++ {
			w := lo + (hi-lo)*float64(k)/float64(flushSlices)
			if err := st.running(ctx, emit, func() { st.sweep(w) }); err != nil {
				return err
			}
		}
	}
	err := st.running(ctx, emit, func() {
		st.sweep(math.Inf(1))
		st.eng.FinishBy(math.Max(st.live.End()/st.perSec, st.last), how)
	})
	if st.feed != nil && st.feed.Dropped() > 0 {
		st.env.Logger.Warn().Int("entities", st.feed.Dropped()).Int("feature_max_pending", st.o.FeatureMaxPending).
			Msg("forecast: the feature feed held its limit of entities behind the watermark and dropped the rest (raise feature_max_pending): the context features were staler")
	}
	if st.late > 0 {
		st.env.Logger.Warn().Int("changes", st.late).Msg("forecast: states arrived after the parser's watermark (raise the reorder horizon or sort the trace); counted at the latest time seen")
	}
	return err
}

func (st *stage) emit(ctx context.Context, emit tracecast.Emit) error {
	if len(st.out.fs) > 0 {
		if err := emit(ctx, tracecast.Batch{Stream: st.stream, Items: st.out.fs}); err != nil {
			return err
		}
	}
	if len(st.out.os) > 0 {
		if err := emit(ctx, tracecast.Batch{Stream: st.stream, Items: st.out.os}); err != nil {
			return err
		}
	}
	if len(st.out.es) > 0 {
		if err := emit(ctx, tracecast.Batch{Stream: st.stream, Items: st.out.es}); err != nil {
			return err
		}
	}
	if len(st.out.ks) > 0 {
		if err := emit(ctx, tracecast.Batch{Stream: st.stream, Items: st.out.ks}); err != nil {
			return err
		}
	}
	if len(st.out.xs) > 0 {
		if err := emit(ctx, tracecast.Batch{Stream: st.stream, Items: st.out.xs}); err != nil {
			return err
		}
	}
	// Downstream may keep the batches: start new slices.
	st.out.fs, st.out.os, st.out.es, st.out.ks, st.out.xs = nil, nil, nil, nil, nil
	return nil
}

// StreamRunID is the run id of a stream when no run_id is given: RunIDOf
// its path when file is set (the stream is a regular file read whole, as
// predict reads it: both name a file's run alike); else, or when the
// stream's name is not a file's path, RunID of its name (a Kafka key, a
// tailed file, whose first MiB is not yet written when the run starts).
func StreamRunID(stream string, file bool) string {
	if file {
		if id, err := RunIDOf(stream); err == nil {
			return id
		}
	}
	return RunID(stream)
}

// RunIDOf names the run of a trace file: RunID of its path (StarPU calls
// every trace paje.trace; the directory names the run) without .trace, a
// dash and a hash of its absolute path and first MiB (8 hex digits of their
// SHA-256), so two runs never share ids; "stdin" for -. It is the run id
// of predict and of a pipeline's forecast stage reading a file.
func RunIDOf(path string) (string, error) {
	if path == "-" {
		return "stdin", nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	h := sha256.New()
	h.Write([]byte(abs))
	h.Write([]byte{0})
	if _, err := io.CopyN(h, in, 1<<20); err != nil && err != io.EOF {
		return "", err
	}
	return strings.TrimSuffix(RunID(path), ".trace") + "-" + hex.EncodeToString(h.Sum(nil))[:8], nil
}

// DefaultHorizons labels fc.DefaultHorizons.
func DefaultHorizons(span float64) []string {
	var hs []string
	for _, h := range fc.DefaultHorizons(span) {
		hs = append(hs, fc.HorizonLabel(h))
	}
	return hs
}

// Metrics reports the run's last rolling skill per query and horizon
// against each baseline, and the interval coverage, labelled with the run
// (component.PerStream keeps them once the run ended, for a bounded number
// of runs).
func (st *stage) Metrics(add func(component.Metric)) {
	keys := make([]string, 0, len(st.skill))
	for key := range st.skill {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		k := st.skill[key]
		h := fc.HorizonLabel(k.Horizon)
		for _, b := range []struct {
			name string
			v    float64
		}{{"ks-paper", k.SkillKSPaper}, {"persistence", k.SkillPersistence}, {"climatology", k.SkillClimatology}} {
			if !math.IsNaN(b.v) {
				add(component.Metric{Name: "forecast_skill", Help: "a run's last rolling skill score of the forecasts (1 − MSE/MSE of the baseline)",
					Labels: []string{"run", st.run, "query", k.Query, "horizon", h, "baseline", b.name}, Value: b.v})
			}
		}
		add(component.Metric{Name: "forecast_coverage", Help: "a run's last share of outcomes inside the forecasts' intervals",
			Labels: []string{"run", st.run, "query", k.Query, "horizon", h}, Value: k.Coverage})
	}
}
