// Package surface is Pallipuram et al.'s (2014) surface analyzer: per cluster size R, the
// (window size w, DAG size T, hit-rate) points of many traces are fitted by a
// least-squares polynomial surface of total degree 4 in (w, T) (MATLAB's
// poly44: 15 terms w^i·T^j, i+j ≤ 4), the surface is cut at the target
// hit-rate (0.95) to give a window size per T, and the cuts of all R make a
// versioned window-size model.
package surface

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast/internal/input"
	"gonum.org/v1/gonum/mat"
)

// Point is one hit-rate observation.
type Point struct {
	W       float64 `json:"w"`
	T       float64 `json:"t"`
	HitRate float64 `json:"hit_rate"`
}

// Poly is a polynomial surface of total degree Degree in normalised
// coordinates u = (w−WC)/WS, v = (T−TC)/TS. Coef follows Terms().
// DegreeW and DegreeT are its degrees in w and in T: Degree, or one less
// when the points hold only Degree window sizes or DAG sizes (FitPoly).
type Poly struct {
	Degree  int       `json:"degree"`
	DegreeW int       `json:"degree_w"`
	DegreeT int       `json:"degree_t"`
	WC      float64   `json:"w_center"`
	WS      float64   `json:"w_scale"`
	TC      float64   `json:"t_center"`
	TS      float64   `json:"t_scale"`
	Coef    []float64 `json:"coef"`
	// Terms lists the exponent pairs [i, j] of u^i·v^j, in Coef's order.
	Terms [][2]int `json:"terms"`
}

// Terms returns the exponents of the monomials of total degree ≤ deg, in the
// order MATLAB's polyNM names them: by total degree, then decreasing power of
// the first variable.
func Terms(deg int) [][2]int {
	var t [][2]int
	for s := 0; s <= deg; s++ {
		for i := s; i >= 0; i-- {
			t = append(t, [2]int{i, s - i})
		}
	}
	return t
}

// Eval evaluates the surface at (w, T).
func (p *Poly) Eval(w, t float64) float64 {
	u, v := (w-p.WC)/p.WS, (t-p.TC)/p.TS
	s := 0.0
	for k, e := range p.Terms {
		s += p.Coef[k] * ipow(u, e[0]) * ipow(v, e[1])
	}
	return s
}

func ipow(x float64, n int) float64 {
	r := 1.0
	for ; n > 0; n-- {
		r *= x
	}
	return r
}

// Fit is a fitted surface with its quality.
type Fit struct {
	Poly
	N         int       `json:"n"`
	R2        float64   `json:"r2"`
	RMSE      float64   `json:"rmse"`
	MaxAbsRes float64   `json:"max_abs_residual"`
	Residuals []float64 `json:"residuals,omitempty"`
}

// ErrTooFewPoints is returned when the points cannot determine the surface.
var ErrTooFewPoints = errors.New("surface: too few distinct points for the polynomial")

// ErrTooFewSizes is returned when the points hold too few DAG sizes (or
// window sizes) for a surface of the degree asked: a degree-4 surface from
// one to three traces is not a surface of degree 4.
var ErrTooFewSizes = errors.New("surface: too few sizes for the degree")

// FitPoly fits a polynomial surface of total degree deg by least squares
// (QR). Coordinates are centred and scaled (like MATLAB fit's Normalize) so
// that the normal equations are well conditioned. A degree in T of deg
// needs deg+1 DAG sizes (values closer than 2% of the range are one size,
// as a group of Table I's DAGs); with deg sizes the degree in T is lowered
// by one (DegreeT), so the system stays determined. With fewer, the fit is
// refused (ErrTooFewSizes, with the sizes and the degree they allow):
// one to three traces would give a "degree-4 surface" constant, linear or
// quadratic in T. Likewise in w.
func FitPoly(pts []Point, deg int) (*Fit, error) {
	if len(pts) == 0 {
		return nil, ErrTooFewPoints
	}
	if deg < 1 {
		return nil, fmt.Errorf("surface: the degree must be at least 1 (got %d)", deg)
	}
	wmin, wmax, tmin, tmax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	ws, ts := map[float64]bool{}, map[float64]bool{}
	for _, p := range pts {
		wmin, wmax = math.Min(wmin, p.W), math.Max(wmax, p.W)
		tmin, tmax = math.Min(tmin, p.T), math.Max(tmax, p.T)
		ws[p.W], ts[p.T] = true, true
	}
	half := func(a, b float64) float64 {
		if b > a {
			return (b - a) / 2
		}
		return 1
	}
	poly := Poly{Degree: deg, WC: (wmin + wmax) / 2, WS: half(wmin, wmax), TC: (tmin + tmax) / 2, TS: half(tmin, tmax)}
	// Values closer than 2% of the range count as one level (a DAG-size
	// group's DAGs have T, T+1, ... tasks): a degree-4 term cannot be
	// determined from 4 groups, however many distinct values they hold.
	lw, lt := levels(ws), levels(ts)
	if lt < deg {
		return nil, fmt.Errorf("%w: a degree-%d surface needs points at %d or more DAG sizes (its degree in T is at most one below %d); "+
			"these come from %d (T ≈ %s): train on traces of more DAG sizes, or lower the degree (--degree) to %d",
			ErrTooFewSizes, deg, deg, deg, lt, groupList(ts), max(1, lt))
	}
	if lw < deg {
		return nil, fmt.Errorf("%w: a degree-%d surface needs points at %d or more window sizes; these come from %d: give more candidate windows, or lower the degree (--degree) to %d",
			ErrTooFewSizes, deg, deg, lw, max(1, lw))
	}
	dw, dt := min(deg, lw-1), min(deg, lt-1)
	poly.DegreeW, poly.DegreeT = dw, dt
	for _, e := range Terms(deg) {
		if e[0] <= dw && e[1] <= dt {
			poly.Terms = append(poly.Terms, e)
		}
	}
	n, k := len(pts), len(poly.Terms)
	if n < k {
		return nil, fmt.Errorf("%w: %d points, %d terms", ErrTooFewPoints, n, k)
	}
	A := mat.NewDense(n, k, nil)
	b := mat.NewVecDense(n, nil)
	for r, p := range pts {
		u, v := (p.W-poly.WC)/poly.WS, (p.T-poly.TC)/poly.TS
		for c, e := range poly.Terms {
			A.Set(r, c, ipow(u, e[0])*ipow(v, e[1]))
		}
		b.SetVec(r, p.HitRate)
	}
	var qr mat.QR
	qr.Factorize(A)
	var x mat.Dense
	if err := qr.SolveTo(&x, false, b); err != nil {
		return nil, fmt.Errorf("surface: least squares: %w", err)
	}
	poly.Coef = make([]float64, k)
	for c := range poly.Coef {
		poly.Coef[c] = x.At(c, 0)
	}
	f := &Fit{Poly: poly, N: n, Residuals: make([]float64, n)}
	mean := 0.0
	for _, p := range pts {
		mean += p.HitRate
	}
	mean /= float64(n)
	var ssr, sst float64
	for i, p := range pts {
		r := p.HitRate - poly.Eval(p.W, p.T)
		f.Residuals[i] = r
		ssr += r * r
		sst += (p.HitRate - mean) * (p.HitRate - mean)
		f.MaxAbsRes = math.Max(f.MaxAbsRes, math.Abs(r))
	}
	f.RMSE = math.Sqrt(ssr / float64(n))
	if sst > 0 {
		f.R2 = 1 - ssr/sst
	} else if ssr < 1e-18 {
		f.R2 = 1
	}
	return f, nil
}

// levels counts the groups of values, values closer than 2% of the range
// being one group.
func levels(set map[float64]bool) int {
	vs := make([]float64, 0, len(set))
	for v := range set {
		vs = append(vs, v)
	}
	sort.Float64s(vs)
	if len(vs) < 2 {
		return len(vs)
	}
	tol := 0.02 * (vs[len(vs)-1] - vs[0])
	n := 1
	for i := 1; i < len(vs); i++ {
		if vs[i]-vs[i-1] > tol {
			n++
		}
	}
	return n
}

// groupList names the groups of values (values closer than 2% of the
// range being one), by their smallest value, at most six.
func groupList(set map[float64]bool) string {
	vs := make([]float64, 0, len(set))
	for v := range set {
		vs = append(vs, v)
	}
	sort.Float64s(vs)
	var out []string
	tol := 0.0
	if len(vs) > 1 {
		tol = 0.02 * (vs[len(vs)-1] - vs[0])
	}
	for i, v := range vs {
		if i > 0 && v-vs[i-1] <= tol {
			continue
		}
		if len(out) == 6 {
			return strings.Join(out, ", ") + ", ..."
		}
		out = append(out, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return strings.Join(out, ", ")
}

// groupStarts returns the smallest T of each group of DAG sizes (sizes
// closer than 2% of the range are one group: Table I's groups hold T to
// T+25 tasks), so that there is one cut per group.
func groupStarts(pts []Point) []int {
	set := map[int]bool{}
	for _, p := range pts {
		set[int(math.Round(p.T))] = true
	}
	vs := make([]int, 0, len(set))
	for v := range set {
		vs = append(vs, v)
	}
	sort.Ints(vs)
	if len(vs) < 2 {
		return vs
	}
	tol := 0.02 * float64(vs[len(vs)-1]-vs[0])
	out := []int{vs[0]}
	for i := 1; i < len(vs); i++ {
		if float64(vs[i]-vs[i-1]) > tol {
			out = append(out, vs[i])
		}
	}
	return out
}

// Cut is the modeled window size for one DAG size.
type Cut struct {
	T int `json:"t"`
	W int `json:"w"`
	// Status: "crossing" (the fitted surface falls below the target at W+step),
	// "flat" (it stays at or above the target up to the largest window), or
	// "below" (it is below the target already at the smallest window: W is
	// the smallest window).
	Status string `json:"status"`
	// Fitted is the hit-rate the surface gives at (W, T), clamped to
	// [0, 1]: the least-squares polynomial is not bounded, and where the
	// measured hit-rates are near 1 it overshoots (1.002 at a flat cut),
	// which is the fit's error, not a rate above 100 %. The cut itself is
	// found on the unclamped surface (any overshoot is above the target).
	Fitted float64 `json:"fitted_hit_rate"`
}

// clampRate is a fitted value as a hit-rate: in [0, 1].
func clampRate(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// CutAt walks w from wmin to wmax by step and returns the largest w such
// that the surface is at or above target for every w' ≤ w: the first
// crossing of the target, the paper's cut of the surface at 95%.
func (p *Poly) CutAt(t, target float64, wmin, wmax, step int) Cut {
	c := Cut{T: int(math.Round(t)), W: wmin, Status: "below"}
	if p.Eval(float64(wmin), t) < target-1e-9 {
		c.Fitted = clampRate(p.Eval(float64(wmin), t))
		return c
	}
	c.Status = "flat"
	for w := wmin; w <= wmax; w += step {
		if p.Eval(float64(w), t) < target-1e-9 {
			c.Status = "crossing"
			break
		}
		c.W = w
	}
	c.Fitted = clampRate(p.Eval(float64(c.W), t))
	return c
}

// ModelVersion is the window-size model file's format version.
const ModelVersion = 1

// Model is the window-size model file.
type Model struct {
	Kind    string `json:"kind"` // "tracecast.window-size-model"
	Version int    `json:"version"`
	// What the hit-rates were computed on, so that a user samples the
	// same way.
	Class    string   `json:"class"`
	Method   string   `json:"method"`
	Alpha    float64  `json:"alpha"`
	Period   float64  `json:"period,omitempty"` // Δ in trace units (0: per-trace rule)
	Sampling string   `json:"sampling"`
	Target   float64  `json:"target"`
	WMin     int      `json:"w_min"`
	WMax     int      `json:"w_max"`
	WStep    int      `json:"w_step"`
	Degree   int      `json:"degree"`
	Created  string   `json:"created,omitempty"`
	Surfaces []RModel `json:"surfaces"` // by increasing R
}

// RModel is one cluster size's surface and cuts.
type RModel struct {
	R      int   `json:"r"`
	Traces int   `json:"traces"`
	Fit    *Fit  `json:"fit"`
	Cuts   []Cut `json:"cuts"` // by increasing T
}

// Build fits the surface of every R and cuts it at every T in ts (or at the
// distinct T of its points when ts is empty).
func Build(m *Model, byR map[int][]Point, traces map[int]int, ts []int) error {
	rs := make([]int, 0, len(byR))
	for r := range byR {
		rs = append(rs, r)
	}
	sort.Ints(rs)
	m.Kind, m.Version = "tracecast.window-size-model", ModelVersion
	m.Surfaces = nil
	for _, r := range rs {
		f, err := FitPoly(byR[r], m.Degree)
		if err != nil {
			return fmt.Errorf("fit for R=%d: %w", r, err)
		}
		rm := RModel{R: r, Traces: traces[r], Fit: f}
		cutTs := ts
		if len(cutTs) == 0 {
			cutTs = groupStarts(byR[r])
		}
		for _, t := range cutTs {
			rm.Cuts = append(rm.Cuts, f.CutAt(float64(t), m.Target, m.WMin, m.WMax, max(1, m.WStep/10)))
		}
		m.Surfaces = append(m.Surfaces, rm)
	}
	return nil
}

// Load reads a model file and checks its kind and version.
func Load(path string) (*Model, error) {
	b, err := input.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Kind != "tracecast.window-size-model" || m.Version != ModelVersion {
		return nil, fmt.Errorf("%s: not a window-size model version %d (kind %q, version %d)", path, ModelVersion, m.Kind, m.Version)
	}
	if len(m.Surfaces) == 0 {
		return nil, fmt.Errorf("%s: no surface", path)
	}
	return &m, nil
}

// Window returns the modeled window size for R workers and T tasks:
// linear in T between the cuts of a trained R (clamped at the ends), and
// linear in log2 R between the two trained R around R (clamped).
func (m *Model) Window(R, T int) (int, error) {
	if len(m.Surfaces) == 0 {
		return 0, errors.New("model has no surface")
	}
	if R <= 0 || T <= 0 {
		return 0, fmt.Errorf("invalid R=%d, T=%d: both must be positive", R, T)
	}
	atT := func(rm *RModel) (float64, error) {
		cs := rm.Cuts
		if len(cs) == 0 {
			return 0, fmt.Errorf("no cut for R=%d", rm.R)
		}
		if T <= cs[0].T {
			return float64(cs[0].W), nil
		}
		for i := 1; i < len(cs); i++ {
			if T <= cs[i].T {
				f := float64(T-cs[i-1].T) / float64(cs[i].T-cs[i-1].T)
				return float64(cs[i-1].W) + f*float64(cs[i].W-cs[i-1].W), nil
			}
		}
		return float64(cs[len(cs)-1].W), nil
	}
	ss := m.Surfaces
	if R <= ss[0].R {
		w, err := atT(&ss[0])
		return int(math.Round(w)), err
	}
	for i := 1; i < len(ss); i++ {
		if R <= ss[i].R {
			a, err := atT(&ss[i-1])
			if err != nil {
				return 0, err
			}
			b, err := atT(&ss[i])
			if err != nil {
				return 0, err
			}
			f := (math.Log2(float64(R)) - math.Log2(float64(ss[i-1].R))) / (math.Log2(float64(ss[i].R)) - math.Log2(float64(ss[i-1].R)))
			return int(math.Round(a + f*(b-a))), nil
		}
	}
	w, err := atT(&ss[len(ss)-1])
	return int(math.Round(w)), err
}

// State is Pallipuram et al.'s (2014) trace state (§IV-B).
type State string

const (
	UniformIdle        State = "uniform idle"
	Patch              State = "patch"
	UniformComputation State = "uniform computation"
)

// Classification summarises the idle signal of a trace.
type Classification struct {
	State State `json:"state"`
	// IdleFraction is the time-averaged share of idle workers.
	IdleFraction float64 `json:"idle_fraction"`
	// MostlyIdle / MostlyBusy are the shares of samples where at least
	// 75% / at most 25% of the workers are idle.
	MostlyIdle float64 `json:"mostly_idle"`
	MostlyBusy float64 `json:"mostly_busy"`
}

// Classifier accumulates an idle signal sample by sample.
type Classifier struct {
	R           int
	n           int
	sum, hi, lo float64
}

// Add takes one sample x (idle workers out of R).
func (c *Classifier) Add(x int) {
	c.n++
	f := float64(x) / float64(c.R)
	c.sum += f
	if f >= 0.75 {
		c.hi++
	}
	if f <= 0.25 {
		c.lo++
	}
}

// Result classifies: uniform idle when at least 60% of the samples have
// ≥75% of the workers idle, uniform computation when at least 60% have
// ≤25% idle, patch otherwise (comparable idle and computation occurrences).
func (c *Classifier) Result() Classification {
	if c.n == 0 {
		return Classification{State: Patch}
	}
	n := float64(c.n)
	r := Classification{IdleFraction: c.sum / n, MostlyIdle: c.hi / n, MostlyBusy: c.lo / n, State: Patch}
	switch {
	case r.MostlyIdle >= 0.6:
		r.State = UniformIdle
	case r.MostlyBusy >= 0.6:
		r.State = UniformComputation
	}
	return r
}
