package backfill

import (
	"math"
	"slices"
)

// Row is one policy's result for one task length d at one α.
type Row struct {
	Policy string  `json:"policy"`
	Mode   string  `json:"mode"`
	D      float64 `json:"d"`
	// Gang is K, the workers a task needs at once (1: one).
	Gang int `json:"gang"`
	// Overhead is o; Alpha the α the row is scored at; Timeout the τ of a
	// timeout policy (hindsight-timeout's choice), NaN otherwise.
	Overhead  float64 `json:"overhead"`
	Alpha     float64 `json:"alpha"`
	Timeout   float64 `json:"timeout"`
	Launches  int     `json:"launches"`
	Completed int     `json:"completed"`
	// Harvest U, Waste W (kill) and Delay D (wait), seconds.
	Harvest float64 `json:"harvest"`
	Waste   float64 `json:"waste"`
	Delay   float64 `json:"delay"`
	// Score S(α); Value V(α), NaN when undefined (the oracle does no
	// better than the better of never and greedy).
	Score float64 `json:"score"`
	Value float64 `json:"value"`
	// OracleHarvest U*, GreedyScore S_greedy(α), IdleWorkerSeconds the
	// spells' total length.
	OracleHarvest     float64 `json:"oracle_harvest"`
	GreedyScore       float64 `json:"greedy_score"`
	IdleWorkerSeconds float64 `json:"idle_worker_seconds"`
	// Causal is false for the references that see the outcome.
	Causal bool `json:"causal"`
}

// Result is what a run's backfilling was worth.
type Result struct {
	Rows   []Row
	Spells int
	// IdleWorkerSeconds is the total length of the spells.
	IdleWorkerSeconds float64
	// SpellScores score the spell forecasts, one per length asked.
	SpellScores []SpellScore
}

// Finish ends the run at end (the last state end of the selected
// workers): the spells still open close there. With KeepSpells it
// computes the references and emits their decisions, and returns the
// table (nil without KeepSpells).
func (e *Engine) Finish(end float64) *Result {
	if e.ended {
		return nil
	}
	e.flush()
	e.advance(math.Max(end, e.now))
	for _, w := range e.order {
		if w.idle {
			if e.gang == nil {
				e.endSpell(w, e.now)
			}
			w.idle = false
			e.idleN--
		}
	}
	if e.gang != nil && e.gang.idle {
		e.endSpell(e.gang, e.now)
	}
	for _, w := range e.order {
		e.endBusy(w, e.now)
	}
	// Wait mode: tasks that overran the run's end complete.
	for _, w := range e.active() {
		w.idle = false
		e.run(w, math.Inf(1))
	}
	if e.sink.Plan != nil && e.gang == nil {
		for _, l := range e.lanes {
			if l.policy == Forecast && !l.quiet {
				e.sendPlan(nil, l, e.now, "end", nil)
			}
		}
	}
	e.ended = true
	if !e.cfg.KeepSpells {
		return nil
	}
	return e.table()
}

func (e *Engine) table() *Result {
	res := &Result{Spells: e.spellsN, IdleWorkerSeconds: e.idleSum}
	if e.scorer != nil {
		res.SpellScores = e.scorer.finish()
	}
	if e.busyScorer != nil {
		for _, sc := range e.busyScorer.finish() {
			sc.State = "busy"
			res.SpellScores = append(res.SpellScores, sc)
		}
	}
	has := func(p string) bool { return slices.Contains(e.cfg.Policies, p) }
	nan := math.NaN()
	for di, d := range e.cfg.Tasks {
		c := d + e.cfg.Overhead
		ustar, oracle := e.oracle(d, c, has(Oracle))
		var greedy *lane
		for _, l := range e.lanes {
			if l.di == di && l.policy == Greedy {
				greedy = l
			}
		}
		for ai, a := range e.cfg.Alphas {
			sGreedy := greedy.score(a, e.cfg.Mode)
			ref := math.Max(0, sGreedy)
			value := func(s float64) float64 {
				if !(ustar > ref) {
					return nan
				}
				return (s - ref) / (ustar - ref)
			}
			row := func(p string, l *lane, tau float64, causal bool) Row {
				r := Row{Policy: p, Mode: string(e.cfg.Mode), D: d, Gang: max(e.cfg.Gang, 1), Overhead: e.cfg.Overhead, Alpha: a, Timeout: tau,
					OracleHarvest: ustar, GreedyScore: sGreedy, IdleWorkerSeconds: e.idleSum, Causal: causal}
				if l != nil {
					r.Launches, r.Completed, r.Harvest, r.Waste, r.Delay = l.launches, l.completed, l.u, l.w, l.delay
				}
				r.Score = r.Harvest - a*(r.Waste+r.Delay)
				r.Value = value(r.Score)
				return r
			}
			if has(Never) {
				res.Rows = append(res.Rows, row(Never, nil, nan, true))
			}
			for _, l := range e.lanes {
				if l.di != di || !has(l.policy) || l.ai >= 0 && l.ai != ai {
					continue
				}
				res.Rows = append(res.Rows, row(l.policy, l, l.tau, true))
			}
			if has(HindsightTimeout) {
				tau, l := e.hindsight(d, c, a, ai)
				res.Rows = append(res.Rows, row(HindsightTimeout, l, tau, false))
			}
			if has(Oracle) {
				res.Rows = append(res.Rows, row(Oracle, oracle, nan, false))
			}
		}
	}
	return res
}

func (l *lane) score(alpha float64, m Mode) float64 {
	if m == Kill {
		return l.u - alpha*l.w
	}
	return l.u - alpha*l.delay
}

// oracle is U*: ⌊L/(o+d)⌋ tasks in every spell of length L, back to back
// from its start; it emits their decisions when emit is set.
func (e *Engine) oracle(d, c float64, emit bool) (float64, *lane) {
	l := &lane{policy: Oracle, alpha: math.NaN(), tau: math.NaN(), d: d, c: c}
	emit = emit && e.gang == nil // which workers a gang held is not kept
	for _, w := range e.active() {
		for k := 0; k < len(w.spells); k += 2 {
			s, end := w.spells[k], w.spells[k+1]
			n := math.Floor((end - s + timeEps) / c)
			a := s // back to back, as greedy adds them up
			for range int(n) {
				l.launches++
				l.completed++
				if emit && e.sink.Decision != nil {
					l.seq++
					e.sink.Decision(e.decision(l, w.name, a, math.NaN(), "completed", math.NaN()))
				}
				a += c
			}
			l.u += n * d
		}
	}
	return l.u, l
}

// hindsight is the best timeout of TauGrid for this trace, d and α, chosen
// with the outcome (smallest τ among ties), run again to emit its
// decisions.
func (e *Engine) hindsight(d, c, alpha float64, ai int) (float64, *lane) {
	best, bestS := 0.0, math.Inf(-1)
	for _, tau := range TauGrid {
		if tau > e.longest {
			break
		}
		l := e.replay(d, c, tau, alpha, false)
		if s := l.score(alpha, e.cfg.Mode); math.IsInf(bestS, -1) || s > bestS+1e-12*math.Abs(bestS) {
			best, bestS = tau, s
		}
	}
	return best, e.replay(d, c, best, alpha, true)
}

// replay runs timeout τ on the kept spells, as the online timeout lane
// does (a task overrunning into the next spell, in wait mode, holds its
// worker until it ends).
func (e *Engine) replay(d, c, tau, alpha float64, emit bool) *lane {
	l := &lane{policy: HindsightTimeout, alpha: alpha, tau: tau, d: d, c: c}
	emit = emit && e.gang == nil
	for _, w := range e.active() {
		free := math.Inf(-1)
		for k := 0; k < len(w.spells); k += 2 {
			s, end := w.spells[k], w.spells[k+1]
			a := s + tau
			if free > a {
				a = free
			}
			for a < end-timeEps {
				until := a + c
				outcome := "completed"
				if until <= end+timeEps {
					l.u += d
					l.completed++
				} else if e.cfg.Mode == Kill {
					l.w += end - a
					outcome = "killed"
				} else {
					l.u += d
					l.completed++
					l.delay += until - end
					outcome = "overran"
				}
				l.launches++
				if emit && e.sink.Decision != nil {
					l.seq++
					e.sink.Decision(e.decision(l, w.name, a, math.NaN(), outcome, tau))
				}
				if outcome == "overran" {
					free = until
				}
				if outcome != "completed" {
					break
				}
				a = until
			}
		}
	}
	return l
}
