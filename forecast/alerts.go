package forecast

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tracecast/tracecast"
)

// hysteresis: an idle-opportunity episode closes when p falls this far
// below the threshold, so a forecast hovering at the threshold makes one
// episode, not one per issue.
const hysteresis = 0.1

// opportunity follows one (query, horizon)'s idle-opportunity episode.
type opportunity struct {
	open  bool
	n     int
	start float64
	maxP  float64
}

func (e *Engine) opportunity(g *group, t, p float64) {
	thr := e.cfg.OpportunityThreshold
	if thr <= 0 || e.sink.Episode == nil {
		return
	}
	o := &g.opp
	switch {
	case !o.open && p >= thr:
		o.open, o.start, o.maxP = true, t, p
		e.sink.Episode(tracecast.Episode{ID: e.episodeID("idle-opportunity", g.q.Text+"/"+g.hLabel, o.n), Run: e.cfg.Run,
			Kind: "idle-opportunity", Query: g.q.Text, Horizon: g.h, State: "open", Start: t, End: math.NaN(), Value: p, Threshold: thr,
			Message: fmt.Sprintf("%s over the next %s: p = %.2f ≥ %.2f", g.q.Text, g.hLabel, p, thr)})
	case o.open && p > o.maxP:
		o.maxP = p
	case o.open && p < thr-hysteresis:
		e.closeOpportunity(g, t)
	}
}

func (e *Engine) closeOpportunity(g *group, t float64) {
	o := &g.opp
	if !o.open {
		return
	}
	e.sink.Episode(tracecast.Episode{ID: e.episodeID("idle-opportunity", g.q.Text+"/"+g.hLabel, o.n) + "/closed", Run: e.cfg.Run,
		Kind: "idle-opportunity", Query: g.q.Text, Horizon: g.h, State: "closed", Start: o.start, End: t, Value: o.maxP,
		Threshold: e.cfg.OpportunityThreshold,
		Message:   fmt.Sprintf("%s over %s: opportunity from %.6g s to %.6g s (p up to %.2f)", g.q.Text, g.hLabel, o.start, t, o.maxP)})
	o.open = false
	o.n++
}

func (e *Engine) episodeID(kind, what string, n int) string {
	return e.cfg.Run + "/" + kind + "/" + what + "/" + strconv.Itoa(n)
}

// regime is the regime-change test: the mean occupancy of consecutive
// windows of L seconds, m_i, and the change d_i = m_i − m_{i−1}. Occupancy
// signals are strongly autocorrelated, so a test that counts samples as
// independent fires on a stationary run (its rate then depends on the
// sampling period alone); this one compares |d_i| with the run's own past
// changes between windows of the same length, which carry the
// autocorrelation with them: the p-value is the rank of |d_i| among the
// last 500 (a conformal p-value, valid when the past changes are
// exchangeable with this one — the definition of "no regime change").
type regime struct {
	l      float64
	i      int64 // next window end index: t0 + i·l
	prev   float64
	has    bool
	past   *conformal // |d| of past windows, sorted
	open   bool
	n      int
	start  float64
	maxAbs float64
	// tests and alarms count the windows tested and those that alarmed.
	tests, alarms int
}

// regimeHistory bounds the past changes a test ranks against.
const regimeHistory = 500

func (e *Engine) regimeUntil(t float64, inclusive bool) {
	r := e.regime
	if r == nil {
		return
	}
	for {
		b := e.t0 + float64(r.i+1)*r.l
		if b > t || (!inclusive && b == t) {
			return
		}
		m := (e.mean.cum(b) - e.mean.cum(b-r.l)) / r.l
		r.i++
		if !r.has {
			r.prev, r.has = m, true
			continue
		}
		d := m - r.prev
		r.prev = m
		a := math.Abs(d)
		n := len(r.past.sorted)
		// p = (1 + #{past ≥ |d|}) / (n + 1)
		ge := n - sortSearch(r.past.sorted, a)
		p := float64(1+ge) / float64(n+1)
		alarm := p <= e.cfg.RegimeAlpha
		r.tests++
		if alarm {
			r.alarms++
		}
		r.past.add(a)
		switch {
		case alarm && !r.open:
			r.open, r.start, r.maxAbs = true, b-r.l, d
			e.sink.Episode(tracecast.Episode{ID: e.episodeID("regime-change", e.cfg.Class, r.n), Run: e.cfg.Run, Kind: "regime-change",
				Query: e.cfg.Class, Horizon: r.l, State: "open", Start: b - r.l, End: math.NaN(), Value: d, Threshold: e.cfg.RegimeAlpha,
				Message: fmt.Sprintf("%s occupancy moved by %+.3f between two %s windows (p = %.3g)", e.cfg.Class, d, HorizonLabel(r.l), p)})
		case alarm && math.Abs(d) > math.Abs(r.maxAbs):
			r.maxAbs = d
		case !alarm && r.open:
			e.closeRegime(b - r.l)
		}
	}
}

func (e *Engine) closeRegime(t float64) {
	r := e.regime
	if !r.open {
		return
	}
	e.sink.Episode(tracecast.Episode{ID: e.episodeID("regime-change", e.cfg.Class, r.n) + "/closed", Run: e.cfg.Run, Kind: "regime-change",
		Query: e.cfg.Class, Horizon: r.l, State: "closed", Start: r.start, End: t, Value: r.maxAbs, Threshold: e.cfg.RegimeAlpha,
		Message: fmt.Sprintf("%s occupancy changed from %.6g s to %.6g s (largest move %+.3f)", e.cfg.Class, r.start, t, r.maxAbs)})
	r.open = false
	r.n++
}

// sortSearch is the index of the first element ≥ x in sorted s.
func sortSearch(s []float64, x float64) int {
	i, _ := slices.BinarySearch(s, x)
	return i
}
