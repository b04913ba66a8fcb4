package forecast

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tracecast/tracecast"
)

// Config sets up an Engine for one class of one run.
type Config struct {
	// Run names the run in every id.
	Run string
	// Class is the class the queries count (all queries share it).
	Class   string
	Queries []Query
	// Horizons and Every (the issue cadence) are in seconds.
	Horizons []float64
	Every    float64
	Method   Method
	// Coverage is the probability the interval [lo, hi] is meant to have
	// of containing the outcome of p (default 0.9). The interval is empty
	// (lo, hi NaN) when the recent outcomes were forecast exactly more
	// often than that.
	Coverage float64
	// Window is how many recent errors the intervals use (default 500).
	Window int
	// OpportunityThreshold opens an idle-opportunity episode when a
	// forecast's p reaches it (0: no such alerts).
	OpportunityThreshold float64
	// RegimeAlpha is the regime-change test's level (0: no test), over
	// windows of RegimeWindow seconds (default: the longest horizon).
	RegimeAlpha  float64
	RegimeWindow float64
	// SkillEvery is how often (trace seconds) the rolling scores are
	// published; they are always published at the end (0: only then).
	SkillEvery float64
}

// Sink receives what an Engine produces, as it is produced.
type Sink struct {
	Forecast func(tracecast.Forecast)
	Outcome  func(tracecast.Outcome)
	Episode  func(tracecast.Episode)
	Skill    func(tracecast.Skill)
	// Explain, when set, receives at the run's end what carried the auto
	// method's forecasts of each (query, horizon) (explain.go); without
	// it the engine gathers nothing for it.
	Explain func(tracecast.Explanation)
}

// Engine issues forecasts from the changes of a class count, in time order.
type Engine struct {
	cfg     Config
	sink    Sink
	started bool
	t0      float64
	now     float64 // time of the last change
	x, r    int
	j       int64 // next issue index
	keep    float64
	mean    *track         // X/R
	ind     map[int]*track // [X ≥ k], by k
	groups  []*group
	fp, fm  []float64 // scratch features
	regime  *regime
	// lags are how far back from an issue time the queries look (the
	// features' windows, and 0 for the outcome's start); a track keeps the
	// change points in force at those instants only (see track).
	lags []float64
	// keepAll keeps every change point (tests compare both).
	keepAll bool
	// ctxFn, when set, gives the trace's context at each issue time
	// (SetContext); ctx is the last one, read at ctxAt.
	ctxFn ContextFunc
	ctx   Context
	ctxAt float64
	// queue is the queue's count at the last issue (contextFeatures).
	queue   float64
	queueOK bool
	// quiet is when advance has nothing to do before a time t ≤
	// quietIssue, < quietMature and ≤ quietRegime: the next issue, the
	// next forecast to mature, the next regime window's end (set by
	// advance). The feature feed advances the engine at every event of
	// the trace, most of them between two issues: checking every group
	// was a twelfth of predict's time.
	quiet                                bool
	quietIssue, quietMature, quietRegime float64
	// needed's bound: no grid point a query lands on lies in
	// [needFrom, needBound) (needFrom +Inf: none known yet).
	needFrom, needBound float64
}

// group is one (query, horizon): its learners and the forecasts waiting for
// their outcome.
type group struct {
	q       Query
	h       float64
	hLabel  string
	rp, rm  *ridge
	conf    *mondrian
	pending []pending // oldest first
	head    int
	// watch are the pending forecasts not known to miss yet, oldest
	// first, with what earlyMisses reads of them: scanning the pending
	// records themselves (250 bytes each, a thousand of them at the
	// longest horizon) was 7% of the forecast stage on the 41 MB trace.
	watch    []watched
	pendBase int // pending[0]'s index among all the group's forecasts
	opp      opportunity
	trust    trust
	score    rolling
	nextSk   float64 // when the next rolling score is due
	skills   int
	ex       *explainer // nil unless the sink explains
}

type pending struct {
	j         int64
	t         float64
	k, r      int
	p, lo, hi float64
	mean      float64
	fp, fm    []float64
	aux       experts
	base      [3]float64 // persistence, climatology, ks-paper at t
	c0        float64    // ∫[X ≥ k] up to t
	missed    bool       // known to miss before its outcome is
	cat       uint8      // its interval's category (mondrian)
}

// watched is a pending forecast as earlyMisses reads it (at: its index
// among the group's forecasts).
type watched struct {
	at            int
	k             int
	t, c0, lo, hi float64
}

// New checks the configuration and returns an Engine.
// DefaultHorizons are the horizons when none is given: 0.1%, 1% and 10% of
// the run's span (seconds), each rounded down to 1, 2 or 5 times a power of
// ten, and at least 10 µs, so that the default issue cadence (a tenth of
// the shortest) is at least MinEvery (a very short trace has fewer).
func DefaultHorizons(span float64) []float64 {
	var hs []float64
	for _, share := range []float64{0.001, 0.01, 0.1} {
		h := math.Max(round125(share*span), 10*MinEvery)
		if len(hs) == 0 || hs[len(hs)-1] != h {
			hs = append(hs, h)
		}
	}
	return hs
}

// round125 rounds a positive duration down to 1, 2 or 5 times a power of ten.
func round125(s float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(s)))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= s {
			return m * p
		}
	}
	return p
}

// MinEvery is the shortest issue cadence, in seconds: a forecast of idle
// capacity every microsecond is already far below what a scheduler acts on,
// and a shorter one makes an unbounded stream of records.
const MinEvery = 1e-6

func New(cfg Config, sink Sink) (*Engine, error) {
	if cfg.Coverage == 0 {
		cfg.Coverage = 0.9
	}
	if cfg.Window == 0 {
		cfg.Window = 500
	}
	if cfg.Method == "" {
		cfg.Method = Auto
	}
	var errs []error
	if len(cfg.Queries) == 0 {
		errs = append(errs, errors.New("no query"))
	}
	if len(cfg.Horizons) == 0 {
		errs = append(errs, errors.New("no horizon"))
	}
	for _, h := range cfg.Horizons {
		if !(h > 0) || math.IsInf(h, 0) {
			errs = append(errs, fmt.Errorf("horizon %g s: must be positive", h))
		}
	}
	if !(cfg.Every >= MinEvery) || math.IsInf(cfg.Every, 0) {
		errs = append(errs, fmt.Errorf("every %g s: must be at least 1µs (forecasts are issued every `every`; the default is the shortest horizon / 10)", cfg.Every))
	}
	if !(cfg.Coverage > 0 && cfg.Coverage < 1) {
		errs = append(errs, fmt.Errorf("coverage %g: must be in (0, 1)", cfg.Coverage))
	}
	if _, err := ParseMethod(string(cfg.Method)); err != nil {
		errs = append(errs, err)
	}
	if !(cfg.OpportunityThreshold >= 0 && cfg.OpportunityThreshold <= 1) { // NaN too
		errs = append(errs, fmt.Errorf("opportunity threshold %g: must be in [0, 1]", cfg.OpportunityThreshold))
	}
	if !(cfg.RegimeAlpha >= 0 && cfg.RegimeAlpha < 1) { // NaN too
		errs = append(errs, fmt.Errorf("regime alpha %g: must be in [0, 1)", cfg.RegimeAlpha))
	}
	if !(cfg.RegimeWindow >= 0) || math.IsInf(cfg.RegimeWindow, 0) { // NaN too
		errs = append(errs, fmt.Errorf("regime window %g s: must be positive", cfg.RegimeWindow))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, sink: sink, ind: map[int]*track{}, fp: make([]float64, numFeatP), fm: make([]float64, numFeatM), needFrom: math.Inf(1)}
	hmax := 0.0
	for _, q := range cfg.Queries {
		for _, h := range cfg.Horizons {
			hmax = math.Max(hmax, h)
			e.groups = append(e.groups, &group{q: q, h: h, hLabel: HorizonLabel(h),
				rp:   newRidge(numFeatP, priorKS(numFeatP), autoLambda, autoAlphaFor(h, cfg.Every)),
				rm:   newRidge(numFeatM, priorKS(numFeatM), autoLambda, autoAlphaFor(h, cfg.Every)),
				conf: newMondrian(cfg.Window, cfg.Coverage)})
		}
	}
	if sink.Explain != nil && cfg.Method == Auto {
		for _, g := range e.groups {
			g.ex = newExplainer(numFeatP, false)
		}
	}
	// The longest look-back (10 H) and the oldest pending outcome (H).
	e.keep = 10*hmax + cfg.Every
	// The look-backs of issue: avg over 0.1, 0.3, 1, 3 and 10 H (and
	// switchesIn over 10 H), cum at the issue time itself.
	e.lags = []float64{0}
	for _, h := range cfg.Horizons {
		for _, l := range []float64{h, 0.1 * h, 0.3 * h, 3 * h, 10 * h} {
			if !slices.Contains(e.lags, l) {
				e.lags = append(e.lags, l)
			}
		}
	}
	if cfg.RegimeAlpha > 0 && sink.Episode != nil {
		if e.cfg.RegimeWindow == 0 {
			e.cfg.RegimeWindow = hmax
		}
		e.regime = &regime{l: e.cfg.RegimeWindow, past: newConformal(regimeHistory, 0.5)}
		e.keep = math.Max(e.keep, 2*e.cfg.RegimeWindow+cfg.Every)
	}
	return e, nil
}

// SetContext gives the engine a feature feed: fn is called once per issue
// time, and the auto method's learners read its features beside the
// occupancy's (the other methods ignore them). Call it before the first
// Change. Without it, auto learns from the occupancy alone.
func (e *Engine) SetContext(fn ContextFunc) {
	if e.started || fn == nil {
		return
	}
	e.ctxFn, e.ctxAt = fn, math.NaN()
	e.ctx.Reset()
	e.fp, e.fm = make([]float64, numFeatP+numCtx), make([]float64, numFeatM+numCtx)
	for _, g := range e.groups {
		g.rp = newRidge(numFeatP+numCtx, priorKS(numFeatP+numCtx), autoLambda, autoAlphaFor(g.h, e.cfg.Every))
		g.rm = newRidge(numFeatM+numCtx, priorKS(numFeatM+numCtx), autoLambda, autoAlphaFor(g.h, e.cfg.Every))
		if g.ex != nil {
			g.ex = newExplainer(numFeatP+numCtx, true)
		}
	}
}

// Advance issues every forecast due before t and every outcome known by
// then, as a change at t would, without changing the count: a feature feed
// calls it before it applies what happens at t, so that the forecasts
// issued before t see the trace before t only.
func (e *Engine) Advance(t float64) {
	if e.started && t > e.now {
		e.advance(t)
	}
}

// HorizonLabel writes a horizon in seconds for ids and tables: "10ms", "1s".
func HorizonLabel(h float64) string {
	for _, u := range []struct {
		s string
		f float64
	}{{"s", 1}, {"ms", 1e3}, {"us", 1e6}, {"ns", 1e9}} {
		if v := h * u.f; v >= 1 || u.s == "ns" {
			return strconv.FormatFloat(v, 'g', 6, 64) + u.s
		}
	}
	return ""
}

// Change says that from time t (seconds) on, x of the r selected containers
// are in the class. Times must not decrease. Forecasts due before t are
// issued first: they see the changes before t only... and at t itself once
// every change at t is in, which is why an issue at exactly t waits for the
// next later change (or Finish).
func (e *Engine) Change(t float64, x, r int) {
	if !e.started {
		e.started, e.t0, e.now, e.x, e.r = true, t, t, x, r
		e.needFrom = math.Inf(1) // the grids start at t0
		e.mean = e.newTrack(t, frac(x, r))
		return
	}
	e.advance(t)
	e.now = t
	e.mean.set(t, frac(x, r))
	lo, hi := min(e.x, x), max(e.x, x)
	if hi-lo <= len(e.ind) {
		for k := lo + 1; k <= hi; k++ {
			if tr := e.ind[k]; tr != nil {
				tr.set(t, b2f(x >= k))
			}
		}
	} else {
		for k, tr := range e.ind {
			if k > lo && k <= hi {
				tr.set(t, b2f(x >= k))
			}
		}
	}
	e.x, e.r = x, r
}

// Finish ends the run at end (the last state end): forecasts issued before
// end and every outcome known by then are produced. The run ended by its
// end marker (or the end of its file): FinishBy(end, tracecast.EndMarker).
func (e *Engine) Finish(end float64) { e.FinishBy(end, tracecast.EndMarker) }

// FinishBy is Finish for a run that ended the way how says
// (tracecast.EndMarker, tracecast.EndTimeout): the run's last skill records
// say it (their End).
func (e *Engine) FinishBy(end float64, how string) {
	if !e.started {
		return
	}
	e.advance(end)
	e.regimeUntil(end, true)
	for _, g := range e.groups {
		e.mature(g, end)
		e.closeOpportunity(g, end)
		e.publishSkillEnd(g, how)
		if g.ex != nil && !g.ex.done {
			g.ex.done = true
			for _, x := range e.explanations(g) {
				e.sink.Explain(x)
			}
		}
	}
	if e.regime != nil {
		e.closeRegime(end)
	}
}

// advance issues every forecast due before t and every outcome known by
// then, in time order.
func (e *Engine) advance(t float64) {
	if e.quiet && t <= e.quietIssue && t < e.quietMature && t <= e.quietRegime {
		return
	}
	for {
		ti := e.t0 + float64(e.j)*e.cfg.Every
		if ti >= t {
			break
		}
		for _, g := range e.groups {
			e.mature(g, ti)
		}
		e.regimeUntil(ti, false)
		for _, g := range e.groups {
			e.issue(g, ti)
		}
		e.j++
	}
	e.regimeUntil(t, false)
	e.quiet, e.quietIssue, e.quietMature, e.quietRegime = true, e.t0+float64(e.j)*e.cfg.Every, math.Inf(1), math.Inf(1)
	for _, g := range e.groups {
		e.mature(g, t)
		if g.head < len(g.pending) {
			e.quietMature = min(e.quietMature, g.pending[g.head].t+g.h)
		}
	}
	if r := e.regime; r != nil {
		e.quietRegime = e.t0 + float64(r.i+1)*r.l
	}
}

func (e *Engine) indicator(k int, t float64) *track {
	tr := e.ind[k]
	if tr == nil {
		tr = e.newTrack(t, b2f(e.x >= k))
		e.ind[k] = tr
	}
	return tr
}

// newTrack starts a track that keeps the change points the engine's
// queries can land on.
func (e *Engine) newTrack(start, v float64) *track {
	tr := newTrack(start, v, e.keep)
	if !e.keepAll {
		tr.needed = e.needed
	}
	return tr
}

// needed reports whether a query of the engine can land in [lo, hi) on a
// track that starts at start. The queries are at t − l for the issue times
// t = t0 + j·every and the lags l, clipped to the start, at the start
// itself (climatology's window, t − (t − start), rounds to about it), and
// at the regime windows' starts t0 + i·L. Instants are computed in
// floating point by the callers; a tolerance far above their rounding
// keeps a point whenever one may land in its interval (keeping more is
// only memory).
func (e *Engine) needed(start, lo, hi float64) bool {
	if lo <= start+1e-6*(math.Abs(start)+1) { // as track.nearStart
		return true
	}
	tol := 1e-9 * (math.Abs(lo) + math.Abs(hi) + math.Abs(e.t0) + 1)
	// Most calls are answered by the bound: for lo − tol ≥ needFrom,
	// every grid point hits would test is at or after needBound.
	if lo-tol >= e.needFrom && hi+tol <= e.needBound {
		return false
	}
	// first is the grid point a + i·step that hits tests for x = lo − tol:
	// the first at or after x (within 1e-9 step), nondecreasing in x.
	first := func(x, a, step float64) float64 {
		return a + math.Max(0, math.Ceil((x-a)/step-1e-9))*step
	}
	e.needFrom, e.needBound = lo-tol, math.Inf(1)
	for _, l := range e.lags {
		e.needBound = min(e.needBound, first(lo-tol, e.t0-l, e.cfg.Every))
	}
	if e.regime != nil {
		e.needBound = min(e.needBound, first(lo-tol, e.t0, e.regime.l))
	}
	// a + i·step ∈ [lo − tol, hi + tol) for an i ≥ 0, for some grid.
	return e.needBound < hi+tol
}

func (e *Engine) issue(g *group, t float64) {
	k := g.q.Threshold(e.r)
	ind := e.indicator(k, t)
	h := g.h
	fp, fm := e.fp, e.fm
	fp[featOne], fm[mfeatOne] = 1, 1
	fp[featKS], fm[mfeatKS] = ind.avg(t, h), e.mean.avg(t, h)
	fp[featOcc01], fm[mfeatOcc01] = ind.avg(t, 0.1*h), e.mean.avg(t, 0.1*h)
	fp[featOcc03], fm[mfeatOcc03] = ind.avg(t, 0.3*h), e.mean.avg(t, 0.3*h)
	fp[featOcc3], fm[mfeatOcc3] = ind.avg(t, 3*h), e.mean.avg(t, 3*h)
	fp[featOcc10], fm[mfeatOcc10] = ind.avg(t, 10*h), e.mean.avg(t, 10*h)
	fp[featNow], fm[mfeatNow] = ind.value(), e.mean.value()
	fp[featClim], fm[mfeatClim] = ind.clim(t), e.mean.clim(t)
	fp[featAbove1] = b2f(e.x >= k+1)
	fp[featAbove2] = b2f(e.x >= k+2)
	fp[featBelow1] = b2f(e.x >= k-1)
	if e.ctxFn != nil {
		if e.ctxAt != t {
			e.ctx.Reset()
			e.ctxFn(t, &e.ctx)
			e.ctxAt = t
		}
		e.queue, e.queueOK = contextFeatures(&e.ctx, h, k, e.x, e.r, fp[numFeatP:])
		copy(fm[numFeatM:], fp[numFeatP:])
	}

	var p, m float64
	var aux experts // auto: the experts' p and mean
	switch e.cfg.Method {
	case Persistence:
		p, m = fp[featNow], fm[mfeatNow]
	case Climatology:
		p, m = fp[featClim], fm[mfeatClim]
	case KSPaper:
		p, m = fp[featKS], fm[mfeatKS]
	case Markov:
		p, m = e.markov(ind, fp, fm, t, h)
	default:
		// The prior the learner is shrunk toward: ks-paper and persistence
		// mixed by the two-state chain's memory over H, G(κH) — the last
		// H when the indicator switches fast relative to H (StarPU's
		// flicker), the current state when it switches slowly.
		gk := e.decay(ind, fp, t, h)
		g.rp.prior(featKS, featNow, gk)
		g.rm.prior(mfeatKS, mfeatNow, gk)
		pr, mr := g.rp.predict(fp), g.rm.predict(fm)
		p0, m0 := g.rp.priorPredict(fp), g.rm.priorPredict(fm)
		pq, mq := p0, m0 // the queue's: the prior's without task counts
		if e.ctxFn != nil && e.queueOK {
			pq, mq = b2f(e.queue >= float64(k)), e.queue/float64(max(e.r, 1))
		}
		aux = experts{
			{clamp01(pr), p0, fp[featKS], fp[featNow], fp[featClim], pq},
			{clamp01(mr), m0, fm[mfeatKS], fm[mfeatNow], fm[mfeatClim], mq}}
		p, m = g.trust.combine(&aux)
		if g.ex != nil {
			var ws [numExperts]float64
			g.trust.weights(0, &ws)
			present := uint32(0)
			if e.ctxFn != nil {
				present = presentCtx(&e.ctx)
			}
			g.ex.issued(fp, g.rp.w, pr, gk, &aux, &ws, clamp01(p), present, e.ctxFn != nil && e.queueOK)
		}
	}
	p, m = clamp01(p), clamp01(m)
	e.earlyMisses(g, ind, k, t)
	cat := category(p, e.x >= k)
	lo, hi := g.conf.interval(p, cat)
	id := e.cfg.Run + "/" + g.q.Text + "/" + g.hLabel + "/" + strconv.FormatInt(e.j, 10)
	if e.sink.Forecast != nil {
		e.sink.Forecast(tracecast.Forecast{ID: id, Run: e.cfg.Run, Class: e.cfg.Class, Query: g.q.Text,
			Threshold: k, Workers: e.r, IssuedAt: t, Horizon: h, P: p, Mean: m, WorkerSeconds: m * float64(e.r) * h,
			Lo: lo, Hi: hi, Method: string(e.cfg.Method)})
	}
	e.opportunity(g, t, p)
	pd := pending{j: e.j, t: t, k: k, r: e.r, p: p, lo: lo, hi: hi, cat: cat, mean: m, c0: ind.cum(t),
		base: [3]float64{fp[featNow], fp[featClim], fp[featKS]}}
	if e.cfg.Method == Auto {
		pd.fp, pd.fm = append([]float64(nil), fp...), append([]float64(nil), fm...)
		pd.aux = aux
	}
	g.pending = append(g.pending, pd)
	g.watch = append(g.watch, watched{at: g.pendBase + len(g.pending) - 1, k: k, t: t, c0: pd.c0, lo: lo, hi: hi})
}

// rolling sums the squared errors of a group's forecasts and baselines.
type rolling struct {
	n               int
	p, mean, inside float64
	is              float64 // interval scores
	pers, clim, ks  float64
	until           float64
}

func (r *rolling) add(pd *pending, y, ym float64, inside bool, alpha float64) {
	sq := func(a float64) float64 { return (a - y) * (a - y) }
	r.n++
	r.p += sq(pd.p)
	r.mean += (pd.mean - ym) * (pd.mean - ym)
	r.pers += sq(pd.base[0])
	r.clim += sq(pd.base[1])
	r.ks += sq(pd.base[2])
	if inside {
		r.inside++
	}
	r.is += IntervalScore(pd.p, pd.lo, pd.hi, y, alpha)
	r.until = pd.t
}

// publishSkill publishes a rolling skill record (End "": the run is open).
func (e *Engine) publishSkill(g *group) { e.publishSkillEnd(g, "") }

// publishSkillEnd publishes a skill record, the run's last when how (its
// End) says how the run ended.
func (e *Engine) publishSkillEnd(g *group, how string) {
	r := &g.score
	if e.sink.Skill == nil || r.n == 0 {
		return
	}
	n := float64(r.n)
	id := e.cfg.Run + "/" + g.q.Text + "/" + g.hLabel + "/skill/" + strconv.Itoa(g.skills)
	g.skills++
	e.sink.Skill(tracecast.Skill{ID: id, Run: e.cfg.Run, Query: g.q.Text, Horizon: g.h, Method: string(e.cfg.Method),
		Until: r.until + g.h, N: r.n, MSEP: r.p / n, MSEMean: r.mean / n, MSEPersistence: r.pers / n, MSEClimatology: r.clim / n,
		MSEKSPaper: r.ks / n, SkillPersistence: skill(r.p, r.pers), SkillClimatology: skill(r.p, r.clim), SkillKSPaper: skill(r.p, r.ks),
		Coverage: r.inside / n, IntervalScore: r.is / n, End: how})
}

// earlyMisses tells the intervals of the misses known before their
// outcome: at t, a pending forecast's outcome lies within [seen, seen +
// remaining] (the part of its interval already observed, plus the rest at
// most); when that range lies outside [lo, hi], or the interval was empty,
// it is a miss already. At long horizons the outcome comes H after the
// issue, too late for the adaptive level to follow a run's phases; the
// misses come as early as they are certain (hits still wait for the
// outcome, and each forecast counts once).
func (e *Engine) earlyMisses(g *group, ind *track, k int, t float64) {
	cnow := ind.cum(t)
	first := g.pendBase + g.head // those before have matured
	ws := g.watch
	for len(ws) > 0 && ws[0].at < first {
		ws = ws[1:]
	}
	n := -1 // once one is dropped: where the next one kept goes
	for i := range ws {
		w := &ws[i]
		if w.k == k {
			seen := (cnow - w.c0) / g.h
			rest := (w.t + g.h - t) / g.h
			if math.IsNaN(w.lo) || seen > w.hi+slack || seen+rest < w.lo-slack {
				pd := &g.pending[w.at-g.pendBase]
				pd.missed = true
				g.conf.outcome(pd.cat, false, e.cfg.Coverage)
				if n < 0 {
					n = i
				}
				continue
			}
		}
		if n >= 0 {
			ws[n] = *w
			n++
		}
	}
	if n >= 0 {
		ws = ws[:n]
	}
	// The matured prefix dropped by reslicing: moved down once it is
	// most of the array, so that appends reuse it.
	if len(ws) < cap(ws)/4 && cap(g.watch) > 64 {
		g.watch = append(g.watch[:0], ws...)
	} else {
		g.watch = ws
	}
}

// experts are the forecasts auto weighs, of p ([0]) and of mean ([1]):
// the learner, its prior, ks-paper, persistence, climatology and the
// queue (contextFeatures: the idle containers left once the tasks waiting
// are taken up).
type experts [2][numExperts]float64

const (
	expLearner = iota
	expPrior
	expKS
	expPersistence
	expClimatology
	expQueue
	numExperts
)

// trust weighs the experts by their known losses (exponential weights,
// per known outcome weighted by every/H, the share of an independent
// outcome it carries): the learner speaks only as loud as its record, so
// on a short run, or one it fits badly, the forecast stays near the prior
// — or moves to the baseline that has been best on this run (persistence
// when the phases outlast H, climatology on a stationary run). The
// baselines and the queue start with a handicap (trustStart), so that with
// nothing known the forecast is the prior's. (The queue level with the
// prior did better on the acceptance set, 0.718 × ks-paper against 0.752,
// and worse on traces not used to tune it, 0.826 against 0.785: the
// handicap stays.)
type trust struct {
	l     [2][numExperts]float64 // discounted losses
	begun bool
}

// trustEta is the learning rate of the weights, per unit of discounted
// squared error; trustForget the discount per known outcome.
var (
	trustEta    = 10.0
	trustForget = 0.999
	trustStart  = 0.3
)

func (t *trust) start() {
	if t.begun {
		return
	}
	t.begun = true
	for i := range t.l {
		for j := expKS; j < numExperts; j++ {
			t.l[i][j] = trustStart
		}
	}
}

func (t *trust) learn(aux *experts, y, ym, w float64) {
	t.start()
	w = math.Min(w, 1)
	for j := 0; j < numExperts; j++ {
		t.l[0][j] = trustForget*t.l[0][j] + w*(aux[0][j]-y)*(aux[0][j]-y)
		t.l[1][j] = trustForget*t.l[1][j] + w*(aux[1][j]-ym)*(aux[1][j]-ym)
	}
}

// combine is the weighted forecast of p and of mean.
func (t *trust) combine(aux *experts) (float64, float64) {
	t.start()
	var out [2]float64
	for i := range out {
		best := slices.Min(t.l[i][:])
		sw, s := 0.0, 0.0
		for j := 0; j < numExperts; j++ {
			w := math.Exp(-trustEta * (t.l[i][j] - best))
			sw += w
			s += w * aux[i][j]
		}
		out[i] = s / sw
	}
	return out[0], out[1]
}

// weights are the experts' normalized weights in the mix of p (i = 0) or
// mean (1), as combine weighs them.
func (t *trust) weights(i int, out *[numExperts]float64) {
	t.start()
	best := slices.Min(t.l[i][:])
	sw := 0.0
	for j := 0; j < numExperts; j++ {
		out[j] = math.Exp(-trustEta * (t.l[i][j] - best))
		sw += out[j]
	}
	for j := range out {
		out[j] /= sw
	}
}

// markov is the two-state forecaster: occupancy π and switching over the
// last 10 H give the relaxation rate κ = n / (2·T·π(1−π)) of a two-state
// chain with n switches in T.
func (e *Engine) markov(ind *track, fp, fm []float64, t, h float64) (float64, float64) {
	pi, z := fp[featOcc10], fp[featNow]
	gk := e.decay(ind, fp, t, h)
	return pi + (z-pi)*gk, fm[mfeatOcc10] + (fm[mfeatNow]-fm[mfeatOcc10])*gk
}

// decay is G(κH), the share of [t, t+H) a two-state chain spends
// remembering its state at t, with the relaxation rate κ estimated from the
// indicator's switches over the last 10 H.
func (e *Engine) decay(ind *track, fp []float64, t, h float64) float64 {
	l := math.Min(10*h, t-ind.start)
	pi := fp[featOcc10]
	kappa := 0.0
	if l > 0 && pi > 0 && pi < 1 {
		kappa = float64(ind.switchesIn(t, l)) / (2 * l * pi * (1 - pi))
	}
	return g(kappa * h)
}

// mature produces the outcome of every forecast of g whose interval ended
// by t, and learns from it.
func (e *Engine) mature(g *group, t float64) {
	for g.head < len(g.pending) && g.pending[g.head].t+g.h <= t {
		pd := &g.pending[g.head]
		g.head++
		ind := e.ind[pd.k]
		y := snap(ind.mean(pd.t, pd.t+g.h))
		ym := snap(e.mean.mean(pd.t, pd.t+g.h))
		if g.ex != nil {
			g.ex.matured(y)
		}
		if pd.fp != nil {
			g.rp.learn(pd.fp, y)
			g.rm.learn(pd.fm, ym)
			g.trust.learn(&pd.aux, y, ym, e.cfg.Every/g.h)
		}
		inside := y >= pd.lo && y <= pd.hi
		g.score.add(pd, y, ym, inside, 1-e.cfg.Coverage)
		if !pd.missed {
			g.conf.outcome(pd.cat, inside, e.cfg.Coverage)
		}
		g.conf.add(pd.cat, y-pd.p)
		if e.sink.Outcome != nil {
			id := e.cfg.Run + "/" + g.q.Text + "/" + g.hLabel + "/" + strconv.FormatInt(pd.j, 10)
			e.sink.Outcome(tracecast.Outcome{ID: id + "/outcome", ForecastID: id, Run: e.cfg.Run, Query: g.q.Text,
				Threshold: pd.k, Workers: pd.r, IssuedAt: pd.t, Horizon: g.h, P: pd.p, Lo: pd.lo, Hi: pd.hi, Mean: pd.mean,
				ObservedP: y, ObservedMean: ym, Inside: inside, Method: string(e.cfg.Method)})
		}
		*pd = pending{}
		if g.score.n == 1 {
			g.nextSk = g.score.until + e.cfg.SkillEvery
		}
		if e.cfg.SkillEvery > 0 && g.score.until >= g.nextSk {
			e.publishSkill(g)
			g.nextSk = g.score.until + e.cfg.SkillEvery
		}
	}
	if g.head > 256 && g.head > len(g.pending)/2 {
		n := copy(g.pending, g.pending[g.head:])
		g.pending = g.pending[:n]
		g.pendBase += g.head
		g.head = 0
	}
}

// snap rounds an outcome within 1e-12 of 0 or 1 (the rounding of the
// running integrals) to it, so exact outcomes are exact.
func snap(y float64) float64 {
	switch {
	case math.Abs(y) < 1e-12:
		return 0
	case math.Abs(1-y) < 1e-12:
		return 1
	}
	return clamp01(y)
}

func frac(x, r int) float64 {
	if r == 0 {
		return 0
	}
	return float64(x) / float64(r)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
