package forecast

import (
	"math"
	"math/rand/v2"
	"testing"
)

// solveRef is ridge.solve as it was (the textbook loops), kept to check
// that the faster one gives the same weights to the bit.
func (r *ridge) solveRef() {
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

func TestRidgeSolveBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{1, 2, 5, 11, 20, 23} {
		w0 := make([]float64, d)
		w0[0] = 1
		r := newRidge(d, w0, 0.999, 0.3)
		q := newRidge(d, append([]float64(nil), w0...), 0.999, 0.3)
		f := make([]float64, d)
		for n := range 300 {
			for i := range f {
				f[i] = rng.Float64() * float64(n%7)
			}
			y := rng.Float64()
			r.learn(f, y)
			q.learn(f, y)
			r.solve()
			q.solveRef()
			for i := range r.w {
				if math.Float64bits(r.w[i]) != math.Float64bits(q.w[i]) {
					t.Fatalf("d=%d, step %d: w[%d] = %v, the textbook loops give %v", d, n, i, r.w[i], q.w[i])
				}
			}
		}
	}
}
