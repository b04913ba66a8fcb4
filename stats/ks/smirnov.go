package ks

import "math"

// smirnovSF ports the survival function of Cephes' smirnov(n, x) as shipped
// in SciPy 1.10.1 (scipy/special/cephes/kolmogorov.c, van Mulbregt's 2018
// double-double rewrite): the exact one-sided Kolmogorov–Smirnov tail
//
//	Pr(D_n^+ >= x) = x · Σ_{v=0}^{⌊n(1-x)⌋} C(n,v) (x+v/n)^(v-1) (1-x-v/n)^(n-v),
//
// summed with early termination once the remaining terms cannot matter. kstwo
// uses 2·smirnov(n, x) for the upper tail of the two-sided statistic when
// n·x² is large. The cost is O(number of terms kept), typically a few hundred
// to a few thousand for the n and x reached from ks_2samp; it does not
// allocate. The derivative (pdf) bookkeeping of the original is dropped: it
// never influences the returned survival probability.
func smirnovSF(n int, x float64) float64 {
	const (
		smirnovMaxComputeN = 1000000
		smUpperMaxTerms    = 3
		smUpperSumMinN     = 10
		minLog             = -7.451332191019412076235e2 // Cephes MINLOG (denormals)
	)
	if !(n > 0 && x >= 0.0 && x <= 1.0) {
		return math.NaN()
	}
	if n == 1 {
		return 1 - x
	}
	if x == 0.0 {
		return 1.0
	}
	if x == 1.0 {
		return 0.0
	}
	alpha, nxfl := modNX(n, x)
	n1mxfl := n - nxfl
	if alpha != 0 {
		n1mxfl--
	}
	n1mxceil := n - nxfl
	if alpha == 0 {
		n1mxfl--
		n1mxceil++
	}

	// x <= 1/n
	if nxfl == 0 || (nxfl == 1 && alpha == 0) {
		t := pow2(1, x, n-1)
		cdf := x * t
		return clip01(1 - cdf)
	}
	// The sf underflows.
	if float64(float64(float64(-2*n)*x)*x) < minLog {
		return 0
	}
	// x >= 1 - 1/n
	if nxfl >= n-1 {
		return clip01(pow2(1, -x, n))
	}
	// n too large to sum: p ~ e^(-(6nx+1)^2 / 18n).
	if n > smirnovMaxComputeN {
		fn := float64(n)
		logp := -powiCR(float64(6.0*fn*x)+1, 2) / 18.0 / fn
		if logp < -math.Ln2 {
			return clip01(libmExp(logp))
		}
		cdf := -math.Expm1(logp)
		return clip01(1 - cdf)
	}

	nUpperTerms := n - n1mxceil + 1
	useUpperSum := nUpperTerms <= 1 && x < 0.5
	useUpperSum = useUpperSum || (n >= smUpperSumMinN && nUpperTerms <= smUpperMaxTerms &&
		x <= 0.5/math.Sqrt(float64(n)))

	start, step, nTerms := 0, 1, n1mxfl+1
	vmid := n / 2
	cman, cexpt := dd{1, 0}, 0
	var aj dd
	if useUpperSum {
		start = n
		step = -1
		nTerms = n - n1mxceil + 1
		aj = pow4D(1, x, 1, 0, n-1)
	} else {
		t2 := pow4D(1, -x, 1, 0, n)
		aj = t2.divD(x)
	}
	ajSum := dd{}.add(aj)
	cman, cexpt = updateBinomial(cman, cexpt, n, 0)
	for j := 1; j < nTerms; j++ {
		v := start + j*step
		aj = computeAv(n, x, v, cman, cexpt)
		if aj.isFinite() && !aj.isZero() {
			ajSum = ajSum.add(aj)
		}
		// Safe to terminate early?
		if !aj.isZero() {
			if float64(float64(4*(nTerms-j))*math.Abs(aj.hi)) < float64(0x1p-52*ajSum.hi) && j != nTerms-1 {
				break
			}
		} else if j > vmid {
			break
		}
		cman, cexpt = updateBinomial(cman, cexpt, n, j)
	}
	prob := ajSum.mulD(x).hi // mul_dD(x, AjSum), then dd_to_double
	var sf float64
	if step < 0 {
		sf = 1 - prob
	} else {
		sf = prob
	}
	return clip01(sf)
}

// modNX computes floor(n*x) and the fractional part exactly (modNX in
// kolmogorov.c). If the fraction rounds to 1 it carries into the floor.
func modNX(n int, x float64) (alpha float64, nxfloor int) {
	nxD := ddMulDD(float64(n), x)
	nxfloorD := nxD.floor()
	alphaD := nxD.sub(nxfloorD)
	alpha = alphaD.hi
	nxfloor = int(nxfloorD.hi)
	if alpha == 1 {
		nxfloor++
		alpha = 0
	}
	return alpha, nxfloor
}

// updateBinomial advances C(n, j) to C(n, j+1), stored as a double-double
// mantissa in [0.5, 1) and a separate binary exponent.
func updateBinomial(cman dd, cexpt int, n, j int) (dd, int) {
	rat := ddDiv(float64(n-j), float64(j)+1.0)
	man2 := cman.mul(rat)
	man2, e := man2.frexp()
	return man2, cexpt + e
}

// powD is pow_D: a^m for a double-double a, using the (correctly rounded)
// double power of the high word and a first-order correction for the low word.
func powD(a dd, m int) dd {
	if m <= 0 {
		if m == 0 {
			return dd{1, 0}
		}
		return powD(a, -m).inv()
	}
	if a.isZero() {
		return dd{}
	}
	ans := powiCR(a.hi, m)
	r := a.lo / a.hi
	adj := float64(m) * r
	if math.Abs(adj) > 1e-8 {
		if math.Abs(adj) < 1e-4 {
			// First two terms of the Taylor series of (1+r)^m.
			adj += float64(float64(float64(m)*r) * float64(float64(float64(m-1)/2.0)*r))
		} else {
			adj = math.Expm1(float64(m) * math.Log1p(r))
		}
	}
	return ddAddDD(ans, float64(ans*adj))
}

// pow2 is pow2(a, b, m) = (a+b)^m rounded to a double.
func pow2(a, b float64, m int) float64 { return powD(ddAddDD(a, b), m).hi }

// nextPowerOf2 ports the helper of the same name in kolmogorov.c.
func nextPowerOf2(x float64) float64 {
	q := math.Ldexp(x, 1-53)
	L := math.Abs(q + x)
	if L == 0 {
		L = math.Abs(x)
	} else {
		if Lint := int(L); float64(Lint) == L {
			L = float64(Lint)
		}
	}
	return L
}

// pow2ScaledD is pow2Scaled_D: a^m returned as (significand, binary
// exponent), splitting the power when the result would leave the double range.
func pow2ScaledD(a dd, m int) (dd, int) {
	const maxExponent = 960
	if m <= 0 {
		if m == 0 {
			return dd{1, 0}, 0
		}
		ans, aE1 := pow2ScaledD(a, -m)
		ans, aE2 := ans.inv().frexp()
		return ans, -aE1 + aE2
	}
	y, yE := a.frexp()
	if m == 1 {
		return y, yE
	}
	maxExpt := maxExponent
	ln2 := math.Ln2 // a float64 variable: the C code multiplies at run time
	if float64(float64(m)*(y.hi-1))/y.hi < float64(-maxExponent)*ln2 {
		lg2y := logCR(y.hi) / ln2
		lgAns := float64(m) * lg2y
		if lgAns <= -maxExponent {
			maxExpt = int(nextPowerOf2(float64(-maxExponent)/lg2y+1) / 2)
		}
	}
	if m <= maxExpt {
		ans1 := powD(y, m)
		ans, ansE := ans1.frexp()
		return ans, ansE + m*yE
	}
	q := m / maxExpt
	r := m % maxExpt
	// y^m = (y^maxExpt)^q * y^r
	y2r, y2rE := pow2ScaledD(y, r)
	y2m, y2mE := pow2ScaledD(y, maxExpt)
	y2mq, y2mqE := pow2ScaledD(y2m, q)
	ans, ansE := y2r.mul(y2mq).frexp()
	y2mqE += y2mE * q
	ansE += y2mqE + y2rE
	ansE += m * yE
	return ans, ansE
}

// pow4D is pow4_D: ((a+b)/(c+d))^m in double-double.
func pow4D(a, b, c, d float64, m int) dd {
	if m <= 0 {
		if m == 0 {
			return dd{1, 0}
		}
		return pow4D(c, d, a, b, -m)
	}
	A := ddAddDD(a, b)
	C := ddAddDD(c, d)
	if A.isZero() {
		if C.isZero() {
			return dd{math.NaN(), math.NaN()}
		}
		return dd{}
	}
	if C.isZero() {
		if A.hi < 0 {
			return dd{math.Inf(-1), math.Inf(-1)}
		}
		return dd{math.Inf(1), math.Inf(1)}
	}
	return powD(A.div(C), m)
}

// computeAv is one term of the sum:
// A_v(n, x) = C(n,v) (1-x-v/n)^(n-v) (x+v/n)^(v-1).
func computeAv(n int, x float64, v int, cman dd, cexpt int) dd {
	t2x := ddDiv(float64(n-v), float64(n)).subD(x) // 1 - x - v/n
	t2, t2E := pow2ScaledD(t2x, n-v)
	t1x := ddDiv(float64(v), float64(n)).addD(x) // x + v/n
	t1, t1E := pow2ScaledD(t1x, v-1)
	ans := t1.mul(t2)
	ans = ans.mul(cman)
	return ans.ldexp(cexpt + t1E + t2E)
}
