package ks

import "math"

// R parity: ks.test(x, y) with the default exact = NULL in R 4.2.2 (Debian
// bookworm's r-base-core):
//
//   - exact iff n1·n2 < 10000: psmirnov(D, sizes, z = pooled sample,
//     lower.tail = FALSE), the permutation distribution of D conditional on
//     the observed tie pattern (Schröer & Trenkler 1995). R 4.2.2 evaluates it
//     in R code as 1 − A/exp(lgamma(N+1) − lgamma(n1+1) − lgamma(n2+1)), where
//     A counts the lattice paths that stay below D at the ends of tie blocks;
//     we reproduce that arithmetic, including its loss of precision for tiny
//     p (newer R computes the upper tail directly and differs there);
//   - otherwise the Kolmogorov limit 1 − K(√n_e·D) from R's C routine pkstwo
//     (tol = 1e-6), with no small-sample correction and no tie handling.

const rExactMaxProduct = 10000 // exact iff n1·n2 < 10000

// rExactP returns R 4.2.2's exact two-sided p-value for histograms a, b with
// statistic num/(n1·n2).
//
// Cost: O(n1·n2) time (< 10^4 steps under the default switch) and O(n1+n2)
// memory; it allocates two small slices.
func rExactP(a, b *Hist, num int64) float64 {
	n1, n2 := int(a.n), int(b.n)
	N := n1 + n2
	// tieEnd[k] (k = 1..N) is true when the k-th smallest pooled value differs
	// from the (k+1)-th, i.e. k is the cumulative pooled count at a value.
	tieEnd := make([]bool, N+1)
	var cum int64
	for v := 0; v < max(len(a.counts), len(b.counts)); v++ {
		var c int64
		if v < len(a.counts) {
			c += a.counts[v]
		}
		if v < len(b.counts) {
			c += b.counts[v]
		}
		if c > 0 {
			cum += c
			tieEnd[cum] = true
		}
	}

	// diag[u] = number of lattice paths to (u, k-u) that never reached
	// |u/n1 - v/n2| >= D at a tie-block end. R keeps the counts in doubles,
	// adds neighbours once per step and multiplies by the 0/1 test; the same
	// operations give the same (rounded, for large counts) values.
	// q > d in R, with q = (h - 0.5)/(n1 n2), is |u n2 - v n1| < h in integers.
	diag := make([]float64, n1+1)
	diag[0] = 1
	h := num
	ln1, ln2 := int64(n1), int64(n2)
	for k := 1; k <= N; k++ {
		lo := max(0, k-n2)
		hi := min(k, n1)
		// Update in place from high u to low u: new[u] = old[u] + old[u-1].
		// old[u] exists only for u <= k-1 and k-1-u <= n2.
		for u := hi; u >= lo; u-- {
			var s float64
			if u <= k-1 && k-1-u <= n2 {
				s = diag[u]
			}
			if u >= 1 && u-1 >= max(0, k-1-n2) {
				s += diag[u-1]
			}
			if tieEnd[k] {
				dd := int64(u)*ln2 - int64(k-u)*ln1
				if dd < 0 {
					dd = -dd
				}
				if !(dd < h) {
					s = 0
				}
			}
			diag[u] = s
		}
		if lo > 0 {
			diag[lo-1] = 0
		}
	}
	ret := diag[n1]
	logdenom := rLgammaInt(N+1) - rLgammaInt(n1+1) - rLgammaInt(n2+1)
	p := 1 - ret/libmExp(logdenom)
	return clip01(p)
}

// rAsympP returns R's asymptotic two-sided p-value 1 − K(√n_e·D) for the
// exact statistic num/(n1·n2). R evaluates it at its own floating-point D (a
// cumulative sum of ±1/n), which can be a few ulps away; the effect on p is
// of order 1e-15 relative.
func rAsympP(n1, n2 int, num int64) float64 {
	return rAsympPAt(n1, n2, float64(num)/(float64(n1)*float64(n2)))
}

// rAsympPAt is psmirnov(d, c(n1, n2), exact = FALSE, lower.tail = FALSE)
// followed by ks.test's clamp to [0, 1].
func rAsympPAt(n1, n2 int, d float64) float64 {
	if d < 0x1p-52 { // .Machine$double.eps: the lower tail is set to 0
		return 1
	}
	fn1, fn2 := float64(n1), float64(n2)
	n := fn1 * fn2 / (fn1 + fn2)
	return clip01(1 - pkstwo(math.Sqrt(n)*d, 1e-6))
}

var (
	mPi2      = math.Pi / 2 // M_PI_2
	mPi4      = math.Pi / 4 // M_PI_4
	m1Sqrt2Pi = 0.398942280401432677939946059934
)

// pkstwo ports R's C routine pkstwo (R <= 4.2; K2l in later R): the
// Kolmogorov limit distribution K(x) = 1 − 2 Σ (−1)^(k−1) e^(−2k²x²),
// evaluated with the Jacobi theta form for x < 1 (where R's k_max makes it a
// single term for tol = 1e-6) and the alternating series, stopped at tol,
// otherwise. O(1), no allocation.
func pkstwo(x, tol float64) float64 {
	kMax := int(math.Sqrt(2 - logCR(tol)))
	if x < 1 {
		z := -float64(mPi2*mPi4) / float64(x*x)
		w := logCR(x)
		s := 0.0
		for k := 1; k < kMax; k += 2 {
			s += libmExp(float64(float64(k*k)*z) - w)
		}
		return s / m1Sqrt2Pi
	}
	z := -2 * x * x
	s := -1.0
	k := 1
	old, nw := 0.0, 1.0
	for math.Abs(old-nw) > tol {
		old = nw
		nw += float64(2*s) * libmExp(float64(float64(z*float64(k))*float64(k)))
		s *= -1
		k++
	}
	return nw
}

// algmcs are the Chebyshev coefficients of R's lgammacor (only the first
// nalgm = 5 are used in double precision).
var algmcs = [...]float64{
	+.1666389480451863247205729650822e+0,
	-.1384948176067563840732986059135e-4,
	+.9810825646924729426157171547487e-8,
	-.1809129475572494194263306266719e-10,
	+.6221098041892605227126015543416e-13,
}

// chebyshevEval ports R's chebyshev_eval.
func chebyshevEval(x float64, a []float64) float64 {
	twox := x * 2
	var b0, b1, b2 float64
	n := len(a)
	for i := 1; i <= n; i++ {
		b2 = b1
		b1 = b0
		b0 = float64(float64(twox*b1)-b2) + a[n-i]
	}
	return (b0 - b2) * 0.5
}

// lgammacor ports R's lgammacor for 10 <= x < 94906265.62425156.
func lgammacor(x float64) float64 {
	tmp := 10 / x
	return chebyshevEval(float64(float64(tmp*tmp)*2)-1, algmcs[:]) / x
}

// rLgammaInt is R's lgamma(x) for an integer x >= 1 (R's own lgammafn, not
// the C library's): log((x-1)!) below 11, Stirling with lgammacor above.
// R's exact p-value is 1 − A/exp(logdenom), so a one-ulp difference in
// logdenom shows up as a relative error of up to 1e-13/p in p; matching R's
// formula (and rounding) keeps the agreement at the 1e-15 level.
func rLgammaInt(n int) float64 {
	const mLnSqrt2Pi = 0.918938533204672741780329736406 // log(sqrt(2*pi))
	if n <= 10 {
		f := 1.0
		for i := 2; i < n; i++ {
			f *= float64(i)
		}
		return logCR(f)
	}
	x := float64(n)
	if x > 4934720 {
		return mLnSqrt2Pi + float64((x-0.5)*logCR(x)) - x
	}
	return float64(mLnSqrt2Pi+float64((x-0.5)*logCR(x))) - x + lgammacor(x)
}
