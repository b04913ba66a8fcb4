package signal

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/tracecast/tracecast"
)

// The offline signal needs, before its first sample, what only the whole
// trace says: R (every selected container counts from t_0), and for seed
// 004's period the shortest time between two changes and the run's span.
// Keeping every state until the end (Builder) makes memory grow with the
// trace; instead a Survey reads a file once for those numbers, then a
// Sampler samples it while it is read again, from the parser's watermark:
// memory follows the watermark's lag and the containers, not the trace.
// Without a first pass (standard input, a tailed file, Kafka) the period
// must be given, and a Sampler fixes R when its first sample is due.

// Survey is the first pass over a trace: the numbers the offline signal
// (Builder, then Signal.Period) would compute, found from the parser's
// watermark without keeping the states.
type Survey struct {
	class Class
	cands []*surveyCand
}

// surveyCand surveys the trace under one rule set (auto tries two).
type surveyCand struct {
	rules      *Rules
	live       *Live
	outside    bool                // the class counted is the rules' Outside
	containers map[string]struct{} // selected: Container records and containers with states
	lastName   string              // the container of the previous state (most repeat it)
	w          float64             // the highest watermark swept to
	late       int
	// The offline count of the class is y = x − r when the class is
	// Outside (Live counts a container from its first state; offline from
	// t_0, in Outside). Changes at one instant are grouped: groupT, and y
	// before it; last is the previous instant y changed at.
	groupT     float64
	before, y  int
	last, best float64
}

// NewSurvey returns a survey for rules (starpu, smpi, or auto: the first of
// them that selects states) and the class whose period it computes.
func NewSurvey(rules string, class Class) (*Survey, error) {
	rs, err := compiledPresets(rules)
	if err != nil {
		return nil, err
	}
	s := &Survey{class: class}
	for _, r := range rs {
		live := NewLive(r, class, 0)
		live.MergeRuns() // the changes are grouped by instant (change)
		s.cands = append(s.cands, &surveyCand{rules: r, live: live, outside: class == r.Outside,
			containers: map[string]struct{}{}, w: math.Inf(-1), groupT: math.NaN(), last: math.NaN(), best: math.Inf(1)})
	}
	return s, nil
}

// StateWatermark is the watermark of a batch for the states of one type:
// its TypeWatermarks entry when there is one, else Watermark.
func StateWatermark(b tracecast.Batch, stateType string) float64 {
	if tw, ok := b.TypeWatermarks[stateType]; ok {
		return tw
	}
	return b.Watermark
}

// Add takes a batch of entities (other records are ignored).
func (s *Survey) Add(b tracecast.Batch) {
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return
	}
	for _, c := range s.cands {
		c.add(es, StateWatermark(b, c.rules.StateType))
	}
}

func (c *surveyCand) add(es []tracecast.Entity, w float64) {
	for i := range es {
		e := &es[i]
		switch {
		case e.Nature == tracecast.NatureState && e.Type == c.rules.StateType:
			if e.Container != c.lastName {
				c.containers[e.Container] = struct{}{}
				c.lastName = e.Container
			}
			if e.Start < c.w {
				c.late++
			}
		case e.Nature == tracecast.NatureContainer && e.Type == c.rules.ContainerType:
			c.containers[e.Value] = struct{}{}
		}
	}
	c.live.Add(es)
	if !math.IsNaN(w) {
		c.live.Changes(w, c.change)
		c.w = math.Max(c.w, w)
	}
}

func (c *surveyCand) change(t float64, x, r int) {
	if c.outside {
		x -= r
	}
	if t != c.groupT {
		c.endGroup()
		c.groupT, c.before = t, c.y
	}
	c.y = x
}

// endGroup ends the changes at groupT: as Signal.PaperPeriod, the instants
// after t_0 where the class count changed, and the shortest time between
// two of them.
func (c *surveyCand) endGroup() {
	if math.IsNaN(c.groupT) || c.groupT <= c.live.T0() || c.y == c.before {
		return
	}
	if !math.IsNaN(c.last) && c.groupT > c.last {
		c.best = math.Min(c.best, c.groupT-c.last)
	}
	c.last = c.groupT
}

// Summary is what a Survey found under the rules that select states.
type Summary struct {
	Rules *Rules
	// R is the number of selected containers (with or without states).
	R int
	// T0 is the first state start, End the last state end.
	T0, End float64
	// Late counts the states that arrived after the parser's watermark had
	// passed their start (a trace not sorted within the reorder horizon):
	// a Sampler cannot sample such a trace exactly.
	Late int
	// Pallipuram et al.'s (2014) period of the survey's class (PaperPeriod).
	paper   float64
	paperOK bool
	// containers are the R selected containers.
	containers map[string]struct{}
}

// Finish ends the survey. Its error, when no rule set selects a state, is
// Collector.Build's for the same trace, stream naming the trace.
func (s *Survey) Finish(stream string) (*Summary, error) {
	var firstErr error
	for _, c := range s.cands {
		c.live.Changes(math.Inf(1), c.change)
		c.endGroup()
		if !c.live.Started() {
			if firstErr == nil {
				firstErr = noStates(c.rules)
			}
			continue
		}
		sum := &Summary{Rules: c.rules, R: len(c.containers), T0: c.live.T0(), End: c.live.End(), Late: c.late, containers: c.containers}
		if !math.IsInf(c.best, 1) {
			sum.paper, sum.paperOK = c.best/2, true
		}
		return sum, nil
	}
	rules := make([]*Rules, len(s.cands))
	for i, c := range s.cands {
		rules[i] = c.rules
	}
	return nil, nothingToCount(stream, rules, firstErr)
}

// noStates is Builder.Build's error for rules that select no state.
func noStates(r *Rules) error {
	return fmt.Errorf("no %q states on %q containers in this trace (rules %s)", r.StateType, r.ContainerType, r.Name)
}

// nothingToCount is the error of a trace where no rule set selects a
// state: firstErr is the first rule set's.
func nothingToCount(stream string, rules []*Rules, firstErr error) error {
	return fmt.Errorf("%s: %w", stream, NothingToCount(rules, firstErr))
}

// NothingToCount is the error of a trace where none of rules (auto:
// StarPU's then SMPI's; or the one given) selects a state, firstErr the
// first rule set's (Builder.Build's): the same words from every command.
func NothingToCount(rules []*Rules, firstErr error) error {
	if len(rules) > 1 {
		return fmt.Errorf("neither StarPU worker states (%q on %q containers) nor SMPI rank states (%q on %q containers): nothing to count",
			rules[0].StateType, rules[0].ContainerType, rules[1].StateType, rules[1].ContainerType)
	}
	return firstErr
}

// Period is Signal.Period for the surveyed class.
func (s *Summary) Period(given, minPeriod float64, maxSamples int, unit string) (period float64, why string, err error) {
	return choosePeriod(s.T0, s.End, s.paper, s.paperOK, given, minPeriod, maxSamples, unit)
}

// Samples is the number of samples a period makes.
func (s *Summary) Samples(period float64) int { return samples(s.T0, s.End, period) }

// Sampler samples the signal of some classes while the trace is read, from
// the parser's watermark: each sample as soon as no state still to come
// can change it.
//
// After a Survey (NewSampler) the samples are exactly the offline signal's
// (Builder, Signal.Sample): R is the survey's, every container counts from
// t_0. Without one (NewOnlineSampler) R is fixed when the first sample is
// due, as the selected containers known then. Either way the states of
// containers not counted in R are left out (Dropped counts them: after a
// survey, the file changed in between), so that no sample exceeds R.
type Sampler struct {
	cands   []*Rules // auto: starpu, smpi, until a state says which
	rules   *Rules
	classes []Class
	period  float64
	given   tracecast.TraceTime // online: the period as given, until the rules tell the unit
	unit    string              // online: the trace's unit, when given
	lives   []*Live
	w       float64 // the highest watermark swept to
	late    int
	// online: R not fixed yet (sets: the selected containers per
	// candidate), then fixed (frozen: the containers counted).
	online   bool
	sets     []map[string]struct{}
	frozen   map[string]struct{}
	minStart float64
	dropped  int
	lastKept string             // a container counted (most states repeat it)
	keep     []tracecast.Entity // scratch: a batch without the dropped states
}

// NewSampler samples classes at period after a survey: exactly the offline
// signal, as long as Late stays 0.
func NewSampler(sum *Summary, classes []Class, period float64) *Sampler {
	s := &Sampler{rules: sum.Rules, classes: classes, period: period, w: math.Inf(-1), frozen: sum.containers}
	s.start()
	for _, l := range s.lives {
		l.FromStart(sum.R)
	}
	return s
}

// NewOnlineSampler samples classes at period without a survey; rules is
// starpu, smpi or auto (decided by the first state of either's type).
// period is converted to unit, or (unit "") to the rules' default unit.
func NewOnlineSampler(rules string, classes []Class, period tracecast.TraceTime, unit string) (*Sampler, error) {
	rs, err := compiledPresets(rules)
	if err != nil {
		return nil, err
	}
	s := &Sampler{classes: classes, given: period, unit: unit, w: math.Inf(-1), online: true, minStart: math.Inf(1)}
	for _, r := range rs {
		s.cands = append(s.cands, r)
		s.sets = append(s.sets, map[string]struct{}{})
	}
	if len(s.cands) == 1 {
		s.rules = s.cands[0]
		s.start()
	}
	return s, nil
}

func (s *Sampler) start() {
	if s.online { // the period in the trace's unit, which the rules tell
		s.period = s.given.In(cmp.Or(s.unit, DefaultUnit(s.rules)))
	}
	for _, c := range s.classes {
		l := NewLive(s.rules, c, s.period)
		l.MergeRuns() // samples only
		s.lives = append(s.lives, l)
	}
}

// Rules are the rules sampled (nil while auto has not decided).
func (s *Sampler) Rules() *Rules { return s.rules }

// Period is the sampling period, in the trace's unit (online: known once
// the rules are).
func (s *Sampler) Period() float64 { return s.period }

// Started reports whether R and t_0 are fixed (a sample is due or made).
func (s *Sampler) Started() bool { return len(s.lives) > 0 && s.lives[0].Started() }

// R is the number of containers counted (once Started).
func (s *Sampler) R() int {
	if len(s.lives) == 0 {
		return 0
	}
	return s.lives[0].R()
}

// T0 is the time of the first sample (once Started).
func (s *Sampler) T0() float64 { return s.lives[0].T0() }

// End is the last state end received.
func (s *Sampler) End() float64 {
	if len(s.lives) == 0 {
		return math.Inf(-1)
	}
	return s.lives[0].End()
}

// Late counts the states that arrived after the watermark had passed their
// start; Dropped the states of containers first seen after R was fixed
// (online only).
func (s *Sampler) Late() int    { return s.late }
func (s *Sampler) Dropped() int { return s.dropped }

// Add takes a batch of entities and calls fn with every sample it makes
// final, class by class (i indexes the classes), each class in order.
func (s *Sampler) Add(b tracecast.Batch, fn func(i, k int, t float64, x int)) {
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return
	}
	if s.online || s.frozen != nil {
		es = s.admit(es)
		if s.rules == nil {
			return
		}
	}
	w := StateWatermark(b, s.rules.StateType)
	for i := range es {
		if e := &es[i]; e.Nature == tracecast.NatureState && e.Type == s.rules.StateType && e.Start < s.w {
			s.late++
		}
	}
	if s.online && s.frozen == nil && !math.IsNaN(w) && w > s.minStart {
		s.freeze()
	}
	for i, l := range s.lives {
		l.Add(es)
		if !math.IsNaN(w) {
			l.Advance(w, func(k int, t float64, x int) { fn(i, k, t, x) })
		}
	}
	if !math.IsNaN(w) {
		s.w = math.Max(s.w, w)
	}
}

// Err is why sampling stopped, if it did (Live.Err).
func (s *Sampler) Err() error {
	for _, l := range s.lives {
		if err := l.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Finish samples up to the last state end.
func (s *Sampler) Finish(fn func(i, k int, t float64, x int)) {
	if s.rules == nil {
		return
	}
	if s.online && s.frozen == nil {
		s.freeze()
	}
	for i, l := range s.lives {
		l.Advance(math.Inf(1), func(k int, t float64, x int) { fn(i, k, t, x) })
	}
}

// admit decides the rules (auto) by the first state of either type, keeps
// the selected containers while R is open, and once it is fixed drops the
// states of containers not counted.
func (s *Sampler) admit(es []tracecast.Entity) []tracecast.Entity {
	if s.rules == nil {
	find:
		for i := range es {
			if es[i].Nature != tracecast.NatureState {
				continue
			}
			for j, r := range s.cands {
				if es[i].Type == r.StateType {
					s.rules, s.sets = r, s.sets[j:j+1]
					s.start()
					break find
				}
			}
		}
	}
	if s.frozen == nil {
		for j, r := range s.cands {
			if s.rules != nil && r != s.rules {
				continue
			}
			set := s.sets[0]
			if s.rules == nil {
				set = s.sets[j]
			}
			for i := range es {
				e := &es[i]
				switch {
				case e.Nature == tracecast.NatureState && e.Type == r.StateType:
					set[e.Container] = struct{}{}
					if s.rules == r {
						s.minStart = math.Min(s.minStart, e.Start)
					}
				case e.Nature == tracecast.NatureContainer && e.Type == r.ContainerType:
					set[e.Value] = struct{}{}
				}
			}
		}
		return es
	}
	drop := func(e *tracecast.Entity) bool {
		if e.Nature != tracecast.NatureState || e.Type != s.rules.StateType || e.Container == s.lastKept {
			return false
		}
		_, ok := s.frozen[e.Container]
		if ok {
			s.lastKept = e.Container // most states repeat the previous one's
		}
		return !ok
	}
	n := 0
	for i := range es {
		if drop(&es[i]) {
			n++
		}
	}
	if n == 0 {
		return es
	}
	s.dropped += n
	s.keep = s.keep[:0]
	for i := range es {
		if !drop(&es[i]) {
			s.keep = append(s.keep, es[i])
		}
	}
	return s.keep
}

// freeze fixes R: the containers known now count from t_0 on.
func (s *Sampler) freeze() {
	s.frozen = s.sets[0]
	for _, l := range s.lives {
		l.FromStart(len(s.frozen))
	}
}

// SurveySink is a Survey as a pipeline sink reading a parser's entities:
// one pass over a trace for what its signal will be (R, t_0, the end, the
// period), e.g. a command that needs R before the prediction phase.
type SurveySink struct {
	sv     *Survey
	stream string
	sum    *Summary
	err    error
}

// NewSurveySink returns a survey of one stream for rules (starpu, smpi,
// auto) and the class whose period it computes.
func NewSurveySink(rules string, class Class) (*SurveySink, error) {
	sv, err := NewSurvey(rules, class)
	if err != nil {
		return nil, err
	}
	return &SurveySink{sv: sv}, nil
}

// Write takes a batch of entities.
func (s *SurveySink) Write(_ context.Context, b tracecast.Batch) error {
	if s.stream == "" && b.Stream != "" {
		s.stream = b.Stream
	}
	s.sv.Add(b)
	return nil
}

// Close ends the survey.
func (s *SurveySink) Close(context.Context) error {
	if s.sum == nil && s.err == nil {
		s.sum, s.err = s.sv.Finish(s.stream)
	}
	return nil
}

// Summary is the survey's result (after Close), or why there is none.
func (s *SurveySink) Summary() (*Summary, error) {
	if s.sum == nil && s.err == nil {
		return nil, fmt.Errorf("%s: survey not closed", s.stream)
	}
	return s.sum, s.err
}
