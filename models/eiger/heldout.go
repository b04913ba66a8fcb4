package eiger

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// selectHeldOut is forward selection on held-out error, for pools of
// thousands of product terms where adjusted R² on the training rows would
// take terms that fit the noise.
//
// The rows are split into folds by parameter combination (rows with the
// same variables share a fold, so that a combination measured many times
// is never both trained on and predicted). A model's held-out error is,
// per combination, the mean of |y − ŷ|/y over its rows, each fold
// predicted by least squares on the others (MAPE per combination; rows
// with y = 0 left out). At each step:
//
//  1. the candidate with the least held-out error added to the terms in,
//     and the best of the pairs of candidates screened by their fit to
//     the training rows (screenPairs: M^2*N + N^3*K, where alone a
//     compromise such as M*N^2*K^0.5 beats either);
//  2. the pair is added if it is better than the model so far and than
//     the best single term, else the single term if it is better than the
//     model so far, else the selection stops. "Better" (heldOut.better):
//     the per-combination error falls, on average, by more than the
//     threshold times the current held-out MAPE and by more than two
//     standard errors of the per-combination differences — a paired test
//     over the held-out combinations, so that a term that helps by
//     chance on a few of them, among thousands tried, stays out;
//  3. replacement: while swapping one term in for one of the model's
//     makes the model better (same test), the best swap is made.
//
// The weights are then least squares on all the cluster's rows, as in
// Algorithm 1. The error is relative because durations span orders of
// magnitude, a scheduler cares about relative error, and it is bounded
// for the rows a preempted task makes 10 or 50 times too long (a squared
// error lets a few such rows choose the terms). A model's own k-fold
// validation (FitGroups) refits the whole selection on each fold, so that
// its held-out error includes the choice.
func selectHeldOut(vars []string, rows [][]float64, y []float64, o Options, products []Term) Cluster {
	n := len(y)
	mean := stat.Mean(y, nil)
	cl := Cluster{N: n, Terms: []string{"1"}, Weights: []float64{mean}, Steps: []Step{}}
	tss := 0.0
	for _, v := range y {
		tss += (v - mean) * (v - mean)
	}
	if !(tss > 0) {
		cl.trainingError(rows, y)
		return cl
	}
	zero := 0.0
	cl.R2, cl.AdjR2 = &zero, &zero
	folds, combo, ncombo, k := comboFolds(rows, o.SelectFolds, o.Seed)
	if ncombo < 3 {
		cl.Note = fmt.Sprintf("%d distinct parameter combinations: too few to hold any out (3 needed); the model is the mean", ncombo)
		cl.trainingError(rows, y)
		return cl
	}
	s := &heldOut{folds: folds, combo: combo, ncombo: ncombo, k: k, y: y, threshold: o.Threshold,
		pool: candidates(len(vars), rows, o.Pool, products)}
	minTrain := n
	for _, st := range s.states(nil) {
		minTrain = min(minTrain, len(st.train))
	}
	var chosen []candidate
	cur := s.comboLoss(nil)
	// step records the model chosen; false when its terms are dependent on
	// all the rows (though not on any fold's training rows: not expected).
	step := func(term, replaced string) bool {
		cols := colsOf(chosen)
		w, err := fitTerms(cols, y)
		if err != nil {
			return false
		}
		cl.Weights = w
		r2 := 1 - rss(cols, w, y)/tss
		adj := AdjR2(r2, n, len(cols))
		cl.R2, cl.AdjR2 = &r2, &adj
		mape := 100 * s.mape(cur)
		cl.Steps = append(cl.Steps, Step{Term: term, Replaces: replaced, AdjR2: adj, HeldOutMAPE: &mape})
		return true
	}
	// A model of p terms and the intercept needs p + 1 training rows in
	// every fold, and p + 2 rows in all (adjusted R²).
	for len(s.pool) > 0 && len(chosen)+2 <= minTrain && len(chosen)+3 <= n {
		cols := colsOf(chosen)
		var single, pair []float64
		best, _ := s.bestOf(s.states(cols))
		if best >= 0 {
			single = s.comboLoss(append(cols, s.pool[best].col))
		}
		// A pair can be worth more than any term alone: M^2*N + N^3*K,
		// where alone a compromise (M*N^2*K^0.5) is better than either.
		// The pairs that fit the training rows best are screened, and the
		// best of them on held-out error is taken if it is better than
		// the best single term (it costs a term more).
		var pr [2]int
		if len(chosen)+3 <= minTrain && len(chosen)+4 <= n {
			prLoss := math.Inf(1)
			for _, p := range screenPairs(s.pool, cols, y) {
				two := s.states(append(cols, s.pool[p[0]].col))
				if l, ok := sumTry(two, s.pool[p[1]].col); ok && l < prLoss {
					prLoss, pr = l, p
				}
			}
			if !math.IsInf(prLoss, 1) {
				pair = s.comboLoss(append(cols, s.pool[pr[0]].col, s.pool[pr[1]].col))
			}
		}
		prev := chosen
		switch {
		case pair != nil && s.better(pair, cur, false) && (single == nil || s.better(pair, single, false)):
			a, b := s.pool[pr[0]], s.pool[pr[1]]
			chosen = append(chosen[:len(chosen):len(chosen)], a, b)
			if !step(a.t.Name(vars)+" + "+b.t.Name(vars), "") {
				chosen = prev
				goto done
			}
			s.pool = slices.DeleteFunc(s.pool, func(c candidate) bool { return c.t == a.t || c.t == b.t })
			cur = pair
		case single != nil && s.better(single, cur, len(chosen) == 0):
			chosen = append(chosen[:len(chosen):len(chosen)], s.pool[best])
			if !step(s.pool[best].t.Name(vars), "") {
				chosen = prev
				goto done
			}
			s.pool = append(s.pool[:best], s.pool[best+1:]...)
			cur = single
		default:
			goto done
		}
		// Replacement: a term chosen early as a compromise between laws is
		// swapped for the candidate that lowers the held-out error most,
		// while one does so significantly.
		for pass := 0; pass < 4*len(chosen) && len(chosen) > 1; pass++ {
			bj, bc, bl := -1, -1, math.Inf(1)
			for j := range chosen {
				others := colsOf(append(append([]candidate(nil), chosen[:j]...), chosen[j+1:]...))
				if c, l := s.bestOf(s.states(others)); c >= 0 && l < bl {
					bj, bc, bl = j, c, l
				}
			}
			if bj < 0 {
				break
			}
			swapped := append([]candidate(nil), chosen...)
			swapped[bj] = s.pool[bc]
			l := s.comboLoss(colsOf(swapped))
			if !s.better(l, cur, false) {
				break
			}
			old := chosen[bj]
			prev := chosen
			chosen = swapped
			if !step(chosen[bj].t.Name(vars), old.t.Name(vars)) {
				chosen = prev
				break
			}
			s.pool[bc], cur = old, l
		}
	}
done:
	for _, c := range chosen {
		cl.terms = append(cl.terms, c.t)
		cl.Terms = append(cl.Terms, c.t.Name(vars))
	}
	cl.trainingError(rows, y)
	return cl
}

// significance is how many standard errors of the per-combination
// differences a held-out improvement must be.
const significance = 2.0

// heldOut is the held-out selection's data: the folds, the parameter
// combination of each row, the target and the candidates left.
type heldOut struct {
	folds, combo []int
	ncombo, k    int
	y            []float64
	threshold    float64
	pool         []candidate
}

func colsOf(cs []candidate) [][]float64 {
	out := make([][]float64, len(cs))
	for j, c := range cs {
		out[j] = c.col
	}
	return out
}

// states builds the folds' states with the terms cols.
func (s *heldOut) states(cols [][]float64) []*foldState {
	fs := make([]*foldState, s.k)
	for f := range s.k {
		fs[f] = newFoldState(s.folds, f, s.y)
		for _, c := range cols {
			fs[f].add(c)
		}
	}
	return fs
}

// sumTry is the held-out error summed over the folds with col added.
func sumTry(fs []*foldState, col []float64) (float64, bool) {
	total := 0.0
	for _, st := range fs {
		e, ok := st.try(col)
		if !ok {
			return 0, false
		}
		total += e
	}
	return total, true
}

// bestOf is the candidate with the least held-out error added to the
// states' terms (-1 if none can be).
func (s *heldOut) bestOf(fs []*foldState) (int, float64) {
	best, bestLoss := -1, math.Inf(1)
	for ci, c := range s.pool {
		if l, ok := sumTry(fs, c.col); ok && l < bestLoss {
			best, bestLoss = ci, l
		}
	}
	return best, bestLoss
}

// comboLoss is the held-out error of the terms cols per parameter
// combination: the mean of its rows' lossFn (rows with y = 0 left out).
func (s *heldOut) comboLoss(cols [][]float64) []float64 {
	sum := make([]float64, s.ncombo)
	cnt := make([]float64, s.ncombo)
	for _, st := range s.states(cols) {
		for b, i := range st.held {
			if s.y[i] != 0 {
				sum[s.combo[i]] += lossFn(s.y[i]-st.pred[b], s.y[i])
				cnt[s.combo[i]]++
			}
		}
	}
	for c := range sum {
		if cnt[c] > 0 {
			sum[c] /= cnt[c]
		}
	}
	return sum
}

// mape is the held-out MAPE (a fraction) of per-combination errors.
func (s *heldOut) mape(l []float64) float64 { return stat.Mean(l, nil) }

// better reports whether the per-combination errors l improve on cur: by
// more than the threshold (relative), and by more than significance
// standard errors of the per-combination differences (a paired test over
// the held-out combinations: a term that helps by chance on a few of
// them, among thousands tried, does not pass) or, for the first term
// (cur is the mean's), on every combination (a sign test: on 4 footprints
// of a history, one combination whose error falls from 700 % to 10 %
// makes the differences too spread for the first test).
func (s *heldOut) better(l, cur []float64, first bool) bool {
	d := make([]float64, len(l))
	all := true
	for c := range l {
		d[c] = cur[c] - l[c]
		all = all && d[c] > 0
	}
	m, sd := stat.MeanStdDev(d, nil)
	return m > s.threshold*s.mape(cur) && (first && all || m > significance*sd/math.Sqrt(float64(len(d))))
}

// Pair screening: the candidates most correlated with y's residual on
// the terms chosen (all rows) are paired, and the pairs that lower the
// residual sum of squares most are kept.
const (
	screenTop  = 200 // candidates paired
	screenKeep = 50  // pairs evaluated on held-out error
)

// screenPairs returns the indices in pool of the screenKeep pairs of
// candidates that, added to the terms cols, fit y best on all the rows (by
// least squares: the residual sum of squares of a pair follows from the
// residuals' correlations).
func screenPairs(pool []candidate, cols [][]float64, y []float64) [][2]int {
	n := len(y)
	var basis [][]float64
	resid := func(c []float64) []float64 {
		r := append([]float64(nil), c...)
		for range 2 {
			for _, q := range basis {
				d := dot(q, r)
				for i := range r {
					r[i] -= d * q[i]
				}
			}
		}
		return r
	}
	one := make([]float64, n)
	for i := range one {
		one[i] = 1
	}
	for _, c := range append([][]float64{one}, cols...) {
		r := resid(c)
		norm := math.Sqrt(dot(r, r))
		if !(norm > 0) {
			continue
		}
		for i := range r {
			r[i] /= norm
		}
		basis = append(basis, r)
	}
	e := resid(y)
	type cand struct {
		i   int
		u   []float64 // unit residual of the candidate
		cor float64   // <u, e>
	}
	var cs []cand
	for i, c := range pool {
		r := resid(c.col)
		rr, cc := dot(r, r), dot(c.col, c.col)
		if !(rr > relTol*cc) {
			continue
		}
		norm := math.Sqrt(rr)
		for k := range r {
			r[k] /= norm
		}
		cs = append(cs, cand{i: i, u: r, cor: dot(r, e)})
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(math.Abs(b.cor), math.Abs(a.cor)) })
	cs = cs[:min(len(cs), screenTop)]
	type scored struct {
		p    [2]int
		gain float64
	}
	var top []scored
	for a := range cs {
		for b := a + 1; b < len(cs); b++ {
			g := dot(cs[a].u, cs[b].u)
			if !(1-g*g > 1e-8) {
				continue
			}
			ra, rb := cs[a].cor, cs[b].cor
			gain := (ra*ra + rb*rb - 2*ra*rb*g) / (1 - g*g)
			if len(top) < screenKeep || gain > top[len(top)-1].gain {
				top = append(top, scored{[2]int{cs[a].i, cs[b].i}, gain})
				slices.SortStableFunc(top, func(x, y scored) int { return cmp.Compare(y.gain, x.gain) })
				top = top[:min(len(top), screenKeep)]
			}
		}
	}
	out := make([][2]int, len(top))
	for k, s := range top {
		out[k] = s.p
	}
	return out
}

// comboFolds assigns each row to a fold by its parameter combination
// (rows with equal variables share a fold): the combinations are shuffled
// by PCG(seed) and dealt round-robin to min(want, combinations) folds
// (want 0: 5). It returns the folds, each row's combination, the number
// of combinations and of folds.
func comboFolds(rows [][]float64, want int, seed uint64) (fold, combo []int, ncombo, k int) {
	if want <= 0 {
		want = 5
	}
	id := map[string]int{}
	combo = make([]int, len(rows))
	buf := make([]byte, 0, 64)
	for i, r := range rows {
		buf = buf[:0]
		for _, v := range r {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
		c, ok := id[string(buf)]
		if !ok {
			c = len(id)
			id[string(buf)] = c
		}
		combo[i] = c
	}
	k = max(min(want, len(id)), 1)
	rng := rand.New(rand.NewPCG(seed, 0x5e1ec7))
	perm := rng.Perm(len(id))
	fold = make([]int, len(rows))
	for i, c := range combo {
		fold[i] = perm[c] % k
	}
	return fold, combo, len(id), k
}

// foldState is one fold of the held-out selection: an orthonormal basis
// of the terms chosen on the training rows (Gram-Schmidt, twice), each
// vector's values on the held-out rows (the same combination of the terms
// evaluated there), the training residual of y and the held-out
// prediction.
type foldState struct {
	train, held []int
	y           []float64
	q, qh       [][]float64 // basis on the training rows, on the held-out rows
	resid       []float64   // y's training residual
	pred        []float64   // held-out predictions
	r, rh       []float64   // scratch
}

func newFoldState(folds []int, f int, y []float64) *foldState {
	st := &foldState{y: y}
	for i, g := range folds {
		if g == f {
			st.held = append(st.held, i)
		} else {
			st.train = append(st.train, i)
		}
	}
	st.r = make([]float64, len(st.train))
	st.rh = make([]float64, len(st.held))
	// The intercept.
	one := make([]float64, len(y))
	for i := range one {
		one[i] = 1
	}
	st.resid = make([]float64, len(st.train))
	for a, i := range st.train {
		st.resid[a] = y[i]
	}
	st.pred = make([]float64, len(st.held))
	st.add(one)
	return st
}

// project leaves in st.r and st.rh the part of col orthogonal to the basis
// on the training rows (and the same combination on the held-out rows),
// and returns its squared norm and col's on the training rows.
func (st *foldState) project(col []float64) (rr, cc float64) {
	for a, i := range st.train {
		st.r[a] = col[i]
		cc += col[i] * col[i]
	}
	for b, i := range st.held {
		st.rh[b] = col[i]
	}
	for range 2 {
		for j, q := range st.q {
			d := 0.0
			for a, v := range q {
				d += v * st.r[a]
			}
			for a, v := range q {
				st.r[a] -= d * v
			}
			for b, v := range st.qh[j] {
				st.rh[b] -= d * v
			}
		}
	}
	for _, v := range st.r {
		rr += v * v
	}
	return rr, cc
}

// try returns the held-out error (lossFn summed) with col added; ok is
// false when col depends on the terms on the training rows.
func (st *foldState) try(col []float64) (float64, bool) {
	rr, cc := st.project(col)
	if !(rr > relTol*cc) {
		return 0, false
	}
	beta := 0.0
	for a, v := range st.r {
		beta += v * st.resid[a]
	}
	beta /= rr
	sum := 0.0
	for b, i := range st.held {
		d := st.y[i] - (st.pred[b] + beta*st.rh[b])
		sum += lossFn(d, st.y[i])
	}
	return sum, true
}

// lossFn is a held-out row's error: |d/y|, the row's part of the MAPE (0
// where y is 0, as MAPE leaves such rows out).
func lossFn(d, y float64) float64 {
	if y == 0 {
		return 0
	}
	return math.Abs(d / y)
}

// add puts col in the basis and updates the residual and the predictions.
func (st *foldState) add(col []float64) {
	rr, _ := st.project(col)
	norm := math.Sqrt(rr)
	q := make([]float64, len(st.r))
	qh := make([]float64, len(st.rh))
	for a := range q {
		q[a] = st.r[a] / norm
	}
	for b := range qh {
		qh[b] = st.rh[b] / norm
	}
	d := 0.0
	for a, v := range q {
		d += v * st.resid[a]
	}
	for a, v := range q {
		st.resid[a] -= d * v
	}
	for b, v := range qh {
		st.pred[b] += d * v
	}
	st.q, st.qh = append(st.q, q), append(st.qh, qh)
}
