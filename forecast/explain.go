package forecast

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"text/tabwriter"

	"github.com/tracecast/tracecast"
)

// What --explain reports (docs/forecasts.md, "Why a forecast is what it
// is"): per (query, horizon) of the auto method, each expert's mean weight
// in the mix of p over the run's issues and its own MSE over the scored
// forecasts, and each feature of the learner's permutation importance on a
// sample of the scored forecasts. The engine does none of it unless its
// Sink has an Explain function: a group's explainer is nil then, and the
// hot path tests that pointer only.

// FeatureInfo names a feature of the auto method's learner (of p).
type FeatureInfo struct {
	Name, Doc string
}

// Features are the learner's features of p, in its order; the first,
// the intercept, is not reported.
var Features = [numFeatP + numCtx]FeatureInfo{
	featOne:    {"intercept", "the constant 1"},
	featKS:     {"occupancy_H", "share of the last H with X ≥ k (ks-paper's forecast)"},
	featOcc01:  {"occupancy_0.1H", "share of the last 0.1 H with X ≥ k"},
	featOcc03:  {"occupancy_0.3H", "share of the last 0.3 H with X ≥ k"},
	featOcc3:   {"occupancy_3H", "share of the last 3 H with X ≥ k"},
	featOcc10:  {"occupancy_10H", "share of the last 10 H with X ≥ k"},
	featNow:    {"now", "[X(t) ≥ k] (persistence's forecast)"},
	featClim:   {"climatology", "share of the run so far with X ≥ k"},
	featAbove1: {"now_k+1", "[X(t) ≥ k+1]"},
	featAbove2: {"now_k+2", "[X(t) ≥ k+2]"},
	featBelow1: {"now_k-1", "[X(t) ≥ k−1]"},

	numFeatP + ctxReady:     {"ready_tasks", "ready tasks / R (StarPU's count)"},
	numFeatP + ctxWaiting:   {"waiting_tasks", "(submitted − busy) / R: tasks waiting somewhere"},
	numFeatP + ctxNoWait:    {"no_task_waiting", "[no task waiting]: idle workers stay idle"},
	numFeatP + ctxPhase:     {"end_phase", "1 − e^(−time since the last submission / H)"},
	numFeatP + ctxFreeSoon:  {"busy_ending_in_half_H", "busy containers expected to end within H/2, / R"},
	numFeatP + ctxIdleLong:  {"idle_outlasting_H", "idle containers whose state is expected to outlast H, / R"},
	numFeatP + ctxComm:      {"communicating", "communicating containers / R (StarPU: fetching input)"},
	numFeatP + ctxCrossUp:   {"cross_up", "[X + busy ending within H/2 ≥ k]"},
	numFeatP + ctxCrossDown: {"cross_down", "[X − idle ending within H/2 ≥ k]"},
}

// ExpertNames are the experts of the mix, in its order.
var ExpertNames = [numExperts]string{"learner", "prior", "ks-paper", "persistence", "climatology", "queue"}

// ExpertDocs say what each expert forecasts.
var ExpertDocs = [numExperts]string{
	"the online ridge regression on the features below",
	"ks-paper and persistence mixed by the indicator's memory over H",
	"the share of the last H with X ≥ k",
	"[X(t) ≥ k]",
	"the share of the run so far with X ≥ k",
	"[X_q ≥ k]: the idle and soon-free containers less the tasks waiting",
}

// Explain's sample and permutations.
const (
	// explainSample bounds the scored forecasts kept for the permutation
	// importances: a systematic sample over the whole run (every s-th
	// scored forecast, s doubling each time the sample fills).
	explainSample = 8192
	// explainRepeats permutations per feature, of explainSeed.
	explainRepeats = 5
	explainSeed    = 35
)

// explainer is one group's: what --explain needs, gathered as the engine
// issues and scores.
type explainer struct {
	d       int // the learner's features
	issues  int
	wsum    [numExperts]float64 // Σ weight in the mix of p, over issues
	scored  int
	sq      [numExperts]float64 // Σ squared errors of the experts' p
	sqMix   float64
	present uint32 // context features present at some issue (bit i: numFeatP+i)
	ctx     bool   // the learner reads context features
	queueOK bool   // the queue had task counts at some issue
	// q holds the rows of the forecasts waiting for their outcome, in
	// issue order (as the group's pending); sample the sampled scored ones.
	q      [][]float64
	qhead  int
	sample [][]float64
	stride int
	done   bool
}

// A row: the learner's features (d), its coefficients at the issue (d),
// then these.
const (
	rowPR    = iota                // the learner's w·x, unclamped
	rowG                           // the prior's weight on persistence, G(κH)
	rowMix                         // the forecast p
	rowY                           // the outcome
	rowExp                         // the experts' p (numExperts)
	rowW     = rowExp + numExperts // their weights in the mix (numExperts)
	rowExtra = rowW + numExperts
)

func newExplainer(d int, ctx bool) *explainer {
	return &explainer{d: d, ctx: ctx, stride: 1}
}

// issued records an issue: the features fp, the learner's coefficients w
// and unclamped forecast pr, the prior's weight on persistence gk, the
// experts' p, their weights in the mix, the forecast p; present says which
// context fields the trace had at t.
func (x *explainer) issued(fp, w []float64, pr, gk float64, aux *experts, ws *[numExperts]float64, p float64, present uint32, queueOK bool) {
	x.issues++
	for j := range ws {
		x.wsum[j] += ws[j]
	}
	x.present |= present
	x.queueOK = x.queueOK || queueOK
	d := x.d
	row := make([]float64, 2*d+rowExtra)
	copy(row, fp[:d])
	copy(row[d:], w[:d])
	ex := row[2*d:]
	ex[rowPR], ex[rowG], ex[rowMix] = pr, gk, p
	copy(ex[rowExp:], aux[0][:])
	copy(ex[rowW:], ws[:])
	x.q = append(x.q, row)
}

// matured records the outcome y of the oldest forecast waiting.
func (x *explainer) matured(y float64) {
	row := x.q[x.qhead]
	x.q[x.qhead] = nil
	x.qhead++
	if x.qhead > 256 && x.qhead > len(x.q)/2 {
		n := copy(x.q, x.q[x.qhead:])
		clear(x.q[n:])
		x.q = x.q[:n]
		x.qhead = 0
	}
	ex := row[2*x.d:]
	ex[rowY] = y
	for j := 0; j < numExperts; j++ {
		x.sq[j] += (ex[rowExp+j] - y) * (ex[rowExp+j] - y)
	}
	x.sqMix += (ex[rowMix] - y) * (ex[rowMix] - y)
	if x.scored%x.stride == 0 {
		if len(x.sample) == explainSample {
			n := 0
			for i := 0; i < len(x.sample); i += 2 {
				x.sample[n] = x.sample[i]
				n++
			}
			clear(x.sample[n:])
			x.sample = x.sample[:n]
			x.stride *= 2
		}
		if x.scored%x.stride == 0 {
			x.sample = append(x.sample, row)
		}
	}
	x.scored++
}

// presentCtx says which context features the trace has data for at t
// (bit i: context feature i): the task counts and the submissions may be
// missing; the containers' states are always there.
func presentCtx(c *Context) uint32 {
	m := uint32(1<<ctxFreeSoon | 1<<ctxIdleLong | 1<<ctxComm | 1<<ctxCrossUp | 1<<ctxCrossDown)
	if !math.IsNaN(c.Ready) {
		m |= 1 << ctxReady
	}
	if !math.IsNaN(c.Submitted) {
		m |= 1<<ctxWaiting | 1<<ctxNoWait
	}
	if !math.IsNaN(c.SinceSubmit) {
		m |= 1 << ctxPhase
	}
	return m
}

// featurePresent reports whether the learner had data for feature j.
func (x *explainer) featurePresent(j int) bool {
	if j < numFeatP {
		return true
	}
	return x.ctx && x.present&(1<<(j-numFeatP)) != 0
}

// Importance is a feature's permutation importance over rows: how much
// the MSE of the learner's p and of the forecast's (the mix's) grows when
// the feature's values are permuted among the rows (the mean of
// explainRepeats permutations of a fixed seed), each row's coefficients
// and weights held as they were at its issue. The forecast's counts every
// expert that reads the feature: the learner, and ks-paper
// (occupancy_H), persistence (now), climatology and the prior (occupancy_H
// and now); the queue reads the context itself, not the learner's
// features, and is held.
type Importance struct {
	Learner, Mix float64
	// Coefficient is the mean coefficient, SD the feature's standard
	// deviation over the rows.
	Coefficient, SD float64
}

// mix is a row's forecast with feature j's value v (v = the row's own:
// the forecast as issued), and the learner's p.
func (x *explainer) mix(r []float64, j int, v float64) (pm, pl float64) {
	d := x.d
	ex := r[2*d:]
	dv := v - r[j]
	pl = clamp01(ex[rowPR] + r[d+j]*dv)
	pm = ex[rowW+expLearner] * pl
	for e := expPrior; e < numExperts; e++ {
		pe := ex[rowExp+e]
		switch {
		case e == expPrior && j == featKS:
			pe += (1 - ex[rowG]) * dv
		case e == expPrior && j == featNow:
			pe += ex[rowG] * dv
		case e == expKS && j == featKS, e == expPersistence && j == featNow, e == expClimatology && j == featClim:
			pe = v
		}
		pm += ex[rowW+e] * pe
	}
	return clamp01(pm), pl
}

// importance computes feature j's over the sample.
func (x *explainer) importance(j int) Importance {
	rows, d := x.sample, x.d
	n := len(rows)
	if n == 0 {
		return Importance{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	}
	var base, baseMix, coef, mean, m2 float64
	for i, r := range rows {
		y := r[2*d+rowY]
		pm, pl := x.mix(r, j, r[j])
		base += (pl - y) * (pl - y)
		baseMix += (pm - y) * (pm - y)
		coef += r[d+j]
		dv := r[j] - mean
		mean += dv / float64(i+1)
		m2 += dv * (r[j] - mean)
	}
	perm := make([]int, n)
	rng := rand.New(rand.NewPCG(explainSeed, uint64(j)))
	var dl, dm float64
	for range explainRepeats {
		for i := range perm {
			perm[i] = i
		}
		rng.Shuffle(n, func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		var sl, sm float64
		for i, r := range rows {
			y := r[2*d+rowY]
			pm, pl := x.mix(r, j, rows[perm[i]][j])
			sl += (pl - y) * (pl - y)
			sm += (pm - y) * (pm - y)
		}
		dl += sl - base
		dm += sm - baseMix
	}
	nf := float64(n)
	return Importance{Learner: dl / explainRepeats / nf, Mix: dm / explainRepeats / nf,
		Coefficient: coef / nf, SD: math.Sqrt(m2 / nf)}
}

// explanations are the group's records (auto only).
func (e *Engine) explanations(g *group) []tracecast.Explanation {
	x := g.ex
	base := tracecast.Explanation{Run: e.cfg.Run, Query: g.q.Text, Horizon: g.h, Method: string(e.cfg.Method), Present: true}
	prefix := e.cfg.Run + "/" + g.q.Text + "/" + g.hLabel + "/explain/"
	nan := math.NaN()
	out := []tracecast.Explanation{}
	rec := func(kind, name string, present bool, n int, mse, w, coef, sd, il, im float64) {
		r := base
		r.ID, r.Kind, r.Name, r.Present, r.N = prefix+kind+"/"+name, kind, name, present, n
		r.MSE, r.Weight, r.Coefficient, r.SD, r.ImportanceLearner, r.ImportanceMix = mse, w, coef, sd, il, im
		out = append(out, r)
	}
	div := func(a float64, n int) float64 {
		if n == 0 {
			return nan
		}
		return a / float64(n)
	}
	rec("forecast", string(e.cfg.Method), true, x.scored, div(x.sqMix, x.scored), nan, nan, nan, nan, nan)
	for j := 0; j < numExperts; j++ {
		present := j != expQueue || x.queueOK
		rec("expert", ExpertNames[j], present, x.scored, div(x.sq[j], x.scored), div(x.wsum[j], x.issues), nan, nan, nan, nan)
	}
	for j := featOne + 1; j < len(Features); j++ {
		if !x.featurePresent(j) {
			rec("feature", Features[j].Name, false, 0, nan, nan, nan, nan, nan, nan)
			continue
		}
		im := x.importance(j)
		rec("feature", Features[j].Name, true, len(x.sample), nan, nan, im.Coefficient, im.SD, im.Learner, im.Mix)
	}
	return out
}

// WriteExplanations prints explanation records as tables for people, one
// per (run, query, horizon) in the order they come: the experts' mean
// weights in the mix and MSE, then the learner's features by their
// permutation importance for the forecast (absent ones last, marked so).
func WriteExplanations(w io.Writer, xs []tracecast.Explanation) error {
	type key struct {
		run, q string
		h      float64
	}
	var keys []key
	by := map[key][]tracecast.Explanation{}
	for _, x := range xs {
		k := key{x.Run, x.Query, x.Horizon}
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], x)
	}
	num := func(f string, v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return fmt.Sprintf(f, v)
	}
	for i, k := range keys {
		var fcast tracecast.Explanation
		var exps, feats []tracecast.Explanation
		for _, x := range by[k] {
			switch x.Kind {
			case "forecast":
				fcast = x
			case "expert":
				exps = append(exps, x)
			case "feature":
				feats = append(feats, x)
			}
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "why the forecasts of %s over %s are what they are (method %s; %d forecasts with their outcome, MSE of p %s):\n",
			k.q, HorizonLabel(k.h), fcast.Method, fcast.N, num("%.5f", fcast.MSE))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  expert\tmean weight in the mix\tits MSE of p\twhat it forecasts\n")
		for _, x := range exps {
			doc := ""
			for j, n := range ExpertNames {
				if n == x.Name {
					doc = ExpertDocs[j]
				}
			}
			if !x.Present {
				doc = "absent (no task counts read): it repeats the prior's forecast"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", x.Name, num("%.3f", x.Weight), num("%.5f", x.MSE), doc)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		slices.SortStableFunc(feats, func(a, b tracecast.Explanation) int {
			if a.Present != b.Present {
				return map[bool]int{true: -1, false: 1}[a.Present]
			}
			if c := cmp.Compare(nanLow(b.ImportanceMix), nanLow(a.ImportanceMix)); c != 0 {
				return c
			}
			return cmp.Compare(nanLow(b.ImportanceLearner), nanLow(a.ImportanceLearner))
		})
		n := 0
		for _, x := range feats {
			n = max(n, x.N)
		}
		fmt.Fprintf(w, "  the features, by how much permuting each among %d of those forecasts raises the MSE of p (the forecast's: through the learner and the experts that read it):\n", n)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  feature\t+MSE of the forecast\t+MSE of the learner\tmean coefficient\tsd\twhat it is\n")
		for _, x := range feats {
			doc := ""
			for _, f := range Features {
				if f.Name == x.Name {
					doc = f.Doc
				}
			}
			if !x.Present {
				fmt.Fprintf(tw, "  %s\tabsent\tabsent\t-\t-\t%s (not read from this trace)\n", x.Name, doc)
				continue
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", x.Name, num("%+.5f", x.ImportanceMix), num("%+.5f", x.ImportanceLearner),
				num("%+.3f", x.Coefficient), num("%.3f", x.SD), doc)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func nanLow(v float64) float64 {
	if math.IsNaN(v) {
		return math.Inf(-1)
	}
	return v
}

// ReadExplanations reads the explanation records of JSON lines (other
// records skipped; null numbers are NaN); name is for errors
// (FILE:LINE: reason).
func ReadExplanations(r io.Reader, name string) ([]tracecast.Explanation, error) {
	var xs []tracecast.Explanation
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"explanation"`)) {
			continue
		}
		var rec struct {
			Record string `json:"record"`
			tracecast.Explanation
			MSE               *float64 `json:"mse"`
			Weight            *float64 `json:"weight"`
			Coefficient       *float64 `json:"coefficient"`
			SD                *float64 `json:"sd"`
			ImportanceLearner *float64 `json:"importance_learner"`
			ImportanceMix     *float64 `json:"importance_mix"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if rec.Record != "explanation" {
			continue
		}
		orNaN := func(p *float64) float64 {
			if p == nil {
				return math.NaN()
			}
			return *p
		}
		x := rec.Explanation
		x.MSE, x.Weight, x.Coefficient, x.SD = orNaN(rec.MSE), orNaN(rec.Weight), orNaN(rec.Coefficient), orNaN(rec.SD)
		x.ImportanceLearner, x.ImportanceMix = orNaN(rec.ImportanceLearner), orNaN(rec.ImportanceMix)
		xs = append(xs, x)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return xs, nil
}

// WriteExplanationRecords writes explanation records as JSON lines.
func WriteExplanationRecords(w io.Writer, xs []tracecast.Explanation) error {
	var b []byte
	for _, x := range xs {
		b = append(x.AppendJSON(b), '\n')
	}
	_, err := w.Write(b)
	return err
}
