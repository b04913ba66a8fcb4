// Package predict is Pallipuram et al.'s (2014) prediction phase: a sampled occurrence
// signal is cut into consecutive windows of w samples; after each window,
// its ECDF predicts the next one — P(X ≥ k) for each query such as "at
// least 25% of the workers idle" — and when the next window completes, the
// two-sample KS test between them is the verdict on that prediction (a hit
// when H0, same distribution, is not rejected). Alerts flag idle
// opportunities (a likelihood at or above a threshold) and regime changes
// (several KS misses in a row). Every record carries a deterministic id.
package predict

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tracecast/tracecast"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stats/ks"
)

// Query is "class >= count" or "class >= percent% of R".
type Query struct {
	Text    string
	Class   signal.Class
	AtLeast int
}

var queryRE = regexp.MustCompile(`^\s*([a-z]+)\s*>=\s*([0-9]+(?:\.[0-9]+)?)\s*(%?)\s*$`)

// ParseQuery reads a query such as "idle>=25%" or "compute>=3" for R
// selected containers; a percentage rounds up (25% of 10 workers is 3).
func ParseQuery(s string, r int) (Query, error) {
	m := queryRE.FindStringSubmatch(strings.ToLower(s))
	if m == nil {
		return Query{}, fmt.Errorf("query %q: want CLASS>=COUNT or CLASS>=PERCENT%% (idle>=25%%, compute>=3)", s)
	}
	c, err := signal.ParseClass(m[1])
	if err != nil {
		return Query{}, fmt.Errorf("query %q: %w", s, err)
	}
	v, _ := strconv.ParseFloat(m[2], 64)
	var k int
	if m[3] == "%" {
		if v > 100 {
			return Query{}, fmt.Errorf("query %q: more than 100%%", s)
		}
		// k exactly, as the forecasts count it (0.07·100 rounds up to 8).
		fq, err := fc.ParseQuery(s)
		if err != nil {
			return Query{}, err
		}
		k = fq.Threshold(r)
	} else if v != math.Trunc(v) {
		return Query{}, fmt.Errorf("query %q: a count must be an integer", s)
	} else if v <= float64(r) { // compared as a float: int(v) of a huge count wraps negative
		k = int(v)
	} else {
		return Query{}, fmt.Errorf("query %q: at least %s of %d containers can never happen", s, m[2], r)
	}
	if k > r {
		return Query{}, fmt.Errorf("query %q: at least %d of %d containers can never happen", s, k, r)
	}
	return Query{Text: strings.ReplaceAll(strings.TrimSpace(s), " ", ""), Class: c, AtLeast: k}, nil
}

// Comparer is the two-sample KS test on two windows: it returns D, the
// p-value and whether H0 (same distribution) holds — a hit.
type Comparer func(a, b *ks.Hist) (d, p float64, hit bool)

// KS is the Comparer of package ks for a method and a significance level.
func KS(m ks.Method, alpha float64) Comparer {
	return func(a, b *ks.Hist) (float64, float64, bool) {
		r := ks.Test(a, b, m, alpha)
		return r.D, r.P, !r.Reject
	}
}

// Config sets up an Engine for one class of one trace.
type Config struct {
	Trace   string
	Class   signal.Class
	R       int
	Window  int     // w, in samples
	Period  float64 // Δ, trace units
	T0      float64
	PerSec  float64 // trace units per second (1000 for StarPU's ms)
	Queries []Query // queries on Class
	Compare Comparer
	Method  string
	// IdleThreshold raises an idle-opportunity alert when a likelihood is
	// at or above it (0 disables).
	IdleThreshold float64
	// RegimeMisses raises a regime-change alert after that many KS misses
	// in a row (0 disables).
	RegimeMisses int
	// Now stamps records with their emission time (default: the UTC wall
	// clock).
	Now func() time.Time
}

// Sink receives the records as they are produced.
type Sink struct {
	Window     func(tracecast.Window)
	Prediction func(tracecast.Prediction)
	Verdict    func(tracecast.Verdict)
	Alert      func(tracecast.Alert)
}

// Engine consumes samples one at a time: O(1) per sample, O(R) per window.
type Engine struct {
	cfg       Config
	out       Sink
	cur, prev *ks.Hist
	n         int
	index     int64
	pending   []tracecast.Prediction
	misses    int
}

// NewEngine returns an engine; Add the samples in order.
func NewEngine(cfg Config, out Sink) *Engine {
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC() }
	}
	return &Engine{cfg: cfg, out: out, cur: ks.NewHist(cfg.R), prev: ks.NewHist(cfg.R)}
}

// Add takes the next sample x (0 ≤ x ≤ R).
func (e *Engine) Add(x int) {
	if x < 0 {
		x = 0
	} else if x > e.cfg.R {
		x = e.cfg.R
	}
	e.cur.Add(x)
	e.n++
	if e.n == e.cfg.Window {
		e.complete()
	}
}

func (e *Engine) bounds(i int64) (float64, float64) {
	w := float64(e.cfg.Window) * e.cfg.Period
	return e.cfg.T0 + float64(i)*w, e.cfg.T0 + float64(i+1)*w
}

// atLeast is P(X ≥ k) in a window's histogram: O(R).
func atLeast(h *ks.Hist, k int, n int) float64 {
	c := 0
	for x := k; x <= h.R(); x++ {
		c += h.Count(x)
	}
	return float64(c) / float64(n)
}

func (e *Engine) complete() {
	cfg := &e.cfg
	now := cfg.Now()
	start, end := e.bounds(e.index)
	win := tracecast.Window{Trace: cfg.Trace, Class: cfg.Class.String(), Index: e.index, Start: start, End: end, N: e.n}
	if e.index > 0 {
		win.D, win.P, win.Hit = cfg.Compare(e.prev, e.cur)
		win.Compared = true
		if win.Hit {
			e.misses = 0
		} else {
			e.misses++
		}
	}
	if e.out.Window != nil {
		e.out.Window(win)
	}
	// Verdicts on the predictions made for this window.
	for _, p := range e.pending {
		if e.out.Verdict != nil {
			e.out.Verdict(tracecast.Verdict{ID: p.ID + "/verdict", PredictionID: p.ID, Trace: p.Trace, Window: p.Window, Query: p.Query,
				Likelihood: p.Likelihood, Observed: atLeast(e.cur, p.AtLeast, e.n), D: win.D, P: win.P, Hit: win.Hit,
				Method: cfg.Method, Start: p.Start, End: p.End, PredictedAt: p.Window - 1, AtLeast: p.AtLeast,
				Class: p.Class, HorizonS: p.HorizonS, MissesInARow: e.misses, EmittedAt: now})
		}
	}
	if cfg.RegimeMisses > 0 && e.misses == cfg.RegimeMisses && e.out.Alert != nil {
		e.out.Alert(tracecast.Alert{ID: alertID(cfg.Trace, e.index, "regime-change", cfg.Class.String()), Trace: cfg.Trace,
			Window: e.index, Kind: "regime-change", Query: cfg.Class.String(), Value: float64(e.misses),
			Threshold: float64(cfg.RegimeMisses), Start: start, End: end,
			Message: fmt.Sprintf("%s signal: %d KS misses in a row (p=%.3g): the behaviour changed", cfg.Class, e.misses, win.P), EmittedAt: now})
	}
	// Predictions for the next window, from this one's ECDF.
	e.pending = e.pending[:0]
	next := e.index + 1
	ns, ne := e.bounds(next)
	horizon := float64(cfg.Window) * cfg.Period / cfg.PerSec
	for _, q := range cfg.Queries {
		p := tracecast.Prediction{ID: predictionID(cfg.Trace, next, q.Text), Trace: cfg.Trace, Window: next,
			Start: ns, End: ne, HorizonS: horizon, Class: q.Class.String(), Query: q.Text, AtLeast: q.AtLeast,
			R: cfg.R, Likelihood: atLeast(e.cur, q.AtLeast, e.n), EmittedAt: now}
		e.pending = append(e.pending, p)
		if e.out.Prediction != nil {
			e.out.Prediction(p)
		}
		if cfg.IdleThreshold > 0 && q.Class == signal.Idle && p.Likelihood >= cfg.IdleThreshold && e.out.Alert != nil {
			e.out.Alert(tracecast.Alert{ID: alertID(cfg.Trace, next, "idle-opportunity", q.Text), Trace: cfg.Trace,
				Window: next, Kind: "idle-opportunity", Query: q.Text, Value: p.Likelihood, Threshold: cfg.IdleThreshold,
				Start: ns, End: ne, Message: fmt.Sprintf("P(%s) = %.2f over the next %.3g s", q.Text, p.Likelihood, horizon), EmittedAt: now})
		}
	}
	e.prev, e.cur = e.cur, e.prev
	e.cur.Reset()
	e.n = 0
	e.index++
}

func predictionID(trace string, window int64, query string) string {
	return trace + "/w" + strconv.FormatInt(window, 10) + "/" + query
}

func alertID(trace string, window int64, kind, query string) string {
	return trace + "/w" + strconv.FormatInt(window, 10) + "/" + kind + "/" + query
}
