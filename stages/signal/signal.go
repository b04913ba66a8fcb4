package signal

import (
	"fmt"
	"math"
	"sort"

	"github.com/tracecast/tracecast"
)

// span is one state of a selected container, classified.
type span struct {
	start, end float64
	imb        int32
	class      Class
	// value is the state's value's index in Live.names (KeepValues; 0:
	// not kept or past the limit): it fits in the struct's padding.
	value uint16
}

// Builder collects the states of the selected containers and builds the
// step function of the class counts. It keeps 24 bytes per selected state
// (the signal needs every change; the trace itself is not kept), one for
// consecutive states of a container in one class at one level.
type Builder struct {
	rules      *Rules
	spans      map[string][]span
	containers map[string]bool // selected containers seen as Container records
}

// NewBuilder returns a builder for compiled rules.
func NewBuilder(r *Rules) *Builder {
	return &Builder{rules: r, spans: make(map[string][]span), containers: make(map[string]bool)}
}

// Add takes a batch of entities; it keeps what the rules select.
func (b *Builder) Add(es []tracecast.Entity) {
	for i := range es {
		e := &es[i]
		switch {
		case e.Nature == tracecast.NatureState && e.Type == b.rules.StateType:
			sp := span{start: e.Start, end: e.End, imb: int32(e.Imbrication), class: b.rules.Classify(e.Value)}
			ss := b.spans[e.Container]
			if n := len(ss); n > 0 && ss[n-1].extends(sp) {
				ss[n-1].end = sp.end // the same changes (span.extends)
				continue
			}
			b.spans[e.Container] = append(ss, sp)
		case e.Nature == tracecast.NatureContainer && e.Type == b.rules.ContainerType:
			b.containers[e.Value] = true
		}
	}
}

// Step is the class counts from time T on (until the next step).
type Step struct {
	T     float64
	Count [NumClasses]int32
}

// Signal is the piecewise-constant occurrence signal of every class.
type Signal struct {
	// R is the number of selected containers.
	R int
	// Steps start at T0 (the first state start) and change at every
	// instant where a container changes class.
	Steps []Step
	// End is the last state end among the selected containers.
	End float64
	// Containers are the selected containers, sorted.
	Containers []string
}

type change struct {
	t    float64
	from Class
	to   Class
	// value is the innermost state's value after the change (Live.names).
	value uint16
	// c is the container's index in Live.order during a sweep.
	c int32
}

// Build computes the signal. It fails when no state of the rules' type was
// seen (wrong rules for this trace).
func (b *Builder) Build() (*Signal, error) {
	if len(b.spans) == 0 {
		return nil, fmt.Errorf("no %q states on %q containers in this trace (rules %s)", b.rules.StateType, b.rules.ContainerType, b.rules.Name)
	}
	names := make([]string, 0, len(b.containers))
	for n := range b.containers {
		names = append(names, n)
	}
	for n := range b.spans {
		if !b.containers[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var all []change
	t0, end := math.Inf(1), math.Inf(-1)
	for _, n := range b.spans {
		for _, s := range n {
			t0 = math.Min(t0, s.start)
			end = math.Max(end, s.end)
		}
	}
	for _, name := range names {
		all = containerChanges(b.spans[name], b.rules.Outside, all)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].t < all[j].t })
	sig := &Signal{R: len(names), End: end, Containers: names}
	var cur [NumClasses]int32
	cur[b.rules.Outside] = int32(len(names))
	i := 0
	apply := func() {
		cur[all[i].from]--
		cur[all[i].to]++
		i++
	}
	for i < len(all) && all[i].t <= t0 {
		apply()
	}
	sig.Steps = append(sig.Steps, Step{T: t0, Count: cur})
	for i < len(all) {
		t := all[i].t
		for i < len(all) && all[i].t == t {
			apply()
		}
		if cur != sig.Steps[len(sig.Steps)-1].Count { // changes that cancel out make no step
			sig.Steps = append(sig.Steps, Step{T: t, Count: cur})
		}
	}
	return sig, nil
}

// containerChanges appends the class changes of one container: at every
// instant the innermost open state decides, Outside when none is open.
func containerChanges(spans []span, outside Class, out []change) []change {
	sort.SliceStable(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].imb < spans[j].imb
	})
	var stack []span
	cur := outside
	set := func(t float64, c Class) {
		if c != cur {
			out = append(out, change{t: t, from: cur, to: c})
			cur = c
		}
	}
	top := func() Class {
		if len(stack) == 0 {
			return outside
		}
		return stack[len(stack)-1].class
	}
	closeUntil := func(t float64) {
		for len(stack) > 0 && stack[len(stack)-1].end <= t {
			e := stack[len(stack)-1].end
			stack = stack[:len(stack)-1]
			set(e, top())
		}
	}
	for _, s := range spans {
		closeUntil(s.start)
		// A state at a lower or equal level replaces the ones above it
		// (a SetState resets the stack).
		for len(stack) > 0 && stack[len(stack)-1].imb >= s.imb {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, s)
		set(s.start, s.class)
	}
	closeUntil(math.Inf(1))
	return out
}

// At returns the counts at time t (the step holding at t).
func (s *Signal) At(t float64) [NumClasses]int32 {
	i := sort.Search(len(s.Steps), func(i int) bool { return s.Steps[i].T > t }) - 1
	if i < 0 {
		i = 0
	}
	return s.Steps[i].Count
}

// T0 is the first state start.
func (s *Signal) T0() float64 { return s.Steps[0].T }

// PaperPeriod is Pallipuram et al.'s (2014) sampling period for class c: half the shortest
// time between two successive changes of x (its Nyquist rate). ok is false
// when x never changes.
func (s *Signal) PaperPeriod(c Class) (period float64, ok bool) {
	last := math.NaN()
	prev := s.Steps[0].Count[c]
	best := math.Inf(1)
	for _, st := range s.Steps[1:] {
		if st.Count[c] == prev {
			continue
		}
		prev = st.Count[c]
		if !math.IsNaN(last) && st.T > last {
			best = math.Min(best, st.T-last)
		}
		last = st.T
	}
	if math.IsInf(best, 1) {
		return 0, false
	}
	return best / 2, true
}

// Sample calls fn with x_k for class c at t_k = T0 + kΔ, for every t_k before
// End, in order, and returns the number of samples. It walks the steps once:
// O(samples + steps), nothing allocated.
func (s *Signal) Sample(c Class, period float64, fn func(k int, t float64, x int)) int {
	t0 := s.T0()
	j := 0
	k := 0
	for ; ; k++ {
		t := t0 + float64(k)*period
		if t >= s.End {
			break
		}
		for j+1 < len(s.Steps) && s.Steps[j+1].T <= t {
			j++
		}
		fn(k, t, int(s.Steps[j].Count[c]))
	}
	return k
}

// Samples is the number of samples a period makes.
func (s *Signal) Samples(period float64) int { return samples(s.T0(), s.End, period) }

func samples(t0, end, period float64) int {
	if period <= 0 || end <= t0 {
		return 0
	}
	// Saturated: converting a float64 beyond the int range is undefined
	// (amd64 gives a negative count, which passed the max-samples check
	// and made the sampler run for ever).
	n := math.Ceil((end - t0) / period)
	if n >= math.MaxInt {
		return math.MaxInt
	}
	return int(n)
}

// Period chooses the sampling period for class c: given when positive,
// otherwise Pallipuram et al.'s (2014) rule raised to minPeriod and to the period that makes
// maxSamples samples. why says which, for the log. unit is the trace's
// time unit, for the messages.
func (s *Signal) Period(c Class, given, minPeriod float64, maxSamples int, unit string) (period float64, why string, err error) {
	p, ok := s.PaperPeriod(c)
	return choosePeriod(s.T0(), s.End, p, ok, given, minPeriod, maxSamples, unit)
}

// choosePeriod is Period from the signal's span and Pallipuram et al.'s (2014) period
// (paper, ok as PaperPeriod returns them): the offline signal and a Survey
// choose alike.
func choosePeriod(t0, end, p float64, ok bool, given, minPeriod float64, maxSamples int, unit string) (period float64, why string, err error) {
	span := end - t0
	if given > 0 {
		if n := samples(t0, end, given); maxSamples > 0 && n > maxSamples {
			count := fmt.Sprint(n)
			if n == math.MaxInt {
				count = fmt.Sprintf("%.3g", span/given)
			}
			return 0, "", fmt.Errorf("period %g %s makes %s samples over the run's %g %s, more than the %d allowed (max samples): raise the period or the maximum",
				given, unit, count, span, unit, maxSamples)
		}
		return given, "given", nil
	}
	floor := minPeriod
	if maxSamples > 0 {
		floor = math.Max(floor, span/float64(maxSamples))
	}
	switch {
	case !ok:
		return math.Max(floor, span/1000), "the signal never changes: 1000 samples", nil
	case p < floor && floor == minPeriod:
		return floor, fmt.Sprintf("half the shortest time between two changes of the signal, %g, raised to the minimum period", p), nil
	case p < floor:
		return floor, fmt.Sprintf("half the shortest time between two changes of the signal, %g, would make more than %d samples: raised to the run's length / %d (the maximum number of samples)",
			p, maxSamples, maxSamples), nil
	}
	return p, "half the shortest time between two changes of the signal", nil
}
