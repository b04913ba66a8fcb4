package ks

import "math"

// SciPy parity: scipy.stats.ks_2samp(x, y) with alternative='two-sided' and
// method='auto', as in SciPy 1.10.1 (Debian bookworm's python3-scipy):
//
//   - exact (Hodges' lattice-path count, which ignores ties) when
//     max(n1, n2) <= 10000;
//   - otherwise, or when the exact computation fails numerically (its
//     result falls outside [0, 1]), the "asymptotic" kstwo.sf(D, round(n_e)),
//     which is the exact one-sample Kolmogorov distribution at the rounded
//     effective sample size n_e = n1·n2/(n1+n2).

// sciPyMaxAutoN is SciPy's MAX_AUTO_N.
const sciPyMaxAutoN = 10000

// sciPyP returns SciPy's p-value for histograms a, b with exact statistic
// num/(n1·n2), and whether the exact method produced it.
func sciPyP(a, b *Hist, num int64) (p float64, exact bool) {
	n1, n2 := int(a.n), int(b.n)
	if max(n1, n2) <= sciPyMaxAutoN {
		g := gcd(n1, n2)
		h := num / int64(g) // D = h/lcm(n1, n2); num is a multiple of g
		p, ok := sciPyExact(n1, n2, g, h)
		if ok {
			return p, true
		}
		// SciPy switches to asymp with the statistic it rebuilt from h.
		lcm := int64(n1/g) * int64(n2)
		return sciPyAsymp(n1, n2, float64(h)/float64(lcm)), false
	}
	return sciPyAsymp(n1, n2, sciPyD(a, b)), false
}

// sciPyD returns the statistic exactly as ks_2samp computes it in floating
// point: the largest |c1/n1 - c2/n2| over the pooled values, where the two
// quotients are rounded before they are subtracted. The asymptotic p-value is
// evaluated at this value, so using it (rather than the exact fraction) is
// what makes the p-values agree to the last bit.
func sciPyD(a, b *Hist) float64 {
	fn1, fn2 := float64(a.n), float64(b.n)
	ca, cb := a.counts, b.counts
	m := max(len(ca), len(cb))
	var c1, c2 int64
	maxS, minS := math.Inf(-1), math.Inf(1)
	for i := 0; i < m; i++ {
		if i < len(ca) {
			c1 += ca[i]
		}
		if i < len(cb) {
			c2 += cb[i]
		}
		d := float64(c1)/fn1 - float64(c2)/fn2
		maxS = max(maxS, d)
		minS = min(minS, d)
	}
	neg := min(max(-minS, 0), 1) // np.clip(-cddiffs[argminS], 0, 1)
	if neg > maxS {
		return neg
	}
	return maxS
}

// sciPyExact ports _attempt_exact_2kssamp for the two-sided alternative. g is
// gcd(n1, n2) and h = D·lcm(n1, n2). ok is false when SciPy would give up and
// fall back to the asymptotic method.
//
// Cost: O(n) for n1 == n2; O(max(n1,n2)·w) otherwise, where w ≈ 2h/(n/g)+1
// is the width of the band of lattice points that stay inside the boundary
// (at worst n1·n2 ≈ 10^8 steps, a fraction of a second). It allocates one
// slice of min(n1,n2)+1 floats.
func sciPyExact(n1, n2, g int, h int64) (p float64, ok bool) {
	if h == 0 {
		return 1.0, true
	}
	var prob float64
	if n1 == n2 {
		prob = computeProbOutsideSquare(int64(n1), h)
	} else {
		prob = computeOuterProbInsideMethod(int64(n1), int64(n2), int64(g), h)
	}
	if !(0 <= prob && prob <= 1) {
		return prob, false
	}
	return prob, true
}

// computeProbOutsideSquare ports SciPy's _compute_prob_outside_square(n, h):
// Pr(D_{n,n} >= h/n) by a Horner-like evaluation of the alternating sum of
// binomial ratios.
func computeProbOutsideSquare(n, h int64) float64 {
	P := 0.0
	k := n / h // int(np.floor(n / h)); both positive
	for ; k >= 0; k-- {
		p1 := 1.0
		for j := int64(0); j < h; j++ {
			p1 = float64(float64(n-k*h-j)*p1) / float64(n+k*h+j+1)
		}
		P = p1 * (1.0 - P)
	}
	return 2 * P
}

// computeOuterProbInsideMethod ports SciPy's pythran kernel
// _compute_outer_prob_inside_method(m, n, g, h): one minus the proportion of
// lattice paths from (0,0) to (m,n) that stay strictly inside
// |x/m - y/n| < h/lcm(m,n), using Viehmann's recursion for the complement.
func computeOuterProbInsideMethod(m, n, g, h int64) float64 {
	if m < n {
		m, n = n, m
	}
	mg := m / g
	ng := n / g
	minj, maxj := int64(0), min(ceilDiv(h, mg), n+1)
	curlen := maxj - minj
	lenA := min(2*maxj+2, n+1)
	A := make([]float64, lenA)
	for i := range A {
		A[i] = 1
	}
	for i := minj; i < min(maxj, lenA); i++ {
		A[i] = 0
	}
	for i := int64(1); i <= m; i++ {
		lastminj, lastlen := minj, curlen
		minj = max(floorDiv(ng*i-h, mg)+1, 0)
		minj = min(minj, n)
		maxj = min(ceilDiv(ng*i+h, mg), n+1)
		if maxj <= minj {
			return 1.0
		}
		val := 0.0
		if minj != 0 {
			val = 1.0
		}
		fi := float64(i)
		for jj := int64(0); jj < maxj-minj; jj++ {
			j := jj + minj
			val = float64(float64(A[jj+minj-lastminj]*fi)+float64(val*float64(j))) / float64(i+j)
			A[jj] = val
		}
		curlen = maxj - minj
		if lastlen > curlen {
			lo := maxj - minj
			hi := min(lo+(lastlen-curlen), lenA)
			for t := lo; t < hi; t++ {
				A[t] = 1
			}
		}
	}
	return A[maxj-minj-1]
}

// sciPyAsymp is ks_2samp's two-sided asymptotic branch:
// kstwo.sf(d, np.round(n1·n2/(n1+n2))).
func sciPyAsymp(n1, n2 int, d float64) float64 {
	m, n := float64(max(n1, n2)), float64(min(n1, n2))
	en := m * n / (m + n)
	return kstwoSF(d, int(math.RoundToEven(en)))
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// floorDiv and ceilDiv are Python's // and -(-a // b) for b > 0. SciPy
// computes them as floor/ceil of a float quotient; for the sizes involved
// (|a| < 2^53, quotient fractions at least 1/b apart from integers) that is
// the same integer.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }
