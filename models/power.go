package models

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// PowerInputs are the six inputs of Srinivasan and Bellur's (2014) power model (§5.1): the
// lowest and highest frequencies and the idle (cpu = 0) and full-load
// (cpu = 1) power at each. Frequencies may be in any unit (only ratios
// matter); powers are in watts.
type PowerInputs struct {
	FMin      float64 `json:"fmin" flag:"fmin" help:"lowest frequency"`
	FMax      float64 `json:"fmax"`
	PIdleFMin float64 `json:"p_idle_fmin" flag:"p-idle-fmin" help:"idle power at fmin (W)"`
	PIdleFMax float64 `json:"p_idle_fmax" flag:"p-idle-fmax" help:"idle power at fmax (W)"`
	PFullFMin float64 `json:"p_full_fmin" flag:"p-full-fmin" help:"power at 100% CPU and fmin (W)"`
	PFullFMax float64 `json:"p_full_fmax" flag:"p-full-fmax" help:"power at 100% CPU and fmax (W)"`
}

// PowerModel is Srinivasan and Bellur's (2014) eq. 6:
//
//	TPower(cpu, f) = P0 − Alpha·(FMax − f)/FMax + (A·f/FMax + B)·cpu
//
// with P0 the idle power at FMax and cpu the utilisation in [0, 1].
type PowerModel struct {
	FMax  float64 `json:"fmax"`
	P0    float64 `json:"p_idle_fmax"`
	A     float64 `json:"A"`
	B     float64 `json:"B"`
	Alpha float64 `json:"alpha"`
}

// Validate checks the six inputs.
func (in PowerInputs) Validate() error {
	for _, v := range []float64{in.FMin, in.FMax, in.PIdleFMin, in.PIdleFMax, in.PFullFMin, in.PFullFMax} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("power model inputs must be finite numbers")
		}
	}
	if in.FMin <= 0 || in.FMax <= in.FMin {
		return fmt.Errorf("need 0 < fmin < fmax (got fmin %g, fmax %g)", in.FMin, in.FMax)
	}
	if in.PIdleFMin <= 0 || in.PIdleFMax <= 0 || in.PFullFMin <= 0 || in.PFullFMax <= 0 {
		return fmt.Errorf("%w inputs: powers must be positive (got idle %g and %g W, full %g and %g W)",
			ErrImplausible, in.PIdleFMin, in.PIdleFMax, in.PFullFMin, in.PFullFMax)
	}
	// A loaded CPU drawing less than an idle one would give a negative
	// dynamic power, and eq. 6 negative watts below some utilisation.
	for _, f := range []struct {
		name       string
		idle, full float64
	}{{"fmin", in.PIdleFMin, in.PFullFMin}, {"fmax", in.PIdleFMax, in.PFullFMax}} {
		if f.full < f.idle {
			return fmt.Errorf("%w inputs: the power at 100%% CPU and %s (%g W) is below the idle power there (%g W)", ErrImplausible, f.name, f.full, f.idle)
		}
	}
	return nil
}

// DVFSFromInputs computes A, B and alpha by eq. 7, 8 and 9.
func DVFSFromInputs(in PowerInputs) (PowerModel, error) {
	if err := in.Validate(); err != nil {
		return PowerModel{}, err
	}
	r := in.FMax / (in.FMax - in.FMin)
	dynMax := in.PFullFMax - in.PIdleFMax
	dynMin := in.PFullFMin - in.PIdleFMin
	a := (dynMax - dynMin) * r                 // eq. 7
	b := dynMax - a                            // eq. 8
	alpha := (in.PIdleFMax - in.PIdleFMin) * r // eq. 9
	return PowerModel{FMax: in.FMax, P0: in.PIdleFMax, A: a, B: b, Alpha: alpha}, nil
}

// Predict is eq. 6 at utilisation cpu ∈ [0, 1] and frequency f.
func (m PowerModel) Predict(cpu, f float64) float64 {
	return m.P0 - m.Alpha*(m.FMax-f)/m.FMax + (m.A*f/m.FMax+m.B)*cpu
}

// ErrorPct is Srinivasan and Bellur's (2014) eq. 10: |measured − predicted| / measured · 100.
func ErrorPct(measured, predicted float64) float64 {
	return math.Abs(measured-predicted) / math.Abs(measured) * 100
}

// PowerSample is one measurement of a node's power at a utilisation and
// frequency.
type PowerSample struct {
	CPU   float64 `json:"cpu"`
	F     float64 `json:"f"`
	Watts float64 `json:"watts"`
}

// FitStats describe a least-squares fit.
type FitStats struct {
	N int `json:"n"`
	// RMSE is the root-mean-square residual, in the fitted quantity's unit.
	RMSE float64 `json:"rmse"`
	// R2 is the coefficient of determination; nil when the data cannot
	// give one (R2Error says why): an exact fit, with as many observations
	// as parameters, has R² = 1 whatever the data, and constant
	// measurements have no variance to explain.
	R2      *float64 `json:"r2"`
	R2Error string   `json:"r2_error,omitempty"`
	// AvgErrPct and MaxErrPct are eq. 10 over the samples.
	AvgErrPct float64 `json:"avg_error_pct"`
	MaxErrPct float64 `json:"max_error_pct"`
}

// FitPower fits eq. 6 to measurements by linear least squares: eq. 6 is
// linear in (P0, α, A, B) with regressors 1, −(fmax−f)/fmax, cpu·f/fmax
// and cpu. fmax ≤ 0 means the highest frequency among the samples. The
// samples must span at least two frequencies and two utilisations.
func FitPower(samples []PowerSample, fmax float64) (PowerModel, FitStats, error) {
	if fmax <= 0 {
		for _, s := range samples {
			fmax = math.Max(fmax, s.F)
		}
	}
	if fmax <= 0 {
		return PowerModel{}, FitStats{}, errors.New("fit power: no positive frequency")
	}
	x := make([][]float64, len(samples))
	y := make([]float64, len(samples))
	for i, s := range samples {
		x[i] = []float64{1, -(fmax - s.F) / fmax, s.CPU * s.F / fmax, s.CPU}
		y[i] = s.Watts
	}
	beta, cov, err := leastSquares(x, y)
	if err != nil {
		return PowerModel{}, FitStats{}, fmt.Errorf("fit power: %w", err)
	}
	m := PowerModel{FMax: fmax, P0: beta[0], Alpha: beta[1], A: beta[2], B: beta[3]}
	if err := m.plausible(samples, cov); err != nil {
		return PowerModel{}, FitStats{}, fmt.Errorf("fit power: %w", err)
	}
	pred := make([]float64, len(samples))
	for i, s := range samples {
		pred[i] = m.Predict(s.CPU, s.F)
	}
	return m, Stats(y, pred, len(x[0])), nil
}

// plausible refuses a fitted power model that gives a power that is no
// power over the samples' frequencies: not positive at 0 or 100 % CPU, or
// a full-load power below the idle power there by more than twice its
// standard error and BelowIdleTolerance (eq. 6 is linear in cpu and in f,
// so the ends of the range decide).
func (m PowerModel) plausible(samples []PowerSample, cov [][]float64) error {
	fmin, fmax := math.Inf(1), math.Inf(-1)
	for _, s := range samples {
		fmin, fmax = math.Min(fmin, s.F), math.Max(fmax, s.F)
	}
	for _, f := range []float64{fmin, fmax} {
		for _, cpu := range []float64{0, 1} {
			if p := m.Predict(cpu, f); !(p > 0) {
				return fmt.Errorf("%w fit: it predicts %.4g W at %g%% CPU and f = %g: the samples do not follow eq. 6", ErrImplausible, p, 100*cpu, f)
			}
		}
		// The dynamic power at f, A·f/fmax + B, and its standard error.
		r := f / m.FMax
		dyn := m.A*r + m.B
		var se float64
		if cov != nil {
			se = math.Sqrt(math.Max(r*r*cov[2][2]+cov[3][3]+2*r*cov[2][3], 0))
		}
		if dyn < -math.Max(2*se, BelowIdleTolerance*m.Predict(0, f)) {
			return fmt.Errorf("%w fit: at f = %g it predicts %.4g W at 100%% CPU, below the idle %.4g W (±%.2g W): a loaded CPU does not draw less than an idle one",
				ErrImplausible, f, m.Predict(1, f), m.Predict(0, f), se)
		}
	}
	return nil
}

// Stats compares measurements with the predictions of a model of params
// fitted parameters.
func Stats(measured, predicted []float64, params int) FitStats {
	st := FitStats{N: len(measured)}
	if len(measured) == 0 {
		return st
	}
	var mean float64
	for _, v := range measured {
		mean += v
	}
	mean /= float64(len(measured))
	var ssr, sst float64
	for i, v := range measured {
		r := v - predicted[i]
		ssr += r * r
		sst += (v - mean) * (v - mean)
		e := ErrorPct(v, predicted[i])
		st.AvgErrPct += e
		st.MaxErrPct = math.Max(st.MaxErrPct, e)
	}
	st.AvgErrPct /= float64(len(measured))
	st.RMSE = math.Sqrt(ssr / float64(len(measured)))
	switch {
	case len(measured) <= params:
		st.R2Error = fmt.Sprintf("exact fit: %d observations for %d parameters leave nothing to measure the fit by", len(measured), params)
	case sst == 0:
		st.R2Error = "the measurements are constant: no variance to explain"
	default:
		r2 := 1 - ssr/sst
		st.R2 = &r2
	}
	return st
}

// ErrNotIdentifiable is returned when the design matrix is rank deficient:
// the data cannot tell the parameters apart.
var ErrNotIdentifiable = errors.New("parameters not identifiable from the data (rank-deficient design)")

// LeastSquares solves min ‖Xβ − y‖₂ by QR (gonum). Rows of x are the
// observations; all must have the same length p ≤ len(rows).
func LeastSquares(x [][]float64, y []float64) ([]float64, error) {
	beta, _, err := leastSquares(x, y)
	return beta, err
}

// leastSquares is LeastSquares with the covariance of β: σ²·(XᵀX)⁻¹ with
// σ² the residual variance SSR/(n − p). cov is nil when n = p: an exact
// fit says nothing of the noise. The plausibility checks of the fits use
// it, so that a coefficient is called negative only beyond its noise.
func leastSquares(x [][]float64, y []float64) (beta []float64, cov [][]float64, err error) {
	n := len(x)
	if n == 0 {
		return nil, nil, errors.New("no observations")
	}
	p := len(x[0])
	if n < p {
		return nil, nil, fmt.Errorf("%d observations for %d parameters", n, p)
	}
	a := mat.NewDense(n, p, nil)
	for i, row := range x {
		if len(row) != p {
			return nil, nil, errors.New("ragged design matrix")
		}
		a.SetRow(i, row)
	}
	// Scale the columns so that the rank test is unit-free.
	scale := make([]float64, p)
	for j := range p {
		scale[j] = mat.Norm(a.ColView(j), 2)
		if scale[j] == 0 {
			return nil, nil, ErrNotIdentifiable
		}
		for i := range n {
			a.Set(i, j, a.At(i, j)/scale[j])
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var r mat.Dense
	qr.RTo(&r)
	var maxd float64
	for j := range p {
		maxd = math.Max(maxd, math.Abs(r.At(j, j)))
	}
	for j := range p {
		if math.Abs(r.At(j, j)) <= 1e-10*maxd {
			return nil, nil, ErrNotIdentifiable
		}
	}
	var b mat.Dense
	if err := qr.SolveTo(&b, false, mat.NewDense(n, 1, y)); err != nil {
		return nil, nil, err
	}
	beta = make([]float64, p)
	for j := range p {
		beta[j] = b.At(j, 0) / scale[j]
	}
	if n == p {
		return beta, nil, nil
	}
	var ssr float64
	for i, row := range x {
		res := y[i]
		for j, v := range row {
			res -= v * beta[j]
		}
		ssr += res * res
	}
	s2 := ssr / float64(n-p)
	// (AᵀA)⁻¹ = R⁻¹R⁻ᵀ for the scaled A; unscale both sides.
	rt := mat.NewTriDense(p, mat.Upper, nil)
	for i := range p {
		for j := i; j < p; j++ {
			rt.SetTri(i, j, r.At(i, j))
		}
	}
	var ri mat.TriDense
	if err := ri.InverseTri(rt); err != nil {
		return beta, nil, nil // ill-conditioned beyond the rank test: no error bars
	}
	cov = make([][]float64, p)
	for j := range p {
		cov[j] = make([]float64, p)
		for k := range p {
			var s float64
			for m := max(j, k); m < p; m++ {
				s += ri.At(j, m) * ri.At(k, m)
			}
			cov[j][k] = s2 * s / (scale[j] * scale[k])
		}
	}
	return beta, cov, nil
}
