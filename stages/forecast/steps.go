package forecast

import (
	"context"
	"fmt"
	"math"

	"github.com/tracecast/tracecast"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/stages/signal"
)

// StepsSink collects the step function of one class of a trace, in seconds,
// with the forecast stage's rules and semantics (a container counts from its
// first state): what Verify scores forecasts against, and what the
// predict command reads a trace's span from. It keeps every change: use it
// offline.
type StepsSink struct {
	rules, class, unit string
	workers            int
	outside            bool
	live               *signal.Live
	stateType          string
	perSec             float64
	steps              fc.Steps
	firstOnly          bool
	// With firstOnly, once the first instant has passed (done), the
	// batches only count containers new to live (extra) and the last
	// state end (end): sweeping every state through the signal for
	// nothing was a fifth of predict's first pass.
	done  bool
	extra map[string]bool
	end   float64
}

// FirstOnly makes the sink keep the first step and the end only: R, the
// start and the span, what the predict command needs from its first pass
// when it verifies nothing. The step function of a long run has millions
// of steps.
func (s *StepsSink) FirstOnly() *StepsSink {
	s.firstOnly = true
	return s
}

// NewStepsSink returns a collector for rules (auto, starpu, smpi), a class,
// a time unit ("" for the rules' default) and R (workers; 0: the trace's
// selected containers, all of them from the start, as the forecast
// definitions count them — see the stage's workers option).
func NewStepsSink(rules, class, unit string, workers int) *StepsSink {
	return &StepsSink{rules: rules, class: class, unit: unit, workers: workers, end: math.Inf(-1)}
}

// ForgetsItems: the sink copies what it keeps of an entity (the
// signal's spans), so the parser may fill the batch again.
func (s *StepsSink) ForgetsItems() bool { return true }

// Write takes a batch of entities.
func (s *StepsSink) Write(_ context.Context, b tracecast.Batch) error {
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return nil
	}
	if s.live == nil {
		name := DetectRules(s.rules, es)
		if name == "auto" {
			return nil
		}
		r := signal.Presets[name]()
		if err := r.Compile(); err != nil {
			return err
		}
		c, err := signal.ParseClass(s.class)
		if err != nil {
			return err
		}
		if s.unit == "" {
			s.unit = map[bool]string{true: "ms", false: "s"}[name == "starpu"]
		}
		s.live, s.stateType, s.perSec, s.outside = signal.NewLive(r, c, 0), r.StateType, tracecast.PerSecond(s.unit), c == r.Outside
		s.live.MergeRuns() // Steps.Add keeps the counts after each instant
	}
	if s.done {
		for i := range es {
			if e := &es[i]; e.Nature == tracecast.NatureState && e.Type == s.stateType {
				s.end = math.Max(s.end, e.End)
				if !s.live.Known(e.Container) && !s.extra[e.Container] {
					s.extra[e.Container] = true
				}
			}
		}
		return nil
	}
	s.live.Add(es)
	w := b.Watermark
	if tw, ok := b.TypeWatermarks[s.stateType]; ok {
		w = tw
	}
	if !math.IsNaN(w) {
		s.live.Changes(w, s.add)
	}
	return nil
}

func (s *StepsSink) add(t float64, x, r int) {
	t /= s.perSec
	n := len(s.steps.T)
	if n > 0 && t < s.steps.T[n-1] {
		t = s.steps.T[n-1] // late state: as the stage counts it
	}
	if s.firstOnly && n > 0 && t > s.steps.T[0] {
		if !s.done {
			s.done, s.extra = true, map[string]bool{}
		}
		return
	}
	s.steps.Add(t, x, r)
}

// Close sweeps what is left and counts every container from the start
// with R workers.
func (s *StepsSink) Close(context.Context) error {
	if s.live == nil {
		return nil
	}
	s.live.Changes(math.Inf(1), s.add)
	r := s.live.R() + len(s.extra)
	s.steps.End = math.Max(s.live.End(), s.end) / s.perSec
	w := s.workers
	if w == 0 {
		w = r
	}
	var fixed fc.Steps
	for i, t := range s.steps.T {
		x, r := withWorkers(s.steps.X[i], s.steps.R[i], w, s.outside)
		fixed.Add(t, x, r)
	}
	fixed.End, fixed.Selected = s.steps.End, r
	s.steps = fixed
	return nil
}

// Unit is the trace's time unit the sink reads it in ("" before the
// first state of the rules).
func (s *StepsSink) Unit() string {
	if s.live == nil {
		return ""
	}
	return s.unit
}

// Steps returns the step function (after Close); an error when the trace
// had no state of the rules.
func (s *StepsSink) Steps() (*fc.Steps, error) {
	if len(s.steps.T) == 0 {
		return nil, fmt.Errorf("no StarPU worker or SMPI rank states in this trace: nothing to forecast")
	}
	return &s.steps, nil
}
