package forecast

import "math"

// ridge is an online ridge regression with exponential forgetting, shrunk
// toward prior weights w0: w = argmin Σ λ^age (y − w·f)² + α‖w − w0‖².
// It is the combiner of the auto method: with no data it forecasts exactly
// what w0 says (ks-paper), and it moves away only as far as the outcomes
// already known justify.
type ridge struct {
	lambda, alpha float64
	d             int
	s             []float64 // Σ λ^age f fᵀ, d×d row-major
	b             []float64 // Σ λ^age f y
	w0, w         []float64
	a             []float64 // scratch: the system to factorize
	dirty         bool
}

func newRidge(d int, w0 []float64, lambda, alpha float64) *ridge {
	r := &ridge{lambda: lambda, alpha: alpha, d: d, s: make([]float64, d*d), b: make([]float64, d),
		w0: w0, w: append([]float64(nil), w0...), a: make([]float64, d*d)}
	return r
}

// prior moves the shrinkage target to (1−g) on feature a and g on b.
func (r *ridge) prior(a, b int, g float64) {
	if r.w0[a] == 1-g && r.w0[b] == g {
		return
	}
	clear(r.w0)
	r.w0[a], r.w0[b] = 1-g, g
	r.dirty = true
}

// priorPredict is the prior's forecast, w0·f.
func (r *ridge) priorPredict(f []float64) float64 {
	p := 0.0
	for i, x := range f {
		p += r.w0[i] * x
	}
	return p
}

func (r *ridge) predict(f []float64) float64 {
	if r.dirty {
		r.solve()
	}
	p := 0.0
	for i, x := range f {
		p += r.w[i] * x
	}
	return p
}

func (r *ridge) learn(f []float64, y float64) {
	d := r.d
	for i := 0; i < d; i++ {
		row := r.s[i*d : i*d+d]
		for j := i; j < d; j++ {
			row[j] = r.lambda*row[j] + f[i]*f[j]
		}
		r.b[i] = r.lambda*r.b[i] + f[i]*y
	}
	r.dirty = true
}

// solve refreshes w by a Cholesky factorization of S + αI (d ≤ 16: no
// allocation, no library call per issue).
func (r *ridge) solve() {
	d, a := r.d, r.a
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := r.s[i*d+j]
			if i == j {
				v += r.alpha
			}
			a[i*d+j], a[j*d+i] = v, v
		}
	}
	// In-place Cholesky: lower triangle holds L. The loops run over row
	// slices (no bounds check per term), in the order of the textbook
	// loops: the same sums, to the bit.
	for j := 0; j < d; j++ {
		rj := a[j*d : j*d+j]
		sum := a[j*d+j]
		for _, x := range rj {
			sum -= x * x
		}
		if sum <= 0 {
			return // keep the previous weights
		}
		ljj := math.Sqrt(sum)
		a[j*d+j] = ljj
		for i := j + 1; i < d; i++ {
			ri := a[i*d : i*d+j]
			s := a[i*d+j]
			for k, x := range ri {
				s -= x * rj[k]
			}
			a[i*d+j] = s / ljj
		}
	}
	w := r.w[:d]
	for i := 0; i < d; i++ { // forward: L z = b + α w0
		ri := a[i*d : i*d+i]
		s := r.b[i] + r.alpha*r.w0[i]
		for k, x := range ri {
			s -= x * w[k]
		}
		w[i] = s / a[i*d+i]
	}
	for i := d - 1; i >= 0; i-- { // back: Lᵀ w = z
		s := w[i]
		for k := i + 1; k < d; k++ {
			s -= a[k*d+i] * w[k]
		}
		w[i] = s / a[i*d+i]
	}
	r.dirty = false
}
