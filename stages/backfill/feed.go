// Package backfill feeds a trace's entities to the backfill engine (package
// backfill): the selected workers' class changes, in time order up to the
// parser's watermark, with the trace's ready-task counts, whichever way the
// trace is read (a file offline, a tailed file or Kafka live). Survey is the
// first pass over a file: the workers and the run's start, so that every
// worker counts from the run's start as forecasts count them.
package backfill

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/tracecast/tracecast"
	bf "github.com/tracecast/tracecast/backfill"
	fstage "github.com/tracecast/tracecast/stages/forecast"
	"github.com/tracecast/tracecast/stages/signal"
)

// ReadyVariable and SubmittedVariable are StarPU's variables of the
// scheduler's ready tasks and of the tasks submitted and not completed.
const (
	ReadyVariable     = "Number of Ready Tasks"
	SubmittedVariable = "Number of Submitted Uncompleted Tasks"
)

// rulesFor resolves auto (or "") by the first state of StarPU's or SMPI's
// type, as the forecast stage does.
func rulesFor(name string, es []tracecast.Entity) string {
	if name == "" {
		name = "auto"
	}
	return fstage.DetectRules(name, es)
}

// defaultUnit is the time unit of a rule set's traces.
func defaultUnit(rules string) string {
	if rules == "starpu" {
		return "ms"
	}
	return "s"
}

// Survey is the first pass over a file: the selected workers, the first
// state start among them and the last state end (seconds).
type Survey struct {
	Rules, Unit string
	Workers     []string
	T0, End     float64
	seen        map[string]bool
	stateType   string
}

// NewSurvey returns a first pass for rules (auto, starpu, smpi) and a time
// unit ("" for the rules' own).
func NewSurvey(rules, unit string) *Survey {
	return &Survey{Rules: rules, Unit: unit, seen: map[string]bool{}, T0: math.Inf(1), End: math.Inf(-1)}
}

// Write takes a batch of entities.
func (s *Survey) Write(_ context.Context, b tracecast.Batch) error {
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return nil
	}
	if s.stateType == "" {
		if s.Rules = rulesFor(s.Rules, es); s.Rules == "auto" {
			return nil
		}
		s.stateType = signal.Presets[s.Rules]().StateType
		if s.Unit == "" {
			s.Unit = defaultUnit(s.Rules)
		}
	}
	per := tracecast.PerSecond(s.Unit)
	for i := range es {
		e := &es[i]
		if e.Nature != tracecast.NatureState || e.Type != s.stateType {
			continue
		}
		if !s.seen[e.Container] {
			s.seen[e.Container] = true
			s.Workers = append(s.Workers, e.Container)
		}
		s.T0, s.End = math.Min(s.T0, e.Start/per), math.Max(s.End, e.End/per)
	}
	return nil
}

// Close sorts the workers; an error when there were none.
func (s *Survey) Close(context.Context) error {
	slices.Sort(s.Workers)
	return nil
}

// Err says why the trace cannot be backfilled (no worker state).
func (s *Survey) Err() error {
	if len(s.Workers) == 0 {
		return fmt.Errorf("no StarPU worker or SMPI rank states in this trace: nothing to backfill")
	}
	return nil
}

// Feed drives an engine from entity batches.
type Feed struct {
	eng       *bf.Engine
	rules     *signal.Rules
	name      string
	unit      string
	perSec    float64
	live      *signal.Live
	outside   bool // the no-state class is idle
	survey    *Survey
	vars      []varChange // ready-count changes not yet applied (by start)
	last      float64
	begun     bool
	stateType string
}

type varChange struct {
	t         float64
	n         int
	submitted bool // SubmittedVariable, else ReadyVariable
}

// NewFeed returns a feed for rules (auto, starpu, smpi) and a time unit
// ("" for the rules' own). With a survey (a file's first pass) every
// surveyed worker counts from the run's start; a survey whose T0 is NaN
// (workers named in advance, on a stream read once) starts the run at the
// first state.
func NewFeed(eng *bf.Engine, rules, unit string, survey *Survey) *Feed {
	return &Feed{eng: eng, name: rules, unit: unit, survey: survey, last: math.Inf(-1)}
}

func (f *Feed) start(es []tracecast.Entity) error {
	name := rulesFor(f.name, es)
	if name == "auto" {
		return nil
	}
	r := signal.Presets[name]()
	if err := r.Compile(); err != nil {
		return err
	}
	if f.unit == "" {
		f.unit = defaultUnit(name)
	}
	f.rules, f.perSec, f.stateType = r, tracecast.PerSecond(f.unit), r.StateType
	f.live = signal.NewLive(r, signal.Idle, 0)
	f.live.KeepValues() // the busy spells' forecasts read the state a spell begins in
	f.outside = r.Outside == signal.Idle
	if f.survey != nil && len(f.survey.Workers) > 0 && !math.IsNaN(f.survey.T0) {
		f.eng.Begin(f.survey.T0, f.survey.Workers, f.outside)
		f.begun = true
	}
	return nil
}

// Write takes a batch of entities.
func (f *Feed) Write(_ context.Context, b tracecast.Batch) error {
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return nil
	}
	if f.live == nil {
		if err := f.start(es); err != nil || f.live == nil {
			return err
		}
	}
	f.live.Add(es)
	for i := range es {
		e := &es[i]
		if e.Nature == tracecast.NatureVariable && (e.Type == ReadyVariable || e.Type == SubmittedVariable) {
			f.vars = append(f.vars, varChange{e.Start, int(e.Number), e.Type == SubmittedVariable})
		}
	}
	if w := f.watermark(b); !math.IsNaN(w) {
		f.sweep(w)
	}
	return nil
}

// watermark is the instant before which the feed has all it reads: the
// workers' states (their type's watermark) and the task counts' changes
// (their pieces' starts: a count is given at its own time). Not the
// batch's Watermark: one variable set once, of any type, held it back to
// its time, and the feed kept every state of the run (41 MB StarPU trace:
// 128 MiB, ten times that trace: 591 MiB).
func (f *Feed) watermark(b tracecast.Batch) float64 {
	w, ok := b.TypeWatermarks[f.stateType]
	if !ok {
		return b.Watermark
	}
	for _, ty := range []string{ReadyVariable, SubmittedVariable} {
		if s, ok := b.VariableStarts[ty]; ok {
			w = min(w, s)
		}
	}
	return w
}

// sweep gives the engine every change before w, in time order.
func (f *Feed) sweep(w float64) {
	slices.SortStableFunc(f.vars, func(a, b varChange) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	// A ready count is given before the first worker change at or after
	// its time: none after the last (the run ends with its workers' last
	// state, whatever its variables do after).
	vi := 0
	f.live.ContainerChanges(w, func(c signal.ContainerChange) {
		if !f.begun && f.survey != nil && len(f.survey.Workers) > 0 {
			// Workers named in advance, the run's start not known: it
			// is the first state's.
			f.eng.Begin(f.time(c.T), f.survey.Workers, f.outside)
			f.begun = true
		}
		for vi < len(f.vars) && f.vars[vi].t <= c.T {
			if v := f.vars[vi]; v.submitted {
				f.eng.Submitted(f.time(v.t), v.n)
			} else {
				f.eng.Ready(f.time(v.t), v.n)
			}
			vi++
		}
		if c.First && f.begun {
			return // counted from the run's start already
		}
		f.eng.ChangeState(f.time(c.T), c.Container, c.Class == signal.Idle, c.Value)
	})
	f.vars = append(f.vars[:0], f.vars[vi:]...)
}

// time converts a trace time to seconds, never before the last one given
// (a state behind the watermark counts at the latest time seen).
func (f *Feed) time(t float64) float64 {
	t /= f.perSec
	if t < f.last {
		t = f.last
	}
	f.last = t
	return t
}

// Close sweeps what is left and ends the run at the last state end.
func (f *Feed) Close(context.Context) error {
	if f.live == nil {
		return nil
	}
	f.sweep(math.Inf(1))
	return nil
}

// End is the run's end in seconds: the last state end of the selected
// workers (after Close).
func (f *Feed) End() float64 {
	if f.live == nil {
		return math.NaN()
	}
	return f.live.End() / f.perSec
}
