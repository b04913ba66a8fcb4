package eiger

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast/models"
)

// Table is a measurement table: named columns of numbers (NaN where a
// cell is empty or null) and the text of every cell (for grouping).
type Table struct {
	// Source names the file, for messages.
	Source  string
	Columns []string
	Num     map[string][]float64
	Text    map[string][]string
	// Params are the columns that are a task's parameters (a task table's
	// params), the default inputs; empty for other tables.
	Params []string
	// NonInputs are numeric columns that are not inputs by default (a task
	// table's times, energy, predictions).
	NonInputs []string
	// Lines are the rows' lines in the source (0 when it has none).
	Lines []int64
}

// Rows is the number of rows.
func (t *Table) Rows() int { return len(t.Lines) }

// Spec says what to fit.
type Spec struct {
	Target  string
	GroupBy []string
	// Inputs restricts the inputs (nil: the table's parameters, or every
	// numeric column but the target and the group columns).
	Inputs []string
	Options
	// Folds of the cross-validation (0: none).
	Folds int
	// SizeColumn is the data size for StarPU's a·size^b + c baseline
	// ("" : none); FootprintColumn splits the history baseline's means
	// (StarPU's history model is per footprint; "": per group).
	SizeColumn, FootprintColumn string
	// FoldByInputs puts rows with the same inputs in the same fold of the
	// cross-validation (held-out parameter combinations), instead of
	// dealing rows.
	FoldByInputs bool
	// Declared are terms of the inputs (M^2*N, N^3*K) given rather than
	// selected: least squares on them is a baseline, fitted on each group
	// and cross-validated on the same folds (StarPU's multiple-regression
	// model of a codelet that declares its monomials).
	Declared []string
}

// File is what fit-model writes: one model per group.
type File struct {
	Model     string   `json:"model"`
	Source    string   `json:"source"`
	Target    string   `json:"target"`
	GroupBy   []string `json:"group_by"`
	Inputs    []string `json:"inputs,omitempty"`
	Threshold float64  `json:"threshold"`
	Clusters  int      `json:"clusters"`
	PCA       bool     `json:"pca"`
	Pool      []string `json:"pool"`
	Seed      uint64   `json:"seed"`
	Folds     int      `json:"folds"`
	// MaxFactors > 0: the pool is the products of up to that many factors,
	// each a function of Pool (Products), and PoolSingles alone (the
	// default: DefaultProducts); 0: Table 1's pool.
	MaxFactors  int      `json:"max_factors,omitempty"`
	PoolSingles []string `json:"pool_singles,omitempty"`
	// Selection is "held-out" for the held-out selection ("": adjusted R²).
	Selection string  `json:"selection,omitempty"`
	Groups    []Group `json:"groups"`
}

// ModelName is the model file's "model".
const ModelName = "eiger/seed003"

// Group is one group's model and validation.
type Group struct {
	// Name is the group's values joined by "/" ("GEMM/CPU"); "all" without
	// grouping.
	Name string            `json:"group"`
	Key  map[string]string `json:"key"`
	N    int               `json:"n"`
	// NoTarget rows were left out: their target is empty (no energy).
	NoTarget   int         `json:"rows_without_target"`
	Model      *Model      `json:"model,omitempty"`
	Error      string      `json:"error,omitempty"`
	Validation *Validation `json:"validation,omitempty"`
	// StarPU is StarPU's a·size^b + c fitted on the whole group.
	StarPU *PowerLaw `json:"starpu_regression,omitempty"`
	// Declared is least squares on Spec.Declared on the whole group.
	Declared *DeclaredFit `json:"declared,omitempty"`
	// Fitted are (measured, predicted) on the training rows, HeldOut on
	// the cross-validation's held-out rows: for plots, not in the file.
	Fitted, HeldOut [][2]float64 `json:"-"`
}

// Scores are held-out errors over the N − Failed rows predicted: MAPE (%,
// rows with a non-zero target) and R² = 1 − SSE/SST (SST about those
// rows' mean; nil when it is 0), with how many predictions were negative
// and how many failed (a term undefined at the row: x^-1 at 0, ...).
type Scores struct {
	N        int      `json:"n"`
	MAPE     *float64 `json:"mape_pct"`
	R2       *float64 `json:"r2"`
	Negative int      `json:"negative"`
	Failed   int      `json:"failed"`
}

// Validation is k-fold cross-validation of the model and of the two
// baselines on the same folds.
type Validation struct {
	Folds   int     `json:"folds"`
	Eiger   Scores  `json:"eiger"`
	History Scores  `json:"history_mean"`
	StarPU  *Scores `json:"starpu_regression,omitempty"`
	// StarPUNote says why the regression baseline is missing.
	StarPUNote string `json:"starpu_regression_note,omitempty"`
	// Declared scores least squares on the declared terms.
	Declared *Scores `json:"declared,omitempty"`
	// ByInputs is true when the folds hold out parameter combinations.
	ByInputs bool `json:"by_inputs,omitempty"`
}

// DeclaredFit is least squares on terms given: weights of "1" and the
// terms, and the fit's error on the rows.
type DeclaredFit struct {
	Terms   []string  `json:"terms"`
	Weights []float64 `json:"weights"`
	RMSE    float64   `json:"rmse"`
	Error   string    `json:"error,omitempty"`
	terms   []Term
}

// FitDeclared is least squares of y on the intercept and the terms names
// (of the variables vars), on rows x.
func FitDeclared(names, vars []string, x [][]float64, y []float64) (*DeclaredFit, error) {
	d := &DeclaredFit{Terms: append([]string{"1"}, names...)}
	var cols [][]float64
	for _, name := range names {
		t, err := ParseTerm(name, vars)
		if err != nil {
			return nil, err
		}
		d.terms = append(d.terms, t)
		col := make([]float64, len(y))
		for i := range y {
			col[i] = t.Eval(x[i])
			if math.IsNaN(col[i]) || math.IsInf(col[i], 0) {
				return nil, fmt.Errorf("term %s is undefined at row %d", name, i+1)
			}
		}
		cols = append(cols, col)
	}
	w, err := fitTerms(cols, y)
	if err != nil {
		return nil, fmt.Errorf("least squares on %s: %w", strings.Join(names, ", "), err)
	}
	d.Weights = w
	d.RMSE = math.Sqrt(rss(cols, w, y) / float64(len(y)))
	return d, nil
}

// Eval is the declared model's prediction at a row of the variables.
func (d *DeclaredFit) Eval(v []float64) float64 {
	p := d.Weights[0]
	for k, t := range d.terms {
		p += d.Weights[1+k] * t.Eval(v)
	}
	return p
}

// PowerLaw is a·size^b + c.
type PowerLaw struct {
	A    float64 `json:"a"`
	B    float64 `json:"b"`
	C    float64 `json:"c"`
	RMSE float64 `json:"rmse"`
}

// Eval is a·size^b + c.
func (p PowerLaw) Eval(size float64) float64 { return p.A*math.Pow(size, p.B) + p.C }

// FitPowerLaw fits StarPU's non-linear regression model a·size^b + c by
// least squares: for each b, (a, c) by QR; b by a grid over [-1, 3] then a
// golden-section search. It needs three distinct positive sizes.
func FitPowerLaw(size, y []float64) (PowerLaw, error) {
	distinct := map[float64]bool{}
	for _, s := range size {
		if !(s > 0) {
			return PowerLaw{}, fmt.Errorf("size %g is not positive", s)
		}
		distinct[s] = true
	}
	if len(distinct) < 3 {
		return PowerLaw{}, fmt.Errorf("%d distinct sizes: a·size^b + c needs 3", len(distinct))
	}
	sse := func(b float64) (PowerLaw, float64) {
		x := make([][]float64, len(y))
		for i, s := range size {
			x[i] = []float64{math.Pow(s, b), 1}
		}
		w, err := models.LeastSquares(x, y)
		if err != nil {
			return PowerLaw{}, math.Inf(1)
		}
		p := PowerLaw{A: w[0], B: b, C: w[1]}
		e := 0.0
		for i, s := range size {
			d := y[i] - p.Eval(s)
			e += d * d
		}
		return p, e
	}
	best, be := 0.0, math.Inf(1)
	for b := -1.0; b <= 3.0001; b += 0.02 {
		if _, e := sse(b); e < be {
			best, be = b, e
		}
	}
	lo, hi := best-0.02, best+0.02
	g := (math.Sqrt(5) - 1) / 2
	for range 60 {
		m1, m2 := hi-g*(hi-lo), lo+g*(hi-lo)
		_, e1 := sse(m1)
		_, e2 := sse(m2)
		if e1 < e2 {
			hi = m2
		} else {
			lo = m1
		}
	}
	p, e := sse((lo + hi) / 2)
	if math.IsInf(e, 1) {
		return PowerLaw{}, errors.New("a·size^b + c: not identifiable")
	}
	p.RMSE = math.Sqrt(e / float64(len(y)))
	return p, nil
}

// DefaultInputs are the inputs when none are given.
func (t *Table) DefaultInputs(target string, groupBy []string) []string {
	if len(t.Params) > 0 {
		var out []string
		for _, p := range t.Params {
			if p != target && indexOf(groupBy, p) < 0 {
				out = append(out, p)
			}
		}
		return out
	}
	var out []string
	for _, c := range t.Columns {
		if _, ok := t.Num[c]; !ok || c == target || indexOf(groupBy, c) >= 0 || indexOf(t.NonInputs, c) >= 0 {
			continue
		}
		out = append(out, c)
	}
	return out
}

// FitGroups fits one model per group of the table's rows.
func FitGroups(t *Table, s Spec) (*File, error) {
	tgt, ok := t.Num[s.Target]
	if !ok {
		if _, isText := t.Text[s.Target]; isText {
			return nil, fmt.Errorf("%s: target column %q is not numeric", t.Source, s.Target)
		}
		return nil, fmt.Errorf("%s: no column %q (columns: %s)", t.Source, s.Target, strings.Join(t.Columns, ", "))
	}
	some := false
	for _, v := range tgt {
		if !math.IsNaN(v) {
			some = true
			break
		}
	}
	if !some {
		msg := fmt.Sprintf("%s: no row has a value of %s", t.Source, s.Target)
		if s.Target == "energy_j" {
			msg += " (tracecast tasks gives energies with --power)"
		}
		return nil, errors.New(msg)
	}
	for _, g := range s.GroupBy {
		if _, ok := t.Text[g]; !ok {
			return nil, fmt.Errorf("%s: no group column %q", t.Source, g)
		}
	}
	inputs := s.Inputs
	if inputs == nil {
		inputs = t.DefaultInputs(s.Target, s.GroupBy)
	}
	for _, in := range inputs {
		if _, ok := t.Num[in]; !ok {
			if _, isText := t.Text[in]; isText {
				return nil, fmt.Errorf("%s: input column %q is not numeric", t.Source, in)
			}
			return nil, fmt.Errorf("%s: no input column %q", t.Source, in)
		}
		if err := CheckName(in); err != nil {
			return nil, fmt.Errorf("%s: %w", t.Source, err)
		}
	}
	names := s.Pool
	if s.Pool == nil {
		names, _ = ParsePool("")
		if s.MaxFactors == 0 {
			s.Pool = names
		}
	}
	f := &File{Model: ModelName, Source: t.Source, Target: s.Target, GroupBy: s.GroupBy, Inputs: s.Inputs,
		Threshold: s.Threshold, Clusters: max(s.Clusters, 1), PCA: s.PCA, Seed: s.Seed, Folds: s.Folds,
		MaxFactors: s.MaxFactors}
	if s.Select != SelectAdjR2 {
		f.Selection = s.Select.String()
	}
	for _, p := range names {
		f.Pool = append(f.Pool, PoolNames[p])
	}
	if s.MaxFactors > 0 && s.Pool == nil {
		f.Pool = []string{PoolNames[Lin], PoolNames[Log2]}
		for _, p := range ProductSingles {
			f.PoolSingles = append(f.PoolSingles, "x^"+strconv.FormatFloat(p, 'g', -1, 64))
		}
	}
	groups := map[string][]int{}
	for i := range t.Rows() {
		var parts []string
		for _, g := range s.GroupBy {
			parts = append(parts, t.Text[g][i])
		}
		name := strings.Join(parts, "/")
		if len(s.GroupBy) == 0 {
			name = "all"
		}
		groups[name] = append(groups[name], i)
	}
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		rows := groups[name]
		g := Group{Name: name, Key: map[string]string{}}
		for _, col := range s.GroupBy {
			g.Key[col] = t.Text[col][rows[0]]
		}
		var keep []int
		for _, i := range rows {
			if math.IsNaN(tgt[i]) {
				g.NoTarget++
			} else {
				keep = append(keep, i)
			}
		}
		g.N = len(keep)
		if len(keep) == 0 {
			g.Error = fmt.Sprintf("no value of %s in this group", s.Target)
			f.Groups = append(f.Groups, g)
			continue
		}
		// Inputs missing in some of the group's rows are not the group's.
		var ins []string
		var missing []Dropped
		for _, in := range inputs {
			col := t.Num[in]
			ok := true
			for _, i := range keep {
				if math.IsNaN(col[i]) {
					ok = false
					break
				}
			}
			if ok {
				ins = append(ins, in)
			} else {
				missing = append(missing, Dropped{Input: in, Reason: "missing in some of the group's rows"})
			}
		}
		x, y := matrix(t, ins, keep, tgt)
		md, err := Fit(ins, x, y, s.Options)
		if err != nil {
			g.Error = err.Error()
			f.Groups = append(f.Groups, g)
			continue
		}
		md.Dropped = append(missing, md.Dropped...)
		g.Model = md
		for k := range y {
			in := map[string]float64{}
			for j, name := range ins {
				in[name] = x[k][j]
			}
			if p, _, err := md.Predict(in); err == nil {
				g.Fitted = append(g.Fitted, [2]float64{y[k], p})
			}
		}
		var size []float64
		if s.SizeColumn != "" {
			if col, ok := t.Num[s.SizeColumn]; ok {
				size = make([]float64, len(keep))
				for k, i := range keep {
					size[k] = col[i]
				}
				if p, err := FitPowerLaw(size, y); err == nil {
					g.StarPU = &p
				}
			}
		}
		if len(s.Declared) > 0 {
			if d, err := FitDeclared(s.Declared, ins, x, y); err == nil {
				g.Declared = d
			} else {
				g.Declared = &DeclaredFit{Terms: append([]string{"1"}, s.Declared...), Error: err.Error()}
			}
		}
		var fp []string
		if s.FootprintColumn != "" {
			if col, ok := t.Text[s.FootprintColumn]; ok {
				fp = make([]string, len(keep))
				for k, i := range keep {
					fp[k] = col[i]
				}
			}
		}
		if s.Folds >= 2 {
			g.Validation, g.HeldOut = crossValidate(ins, x, y, size, fp, s)
		}
		f.Groups = append(f.Groups, g)
	}
	return f, nil
}

func matrix(t *Table, ins []string, rows []int, tgt []float64) ([][]float64, []float64) {
	x := make([][]float64, len(rows))
	y := make([]float64, len(rows))
	for k, i := range rows {
		x[k] = make([]float64, len(ins))
		for j, in := range ins {
			x[k][j] = t.Num[in][i]
		}
		y[k] = tgt[i]
	}
	return x, y
}

// score accumulates held-out predictions.
type score struct {
	Scores
	sse, ape float64
	nz       int
	ys       []float64 // targets of the rows predicted
}

func (s *score) add(y, p float64, ok bool) {
	s.N++
	if !ok || math.IsNaN(p) || math.IsInf(p, 0) {
		s.Failed++
		return
	}
	s.ys = append(s.ys, y)
	s.sse += (y - p) * (y - p)
	if y != 0 {
		s.ape += math.Abs((y - p) / y)
		s.nz++
	}
	if p < 0 {
		s.Negative++
	}
}

// done computes the scores over the rows predicted (Failed says how many
// were not: a term undefined there).
func (s *score) done() Scores {
	if s.nz > 0 {
		mape := 100 * s.ape / float64(s.nz)
		s.MAPE = &mape
	}
	mean, sst := 0.0, 0.0
	for _, v := range s.ys {
		mean += v
	}
	mean /= float64(max(len(s.ys), 1))
	for _, v := range s.ys {
		sst += (v - mean) * (v - mean)
	}
	if sst > 0 {
		r2 := 1 - s.sse/sst
		s.R2 = &r2
	}
	return s.Scores
}

// Folds assigns each of n rows to one of k folds, shuffled by PCG(seed):
// the same seed gives the same folds.
func Folds(n, k int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0xf01d5))
	perm := rng.Perm(n)
	out := make([]int, n)
	for i, p := range perm {
		out[p] = i % k
	}
	return out
}

// crossValidate scores the model and the baselines on k folds.
func crossValidate(ins []string, x [][]float64, y, size []float64, fp []string, s Spec) (*Validation, [][2]float64) {
	n := len(y)
	v := &Validation{Folds: s.Folds}
	var held [][2]float64
	var fold []int
	nfolds := s.Folds
	if s.FoldByInputs {
		// As many folds as combinations when there are fewer (a history of
		// four footprints: leave one out).
		var ncombo int
		fold, _, ncombo, nfolds = comboFolds(x, s.Folds, s.Seed)
		v.ByInputs, v.Folds = true, nfolds
		if ncombo < 3 {
			v.StarPUNote = fmt.Sprintf("%d distinct parameter combination(s): fewer than 3, no cross-validation", ncombo)
			v.Folds = 0
			return v, nil
		}
	} else {
		if n < s.Folds {
			v.StarPUNote = fmt.Sprintf("%d rows: fewer than %d folds, no cross-validation", n, s.Folds)
			v.Folds = 0
			return v, nil
		}
		fold = Folds(n, s.Folds, s.Seed)
	}
	var ei, hi, st, de score
	deOK := len(s.Declared) > 0
	stOK := size != nil
	var stNote string
	if size == nil {
		stNote = "no size column"
	}
	for k := range nfolds {
		var tx [][]float64
		var ty, ts []float64
		var tf []string
		for i := range n {
			if fold[i] != k {
				tx, ty = append(tx, x[i]), append(ty, y[i])
				if size != nil {
					ts = append(ts, size[i])
				}
				if fp != nil {
					tf = append(tf, fp[i])
				}
			}
		}
		md, err := Fit(ins, tx, ty, s.Options)
		var dfit *DeclaredFit
		if deOK {
			var derr error
			if dfit, derr = FitDeclared(s.Declared, ins, tx, ty); derr != nil {
				deOK = false
			}
		}
		// History: the training mean per footprint (else per group).
		mean := map[string][2]float64{}
		all := 0.0
		for i, yy := range ty {
			key := ""
			if tf != nil {
				key = tf[i]
			}
			m := mean[key]
			mean[key] = [2]float64{m[0] + yy, m[1] + 1}
			all += yy
		}
		all /= float64(len(ty))
		var pl PowerLaw
		plOK := false
		if stOK {
			var perr error
			if pl, perr = FitPowerLaw(ts, ty); perr == nil {
				plOK = true
			} else {
				stOK, stNote = false, perr.Error()
			}
		}
		for i := range n {
			if fold[i] != k {
				continue
			}
			in := map[string]float64{}
			for j, name := range ins {
				in[name] = x[i][j]
			}
			if err != nil {
				ei.add(y[i], 0, false)
			} else {
				p, _, perr := md.Predict(in)
				ei.add(y[i], p, perr == nil)
				if perr == nil {
					held = append(held, [2]float64{y[i], p})
				}
			}
			h := all
			if fp != nil {
				if m, ok := mean[fp[i]]; ok {
					h = m[0] / m[1]
				}
			}
			hi.add(y[i], h, true)
			if plOK {
				st.add(y[i], pl.Eval(size[i]), true)
			}
			if deOK {
				de.add(y[i], dfit.Eval(x[i]), true)
			}
		}
	}
	v.Eiger = ei.done()
	v.History = hi.done()
	if deOK {
		sc := de.done()
		v.Declared = &sc
	}
	if stOK {
		sc := st.done()
		v.StarPU = &sc
	} else {
		v.StarPUNote = stNote
	}
	return v, held
}

// Find returns the group of a file by its key values (column → value).
func (f *File) Find(key map[string]string) (*Group, error) {
	var names []string
	for i := range f.Groups {
		g := &f.Groups[i]
		names = append(names, g.Name)
		match := true
		for _, col := range f.GroupBy {
			if v, ok := key[col]; !ok || v != g.Key[col] {
				match = false
				break
			}
		}
		if match {
			return g, nil
		}
	}
	var want []string
	for _, col := range f.GroupBy {
		want = append(want, col+"="+key[col])
	}
	sort.Strings(names)
	return nil, fmt.Errorf("no model for %s (groups: %s)", strings.Join(want, ", "), strings.Join(names, ", "))
}
