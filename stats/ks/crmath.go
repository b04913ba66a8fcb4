package ks

import "math"

// Correctly rounded log, integer powers and x^1.5 (and the double-double exp
// they are built on).
//
// The reference p-values come from C code (SciPy, R, NumPy) linked against
// glibc, whose log and pow are within 0.52 ulp: correctly rounded for all but
// about 0.02-0.04% of arguments. Go's math.Log and math.Pow are accurate to
// about one ulp but differ from glibc on 5-50% of arguments, which shows up as
// last-bit differences in p-values and, where a formula subtracts from 1
// (R's 1 − A/exp(lgamma...), 1 − K(x)), as relative errors far above one ulp.
// These helpers evaluate in double-double and round once; they cost tens to
// a couple of hundred nanoseconds and do not allocate. (exp itself is
// reproduced bit for bit by libmExp.)

// The constants they use (ln2by64c1..3, exp2Tab, invFact, ddThird,
// ddFifth) are literals in tables.go, generated and checked by tables_test.go.

// expDD returns e^x with a relative error of about 2^-95. It returns
// (+Inf, 0) above the overflow threshold and (0, 0) far below the underflow
// threshold.
func expDD(x float64) dd {
	switch {
	case math.IsNaN(x):
		return dd{x, 0}
	case x > 709.7827128933841:
		return dd{math.Inf(1), 0}
	case x < -745.2:
		return dd{}
	}
	k := math.RoundToEven(x * (64 / math.Ln2))
	// r = x - k*ln2/64 in double-double.
	r := ddAddDD(x, -k*ln2by64c1) // k*c1 is exact
	r = r.sub(ddMulDD(k, ln2by64c2))
	r = r.subD(float64(k * ln2by64c3))
	ki := int(k)
	j := ki & 63
	m := (ki - j) >> 6

	// e^r - 1 for |r| <= ln2/128: degrees 1..5 in double-double, 6..11 in
	// double (they are below 2^-54 and their rounding is below 2^-100).
	rh := r.hi
	tail := 1.0 / 39916800
	tail = float64(tail*rh) + 1.0/3628800
	tail = float64(tail*rh) + 1.0/362880
	tail = float64(tail*rh) + 1.0/40320
	tail = float64(tail*rh) + 1.0/5040
	tail = float64(tail*rh) + 1.0/720
	tail = float64(tail * rh)
	t := invFact[5].addD(tail)
	t = invFact[4].add(r.mul(t))
	t = invFact[3].add(r.mul(t))
	t = invFact[2].add(r.mul(t))
	t = invFact[1].add(r.mul(t))
	p := r.mul(t) // e^r - 1
	tab := exp2Tab[j]
	res := tab.add(tab.mul(p))
	if m < -1021 {
		return dd{ldexpRound(res, m), 0}
	}
	return res.ldexp(m)
}

// logDD returns log(x) for finite x > 0 with an absolute error of about
// 2^-95 (relative near x = 1). x <= 0 gives -Inf or NaN like math.Log.
func logDD(x float64) dd {
	if !(x > 0) || math.IsInf(x, 1) {
		return dd{math.Log(x), 0}
	}
	if x > 0.96875 && x < 1.03125 {
		// log(1+f) = 2 atanh(s), s = f/(2+f); f = x-1 is exact here.
		f := x - 1
		if f == 0 {
			return dd{}
		}
		s := ddFrom(f).div(ddAddDD(2, f))
		s2 := s.sqr()
		// 2(s + s^3/3 + s^5/5 + ...), |s| < 0.016 so s^2 < 2^-11.9.
		sh2 := s2.hi
		tail := 1.0 / 15
		tail = float64(tail*sh2) + 1.0/13
		tail = float64(tail*sh2) + 1.0/11
		tail = float64(tail*sh2) + 1.0/9
		tail = float64(tail*sh2) + 1.0/7
		tail = float64(tail * sh2)
		u := ddFifth.addD(tail)
		u = ddThird.add(s2.mul(u))
		u = ddFrom(1).add(s2.mul(u))
		return s.mul(u).mulD(2)
	}
	y0 := math.Log(x)
	// One Newton step on e^y = x: y = y0 + log(x e^-y0) with x e^-y0 = 1+t.
	e := expDD(-y0)
	p, pe := twoProd(x, e.hi)
	t := (p - 1) + (pe + float64(x*e.lo)) // p-1 is exact (p is within 2^-50 of 1)
	t = t - float64(0.5*t*t)
	return ddAddDD(y0, t)
}

// logCR is log rounded to nearest; glibc's log (0.52 ulp) differs in ~0.02% of
// arguments.
func logCR(x float64) float64 { return logDD(x).round() }

// powiDD returns x^n for an integer n >= 0 as (mantissa, binary exponent)
// by binary powering in double-double. The running values are rescaled only
// when they drift far from 1, so neither overflow nor underflow happens on
// the way and the common case costs about 20 double-double multiplications.
func powiDD(x float64, n int) (dd, int) {
	if n == 0 {
		return dd{1, 0}, 0
	}
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return dd{math.Pow(x, float64(n)), 0}, 0
	}
	const lo, hi = 0x1p-450, 0x1p450
	bm, be := math.Frexp(x)
	base := dd{bm, 0}
	res, re := dd{1, 0}, 0
	for {
		if n&1 == 1 {
			res = res.mul(base)
			re += be
			if a := math.Abs(res.hi); a < lo || a > hi {
				var e int
				res, e = res.frexp()
				re += e
			}
		}
		n >>= 1
		if n == 0 {
			break
		}
		base = base.sqr()
		be *= 2
		if a := math.Abs(base.hi); a < lo || a > hi {
			var e int
			base, e = base.frexp()
			be += e
		}
	}
	return res, re
}

// powiCR is x^n rounded to nearest for integer n (negative n allowed), the
// value glibc's pow(x, (double)n) returns.
func powiCR(x float64, n int) float64 {
	if n < 0 {
		if x == 0 {
			return math.Pow(x, float64(n))
		}
		m, e := powiDD(x, -n)
		q := ddFrom(1).div(m)
		return ldexpRound(q, -e)
	}
	m, e := powiDD(x, n)
	return ldexpRound(m, e)
}

// ldexpRound returns (a.hi+a.lo)·2^e rounded once to the nearest float64,
// also when the result is subnormal (where rounding hi alone and then
// scaling would round twice).
func ldexpRound(a dd, e int) float64 {
	s, t := twoSum(a.hi, a.lo)
	a = dd{s, t}
	h := math.Ldexp(a.hi, e)
	if math.Abs(h) >= 0x1p-1022 || math.IsInf(h, 0) || math.IsNaN(h) {
		return h
	}
	// Subnormal (or zero): h is hi rounded to the subnormal grid; correct it
	// with what was rounded away plus the low word. Everything here is in
	// a's scale, where the grid spacing is ulp.
	ulp := math.Ldexp(0x1p-1074, -e)
	r := (a.hi - math.Ldexp(h, -e)) + a.lo
	switch {
	case r > ulp/2:
		h = math.Nextafter(h, math.Inf(1))
	case r < -ulp/2:
		h = math.Nextafter(h, math.Inf(-1))
	case r == ulp/2 || r == -ulp/2:
		next := math.Nextafter(h, math.Copysign(math.Inf(1), r))
		if math.Float64bits(math.Abs(next))&1 == 0 {
			h = next
		}
	}
	return h
}

// pow15CR is x^1.5 rounded to nearest (glibc's pow(x, 1.5)), x >= 0.
func pow15CR(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 1) {
		return math.Pow(x, 1.5)
	}
	s := math.Sqrt(x)
	sl := math.FMA(-s, s, x) / (2 * s)
	return dd{s, sl}.mulD(x).round()
}
