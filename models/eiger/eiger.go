// Package eiger builds analytical models of a metric (a task's duration or
// energy) as functions of its parameters, with the construction of Eiger
// (Anger (2016), chapter 3, §3.1.1):
//
//  1. Zero-variance elimination by principal component analysis (§3.1.1.1):
//     constant inputs are dropped; the others are standardised and their
//     principal components computed (gonum's PCA, an SVD); only directions
//     of zero variance are eliminated. By default the regressors then apply
//     to the original inputs that remain — one input is dropped per
//     zero-variance direction, the later one of a linearly dependent set —
//     and with PCA set to the principal components of non-zero variance,
//     as the seed does.
//  2. k-means clustering (§3.1.1.2) of the rows in that space (each
//     variable scaled by its standard deviation), k given (default 1),
//     seeded deterministically (k-means++ from a fixed PCG seed), squared
//     Euclidean distance; one model per cluster, and a prediction uses the
//     cluster of the nearest centre.
//  3. Forward model selection (§3.1.1.3, Algorithm 1) over Table 1's pool —
//     x^-2, x^-1, x^-0.5, log2(x), x^0.5, x, x^2 of each variable and
//     x*y of each pair — by adjusted R²: at each step every regressor left
//     is tried, the model refitted by least squares (gonum's QR, never the
//     normal equations), and the one giving the highest adjusted R² is
//     added if it raises adjusted R² by more than the threshold. A
//     regressor undefined somewhere on the cluster's data (x^-1 at 0, log2
//     of a non-positive value) or constant there is not a candidate; one
//     making the design rank-deficient is skipped.
//
// The model always has an intercept (eq. 1's β0): the "empty model" of
// Algorithm 1 is the cluster's mean, whose adjusted R² is 0, so a
// regressor enters only if it explains more than the threshold beyond the
// mean. (Algorithm 1 starts from −∞, which would add the first regressor
// even when it explains nothing.) Adjusted R² is eq. 3,
// 1 − (1 − R²)(n − 1)/(n − p − 1), p the regressors besides the intercept;
// a regressor leaving n − p − 1 < 1 is not tried.
package eiger

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/tracecast/tracecast/models"
)

// Options control a fit.
type Options struct {
	// Threshold is the least gain in adjusted R² for a regressor to enter.
	Threshold float64
	// Clusters is k (≥ 1). A group with fewer distinct rows gets fewer.
	Clusters int
	// PCA fits on the principal components instead of the inputs.
	PCA bool
	// Pool restricts the regressors (nil: all of Table 1).
	Pool []Func
	// Seed seeds k-means++ (the same seed gives the same clusters).
	Seed uint64
	// MaxFactors > 0 replaces Table 1's pool with the products of up to
	// MaxFactors factors (at most 4), each a function of Pool of one
	// variable (Products), or with Pool nil DefaultProducts.
	MaxFactors int
	// Select is the selection's criterion: adjusted R² on the training
	// rows (Algorithm 1) or the error on held-out parameter combinations.
	Select Selection
	// SelectFolds are the folds of the held-out selection (0: 5).
	SelectFolds int
}

// Selection is the criterion a regressor enters the model by.
type Selection int

const (
	// SelectAdjR2 is Algorithm 1: the largest gain in adjusted R² on the
	// training rows, above the threshold.
	SelectAdjR2 Selection = iota
	// SelectHeldOut chooses on held-out error (selectHeldOut).
	SelectHeldOut
)

// String is the selection's name in model files and on the command line.
func (s Selection) String() string {
	if s == SelectHeldOut {
		return "held-out"
	}
	return "adj-r2"
}

// ParseSelection reads a selection's name ("" is adjusted R²).
func ParseSelection(s string) (Selection, error) {
	switch s {
	case "", "adj-r2":
		return SelectAdjR2, nil
	case "held-out":
		return SelectHeldOut, nil
	}
	return 0, fmt.Errorf("selection %q: want adj-r2 or held-out", s)
}

// MaxPool bounds the product pool: past it, products of one factor fewer
// are taken (and the model's note says so).
const MaxPool = 20000

// Dropped is an input the zero-variance elimination removed.
type Dropped struct {
	Input  string `json:"input"`
	Reason string `json:"reason"`
}

// Step is one regressor Algorithm 1 added, with the adjusted R² after it.
type Step struct {
	Term string `json:"term"`
	// Replaces is the term Term replaced (the held-out selection's
	// replacement steps); "" for a term added.
	Replaces string  `json:"replaces,omitempty"`
	AdjR2    float64 `json:"adj_r2"`
	// HeldOutMAPE is the held-out selection's error after the step (%).
	HeldOutMAPE *float64 `json:"held_out_mape_pct,omitempty"`
}

// Cluster is one cluster's model: terms and weights (the first term is the
// intercept, "1"), and its fit on the cluster's rows.
type Cluster struct {
	// Centre is the cluster's mean, in the variables' units.
	Centre  []float64 `json:"centre"`
	N       int       `json:"n"`
	Terms   []string  `json:"terms"`
	Weights []float64 `json:"weights"`
	// R2 and AdjR2 are nil when the target is constant in the cluster (no
	// variance to explain).
	R2    *float64 `json:"r2"`
	AdjR2 *float64 `json:"adj_r2"`
	// RMSE is the training error (root mean square, target units); MAPE
	// the mean absolute percentage error over rows with a non-zero target.
	RMSE     float64  `json:"rmse"`
	MAPE     *float64 `json:"mape_pct"`
	Negative int      `json:"negative_predictions"`
	Steps    []Step   `json:"steps"`
	// Note says what the selection had to decide (too few distinct rows
	// to hold any out).
	Note  string `json:"note,omitempty"`
	terms []Term
}

// Model is a fitted model of one group: the transformation from inputs to
// variables, the clusters and their regressions.
type Model struct {
	// Inputs are the non-constant inputs, standardised with Mean and Scale.
	Inputs  []string  `json:"inputs"`
	Mean    []float64 `json:"mean"`
	Scale   []float64 `json:"scale"`
	Dropped []Dropped `json:"dropped,omitempty"`
	// Variances are the principal components' variances (of the
	// standardised inputs), largest first; ZeroDirections how many are 0.
	Variances      []float64 `json:"pca_variances"`
	ZeroDirections int       `json:"zero_variance_directions"`
	PCA            bool      `json:"pca"`
	// Components (PCA only): pc_k = Σ_j Components[k][j]·(x_j − Mean_j)/Scale_j.
	Components [][]float64 `json:"components,omitempty"`
	// Keep (without PCA) are the indices in Inputs of the variables.
	Keep []int `json:"keep,omitempty"`
	// Variables are what the terms apply to: inputs kept, or pc1, pc2, ...
	Variables []string `json:"variables"`
	// ClusterScale divides each variable in the clustering distance.
	ClusterScale []float64 `json:"cluster_scale"`
	Clusters     []Cluster `json:"clusters"`
	// Note says what the fit had to decide (fewer clusters than asked).
	Note string `json:"note,omitempty"`
}

// DefaultThreshold is the default least gain in adjusted R² for a
// regressor to enter (the seed leaves it to experiment; see docs/tasks.md
// for how it was chosen).
const DefaultThreshold = 0.01

// relTol is the relative size under which a variance or a residual counts
// as zero (floating-point noise of exactly dependent data).
const relTol = 1e-10

// Fit builds the model of y from the inputs (columns of x, named by names).
func Fit(names []string, x [][]float64, y []float64, o Options) (*Model, error) {
	m := len(y)
	if m == 0 {
		return nil, errors.New("no rows")
	}
	if len(x) != m {
		return nil, errors.New("rows of inputs and target differ")
	}
	for _, n := range names {
		if err := CheckName(n); err != nil {
			return nil, err
		}
	}
	if o.Clusters < 1 {
		o.Clusters = 1
	}
	defaultProducts := o.Pool == nil
	if o.Pool == nil {
		o.Pool, _ = ParsePool("")
	}
	if o.MaxFactors > MaxFactors {
		return nil, fmt.Errorf("products of %d factors: at most %d", o.MaxFactors, MaxFactors)
	}
	for i := range y {
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return nil, fmt.Errorf("row %d: target is not a finite number", i+1)
		}
		for j := range names {
			if v := x[i][j]; math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("row %d: input %s is not a finite number", i+1, names[j])
			}
		}
	}
	md := &Model{PCA: o.PCA}
	if err := md.eliminate(names, x); err != nil {
		return nil, err
	}
	vars := make([][]float64, m)
	for i := range x {
		vars[i] = md.vars(md.inputRow(names, x[i]))
	}
	md.ClusterScale = make([]float64, len(md.Variables))
	for j := range md.Variables {
		col := make([]float64, m)
		for i := range vars {
			col[i] = vars[i][j]
		}
		md.ClusterScale[j] = stat.StdDev(col, nil)
		if !(md.ClusterScale[j] > 0) {
			md.ClusterScale[j] = 1
		}
	}
	assign, centres, k := kmeans(vars, md.ClusterScale, o.Clusters, o.Seed)
	if k < o.Clusters {
		md.Note = fmt.Sprintf("%d clusters asked, %d distinct rows: %d clusters", o.Clusters, k, k)
	}
	var products []Term
	if o.MaxFactors > 0 {
		var note string
		products, note = productPool(len(md.Variables), o.Pool, defaultProducts, o.MaxFactors)
		if note != "" {
			md.Note = strings.TrimPrefix(md.Note+"; "+note, "; ")
		}
	}
	for c := range k {
		var cx [][]float64
		var cy []float64
		for i, a := range assign {
			if a == c {
				cx, cy = append(cx, vars[i]), append(cy, y[i])
			}
		}
		cl := selectModel(md.Variables, cx, cy, o, products)
		cl.Centre = centres[c]
		md.Clusters = append(md.Clusters, cl)
	}
	return md, nil
}

// inputRow picks the model's inputs out of a row of all the fit's inputs.
func (md *Model) inputRow(names []string, row []float64) []float64 {
	out := make([]float64, len(md.Inputs))
	for j, in := range md.Inputs {
		out[j] = row[indexOf(names, in)]
	}
	return out
}

// eliminate is step 1: constant inputs out, standardisation, PCA, and the
// zero-variance directions out.
func (md *Model) eliminate(names []string, x [][]float64) error {
	m := len(x)
	var cols [][]float64
	for j, n := range names {
		col := make([]float64, m)
		for i := range x {
			col[i] = x[i][j]
		}
		mean, sd := stat.MeanStdDev(col, nil)
		if m < 2 || !(sd > relTol*math.Max(math.Abs(mean), 1e-300)) {
			md.Dropped = append(md.Dropped, Dropped{Input: n, Reason: "zero variance (constant)"})
			continue
		}
		md.Inputs = append(md.Inputs, n)
		md.Mean = append(md.Mean, mean)
		md.Scale = append(md.Scale, sd)
		for i := range col {
			col[i] = (col[i] - mean) / sd
		}
		cols = append(cols, col)
	}
	q := len(cols)
	if q == 0 {
		md.Variables = []string{}
		return nil
	}
	z := mat.NewDense(m, q, nil)
	for j, col := range cols {
		z.SetCol(j, col)
	}
	var pc stat.PC
	if !pc.PrincipalComponents(z, nil) {
		return errors.New("PCA: the SVD did not converge")
	}
	md.Variances = pc.VarsTo(nil)
	r := 0
	for _, v := range md.Variances {
		if v > relTol*md.Variances[0] {
			r++
		}
	}
	md.ZeroDirections = q - r
	if md.PCA {
		var vecs mat.Dense
		pc.VectorsTo(&vecs)
		for k := range r {
			comp := make([]float64, q)
			for j := range q {
				comp[j] = vecs.At(j, k)
			}
			md.Components = append(md.Components, comp)
			md.Variables = append(md.Variables, fmt.Sprintf("pc%d", k+1))
		}
		return nil
	}
	// Keep inputs in order while they add a direction (Gram-Schmidt on the
	// standardised columns): one input goes per zero-variance direction.
	var basis [][]float64
	for j, col := range cols {
		res := append([]float64(nil), col...)
		for _, b := range basis {
			d := dot(res, b)
			for i := range res {
				res[i] -= d * b[i]
			}
		}
		norm := math.Sqrt(dot(res, res))
		if len(basis) >= r || norm <= math.Sqrt(relTol)*math.Sqrt(dot(col, col)) {
			md.Dropped = append(md.Dropped, Dropped{Input: md.Inputs[j], Reason: "zero-variance direction: a linear combination of the inputs kept"})
			continue
		}
		for i := range res {
			res[i] /= norm
		}
		basis = append(basis, res)
		md.Keep = append(md.Keep, j)
		md.Variables = append(md.Variables, md.Inputs[j])
	}
	return nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// vars turns a row of the model's inputs into its variables.
func (md *Model) vars(in []float64) []float64 {
	if !md.PCA {
		out := make([]float64, len(md.Keep))
		for k, j := range md.Keep {
			out[k] = in[j]
		}
		return out
	}
	out := make([]float64, len(md.Components))
	for k, comp := range md.Components {
		s := 0.0
		for j, c := range comp {
			s += c * (in[j] - md.Mean[j]) / md.Scale[j]
		}
		out[k] = s
	}
	return out
}

// kmeans clusters rows (each variable divided by scale) into at most k
// clusters: k-means++ seeding from PCG(seed), then Lloyd's iterations until
// no row moves. It returns each row's cluster, the centres (unscaled) and
// the number of clusters (fewer than k when there are fewer distinct rows).
func kmeans(rows [][]float64, scale []float64, k int, seed uint64) ([]int, [][]float64, int) {
	n := len(rows)
	d := len(scale)
	pts := make([][]float64, n)
	for i, r := range rows {
		pts[i] = make([]float64, d)
		for j := range d {
			pts[i][j] = r[j] / scale[j]
		}
	}
	dist := func(a, b []float64) float64 {
		s := 0.0
		for j := range a {
			s += (a[j] - b[j]) * (a[j] - b[j])
		}
		return s
	}
	// Distinct rows bound k.
	distinct := map[string]bool{}
	for _, p := range pts {
		distinct[fmt.Sprint(p)] = true
		if len(distinct) >= k {
			break
		}
	}
	k = min(k, len(distinct))
	assign := make([]int, n)
	mean := func(c int) []float64 {
		ctr := make([]float64, d)
		cnt := 0
		for i, a := range assign {
			if a == c {
				cnt++
				for j := range d {
					ctr[j] += pts[i][j]
				}
			}
		}
		for j := range d {
			ctr[j] /= float64(max(cnt, 1))
		}
		return ctr
	}
	unscale := func(cs [][]float64) [][]float64 {
		out := make([][]float64, len(cs))
		for c, ctr := range cs {
			out[c] = make([]float64, d)
			for j := range d {
				out[c][j] = ctr[j] * scale[j]
			}
		}
		return out
	}
	if k <= 1 {
		return assign, unscale([][]float64{mean(0)}), 1
	}
	rng := rand.New(rand.NewPCG(seed, 0xe16e5))
	centres := [][]float64{pts[rng.IntN(n)]}
	near := make([]float64, n)
	for i := range pts {
		near[i] = dist(pts[i], centres[0])
	}
	for len(centres) < k {
		total := 0.0
		for _, v := range near {
			total += v
		}
		u := rng.Float64() * total
		next := n - 1
		for i, v := range near {
			if u < v {
				next = i
				break
			}
			u -= v
		}
		centres = append(centres, pts[next])
		for i := range pts {
			near[i] = math.Min(near[i], dist(pts[i], pts[next]))
		}
	}
	for i := range assign {
		assign[i] = -1
	}
	for iter := 0; iter < 1000; iter++ {
		moved := false
		for i, p := range pts {
			best, bd := 0, math.Inf(1)
			for c, ctr := range centres {
				if dd := dist(p, ctr); dd < bd {
					best, bd = c, dd
				}
			}
			if assign[i] != best {
				assign[i], moved = best, true
			}
		}
		if !moved {
			break
		}
		for c := range centres {
			centres[c] = mean(c)
		}
		// An empty cluster takes the row farthest from its centre.
		for c := range centres {
			if slicesCount(assign, c) > 0 {
				continue
			}
			far, fd := 0, -1.0
			for i, p := range pts {
				if dd := dist(p, centres[assign[i]]); dd > fd {
					far, fd = i, dd
				}
			}
			assign[far] = c
			centres[c] = append([]float64(nil), pts[far]...)
		}
	}
	return assign, unscale(centres), k
}

func slicesCount(s []int, v int) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// candidate is a pool regressor evaluated on a cluster's rows.
type candidate struct {
	t   Term
	col []float64
}

// productPool is Products (DefaultProducts when defaults), with fewer
// factors while it has more than MaxPool terms; note says so.
func productPool(nvars int, funcs []Func, defaults bool, maxFactors int) ([]Term, string) {
	for k := maxFactors; k >= 1; k-- {
		ts := DefaultProducts(nvars, k)
		if !defaults {
			ts = Products(nvars, funcs, k)
		}
		if len(ts) <= MaxPool || k == 1 {
			if k < maxFactors {
				return ts, fmt.Sprintf("products of up to %d factors of %d variables are more than %d terms: up to %d factors (%d terms)", maxFactors, nvars, MaxPool, k, len(ts))
			}
			return ts, ""
		}
	}
	return nil, ""
}

// candidates are the pool's regressors defined and not constant on rows:
// Table 1's, or the products given.
func candidates(nvars int, rows [][]float64, pool []Func, products []Term) []candidate {
	var out []candidate
	add := func(t Term) {
		col := make([]float64, len(rows))
		for i, r := range rows {
			v := t.Eval(r)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return
			}
			col[i] = v
		}
		if _, sd := stat.MeanStdDev(col, nil); !(sd > relTol*math.Max(math.Abs(col[0]), 1e-300)) {
			return
		}
		out = append(out, candidate{t: t, col: col})
	}
	if products != nil {
		for _, t := range products {
			add(t)
		}
		return out
	}
	for _, f := range pool {
		if f == Prod {
			for i := range nvars {
				for j := i + 1; j < nvars; j++ {
					add(Term{F: Prod, I: i, J: j})
				}
			}
			continue
		}
		for i := range nvars {
			add(Term{F: f, I: i})
		}
	}
	return out
}

// fitTerms solves least squares (QR) of y on the intercept and cols.
func fitTerms(cols [][]float64, y []float64) ([]float64, error) {
	x := make([][]float64, len(y))
	for i := range y {
		row := make([]float64, 1+len(cols))
		row[0] = 1
		for j, c := range cols {
			row[1+j] = c[i]
		}
		x[i] = row
	}
	return models.LeastSquares(x, y)
}

// rss is the residual sum of squares of the weights.
func rss(cols [][]float64, w, y []float64) float64 {
	s := 0.0
	for i := range y {
		p := w[0]
		for j, c := range cols {
			p += w[1+j] * c[i]
		}
		s += (y[i] - p) * (y[i] - p)
	}
	return s
}

// AdjR2 is eq. 3: 1 − (1 − R²)(n − 1)/(n − p − 1).
func AdjR2(r2 float64, n, p int) float64 {
	return 1 - (1-r2)*float64(n-1)/float64(n-p-1)
}

// selectModel is Algorithm 1 on one cluster, or the held-out selection.
func selectModel(vars []string, rows [][]float64, y []float64, o Options, products []Term) Cluster {
	if o.Select == SelectHeldOut {
		return selectHeldOut(vars, rows, y, o, products)
	}
	n := len(y)
	mean := stat.Mean(y, nil)
	tss := 0.0
	for _, v := range y {
		tss += (v - mean) * (v - mean)
	}
	cl := Cluster{N: n, Terms: []string{"1"}, Weights: []float64{mean}, Steps: []Step{}}
	var chosen []candidate
	var cols [][]float64
	if tss > 0 {
		zero := 0.0
		cl.R2, cl.AdjR2 = &zero, &zero
		pool := candidates(len(vars), rows, o.Pool, products)
		cur := 0.0
		for len(pool) > 0 {
			best, bestAdj := -1, math.Inf(-1)
			var bestW []float64
			p := len(chosen) + 1
			if n-p-1 < 1 {
				break
			}
			for ci, c := range pool {
				try := append(cols[:len(cols):len(cols)], c.col)
				w, err := fitTerms(try, y)
				if err != nil {
					continue // rank-deficient with the terms already in
				}
				adj := AdjR2(1-rss(try, w, y)/tss, n, p)
				if adj > bestAdj {
					best, bestAdj, bestW = ci, adj, w
				}
			}
			if best < 0 || !(bestAdj-cur > o.Threshold) {
				break
			}
			chosen = append(chosen, pool[best])
			cols = append(cols, pool[best].col)
			pool = append(pool[:best], pool[best+1:]...)
			cur = bestAdj
			cl.Weights = bestW
			r2 := 1 - rss(cols, bestW, y)/tss
			adj := bestAdj
			cl.R2, cl.AdjR2 = &r2, &adj
			cl.Steps = append(cl.Steps, Step{Term: chosen[len(chosen)-1].t.Name(vars), AdjR2: bestAdj})
		}
	}
	for _, c := range chosen {
		cl.terms = append(cl.terms, c.t)
		cl.Terms = append(cl.Terms, c.t.Name(vars))
	}
	cl.trainingError(rows, y)
	return cl
}

// trainingError sets the cluster's RMSE, MAPE and negative predictions on
// its rows.
func (cl *Cluster) trainingError(rows [][]float64, y []float64) {
	n := len(y)
	s, ape, nz := 0.0, 0.0, 0
	for i := range y {
		p := cl.eval(rows[i])
		s += (y[i] - p) * (y[i] - p)
		if y[i] != 0 {
			ape += math.Abs((y[i] - p) / y[i])
			nz++
		}
		if p < 0 {
			cl.Negative++
		}
	}
	cl.RMSE = math.Sqrt(s / float64(n))
	if nz > 0 {
		mape := 100 * ape / float64(nz)
		cl.MAPE = &mape
	}
}

// eval is the cluster's prediction from a row of variables (NaN outside
// a term's domain).
func (cl *Cluster) eval(v []float64) float64 {
	p := cl.Weights[0]
	for k, t := range cl.terms {
		p += cl.Weights[1+k] * t.Eval(v)
	}
	return p
}

// Required are the inputs a prediction needs: with PCA every non-constant
// input; with several clusters every variable (the nearest centre depends
// on them all); else the variables the terms use.
func (md *Model) Required() []string {
	if md.PCA {
		return md.Inputs
	}
	if len(md.Clusters) > 1 {
		return md.Variables
	}
	used := map[int]bool{}
	for _, t := range md.Clusters[0].terms {
		for _, v := range t.Vars() {
			used[v] = true
		}
	}
	out := []string{}
	for i, v := range md.Variables {
		if used[i] {
			out = append(out, v)
		}
	}
	return out
}

// Predict evaluates the model on the inputs (by name; only Required are
// read): the nearest cluster's regression. It returns the cluster used.
// An input missing, or outside a term's domain, is an error.
func (md *Model) Predict(in map[string]float64) (float64, int, error) {
	row := make([]float64, len(md.Inputs))
	need := map[string]bool{}
	for _, r := range md.Required() {
		need[r] = true
	}
	for j, name := range md.Inputs {
		v, ok := in[name]
		if !ok {
			if need[name] {
				return 0, 0, fmt.Errorf("input %s missing (the model needs %v)", name, md.Required())
			}
			v = md.Mean[j]
		}
		row[j] = v
	}
	v := md.vars(row)
	best, bd := 0, math.Inf(1)
	for c, cl := range md.Clusters {
		d := 0.0
		for j := range v {
			e := (v[j] - cl.Centre[j]) / md.ClusterScale[j]
			d += e * e
		}
		if d < bd {
			best, bd = c, d
		}
	}
	cl := &md.Clusters[best]
	p := cl.eval(v)
	if math.IsNaN(p) || math.IsInf(p, 0) {
		for _, t := range cl.terms {
			if x := t.Eval(v); math.IsNaN(x) || math.IsInf(x, 0) {
				return 0, best, fmt.Errorf("term %s is undefined at these inputs", t.Name(md.Variables))
			}
		}
		return 0, best, errors.New("the prediction is not a finite number")
	}
	return p, best, nil
}

// Restore rebuilds what a model read from JSON needs to predict (the
// parsed terms) and checks its shape.
func (md *Model) Restore() error {
	if len(md.Mean) != len(md.Inputs) || len(md.Scale) != len(md.Inputs) || len(md.ClusterScale) != len(md.Variables) {
		return errors.New("inputs, mean, scale and cluster_scale do not match")
	}
	if md.PCA && len(md.Components) != len(md.Variables) || !md.PCA && len(md.Keep) != len(md.Variables) {
		return errors.New("variables do not match components or keep")
	}
	for _, j := range md.Keep {
		if j < 0 || j >= len(md.Inputs) {
			return errors.New("keep: index out of range")
		}
	}
	for _, c := range md.Components {
		if len(c) != len(md.Inputs) {
			return errors.New("components: each needs one loading per input")
		}
	}
	for j := range md.Inputs {
		if !(md.Scale[j] > 0) {
			return fmt.Errorf("scale of %s: must be positive", md.Inputs[j])
		}
	}
	for j := range md.ClusterScale {
		if !(md.ClusterScale[j] > 0) {
			return errors.New("cluster_scale: must be positive")
		}
	}
	if len(md.Clusters) == 0 {
		return errors.New("no cluster")
	}
	for c := range md.Clusters {
		cl := &md.Clusters[c]
		if len(cl.Terms) == 0 || cl.Terms[0] != "1" || len(cl.Weights) != len(cl.Terms) || len(cl.Centre) != len(md.Variables) {
			return fmt.Errorf("cluster %d: terms (starting with 1), weights and centre do not match", c)
		}
		cl.terms = cl.terms[:0]
		for _, name := range cl.Terms[1:] {
			t, err := ParseTerm(name, md.Variables)
			if err != nil {
				return fmt.Errorf("cluster %d: %w", c, err)
			}
			cl.terms = append(cl.terms, t)
		}
	}
	return nil
}
