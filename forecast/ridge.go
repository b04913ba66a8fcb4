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

// solve refreshes w by a Cholesky factorization of S + αI (d ≤ 32: no
// allocation, no library call per issue). Only the lower triangle is
// built and factorized; the loops run over row slices cut to the same
// length (no bounds check per term), and the back substitution reads Lᵀ,
// which the factorization writes in the upper triangle as it goes, by
// rows: the same sums, in the same order, as the textbook loops, to the
// bit (TestRidgeSolveBitIdentical); the factorization takes four rows at
// a time. BenchmarkRidgeSolve (d = 20): 1.11-1.16 µs against 1.58-1.71.
func (r *ridge) solve() {
	d, a := r.d, r.a
	for j := 0; j < d; j++ { // row j of the lower triangle: S[i][j], i < j, is s[i*d+j]
		row := a[j*d : j*d+j+1]
		for i := range row[:j] {
			row[i] = r.s[i*d+j]
		}
		row[j] = r.s[j*d+j] + r.alpha
	}
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
		i := j + 1
		// Four rows at a time: four sums, each in its own order, run side
		// by side (a sum is a chain of dependent steps; parallel chains
		// keep the multiplier busy).
		for ; i+3 < d; i += 4 {
			r0 := a[i*d : i*d+j]
			r1, r2, r3 := a[(i+1)*d:(i+1)*d+j], a[(i+2)*d:(i+2)*d+j], a[(i+3)*d:(i+3)*d+j]
			r1, r2, r3, rj := r1[:len(r0)], r2[:len(r0)], r3[:len(r0)], rj[:len(r0)]
			s0, s1, s2, s3 := a[i*d+j], a[(i+1)*d+j], a[(i+2)*d+j], a[(i+3)*d+j]
			for k, x := range r0 {
				y := rj[k]
				s0 -= x * y
				s1 -= r1[k] * y
				s2 -= r2[k] * y
				s3 -= r3[k] * y
			}
			for n, v := range [4]float64{s0, s1, s2, s3} {
				l := v / ljj
				a[(i+n)*d+j], a[j*d+i+n] = l, l // L[i][j], and Lᵀ[j][i] for the back substitution
			}
		}
		for ; i < d; i++ {
			ri := a[i*d : i*d+j]
			rj := rj[:len(ri)]
			s := a[i*d+j]
			for k, x := range ri {
				s -= x * rj[k]
			}
			l := s / ljj
			a[i*d+j], a[j*d+i] = l, l
		}
	}
	w := r.w[:d]
	for i := 0; i < d; i++ { // forward: L z = b + α w0
		ri := a[i*d : i*d+i]
		wi := w[:len(ri)]
		s := r.b[i] + r.alpha*r.w0[i]
		for k, x := range ri {
			s -= x * wi[k]
		}
		w[i] = s / a[i*d+i]
	}
	for i := d - 1; i >= 0; i-- { // back: Lᵀ w = z
		ti, wi := a[i*d+i+1:i*d+d], w[i+1:d]
		ti = ti[:len(wi)]
		s := w[i]
		for k, x := range ti {
			s -= x * wi[k]
		}
		w[i] = s / a[i*d+i]
	}
	r.dirty = false
}
