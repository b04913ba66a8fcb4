package ks

import "math"

// dd is an unevaluated sum hi+lo of two float64 values (a "double-double",
// about 106 significant bits). It exists for two reasons:
//
//   - SciPy's Cephes smirnov() is written in double-double arithmetic (the
//     qd package); reproducing its numbers needs the same operations.
//   - glibc's exp, log and pow are (almost always) correctly rounded, Go's are
//     not (they are off by one ulp in 5-50% of arguments). Evaluating in
//     double-double and rounding once lets us return the same float64 as the
//     C libraries behind SciPy and R, so p-values can match bit for bit.
//
// The operations below follow SciPy's dd_real_idefs.h (qd 2.3.18), except that
// two_prod uses math.FMA, which computes the same exact error term.
type dd struct{ hi, lo float64 }

// twoSum returns s = fl(a+b) and the exact rounding error e (a+b = s+e).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return
}

// quickTwoSum is twoSum for |a| >= |b|.
func quickTwoSum(a, b float64) (s, e float64) {
	s = a + b
	e = b - (s - a)
	return
}

// twoProd returns p = fl(a*b) and the exact error (a*b = p+e).
func twoProd(a, b float64) (p, e float64) {
	p = a * b
	e = math.FMA(a, b, -p)
	return
}

func ddFrom(a float64) dd { return dd{a, 0} }

func ddAddDD(a, b float64) dd { s, e := twoSum(a, b); return dd{s, e} }

func ddMulDD(a, b float64) dd { p, e := twoProd(a, b); return dd{p, e} }

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

// add is the IEEE-style (Briggs/Kahan) double-double addition.
func (a dd) add(b dd) dd {
	s1, s2 := twoSum(a.hi, b.hi)
	t1, t2 := twoSum(a.lo, b.lo)
	s2 = float64(s2 + t1)
	s1, s2 = quickTwoSum(s1, s2)
	s2 = float64(s2 + t2)
	s1, s2 = quickTwoSum(s1, s2)
	return dd{s1, s2}
}

func (a dd) sub(b dd) dd { return a.add(b.neg()) }

// addD is dd + double.
func (a dd) addD(b float64) dd {
	s1, s2 := twoSum(a.hi, b)
	s2 = float64(s2 + a.lo)
	s1, s2 = quickTwoSum(s1, s2)
	return dd{s1, s2}
}

// subD is dd - double.
func (a dd) subD(b float64) dd { return a.addD(-b) }

// ddSubDFromD is double - dd (SciPy's dd_sub_d_dd).
func ddSubDFromD(a float64, b dd) dd {
	s1, s2 := twoSum(a, -b.hi)
	s2 = float64(s2 - b.lo)
	s1, s2 = quickTwoSum(s1, s2)
	return dd{s1, s2}
}

func (a dd) mul(b dd) dd {
	p1, p2 := twoProd(a.hi, b.hi)
	p2 += float64(float64(a.hi*b.lo) + float64(a.lo*b.hi))
	p1, p2 = quickTwoSum(p1, p2)
	return dd{p1, p2}
}

// mulD is dd * double.
func (a dd) mulD(b float64) dd {
	p1, e1 := twoProd(a.hi, b)
	p2, e2 := twoProd(a.lo, b)
	p1, e1 = quickTwoSum(p1, float64(float64(e2+p2)+e1))
	return dd{p1, e1}
}

// sqr is a*a.
func (a dd) sqr() dd {
	p1, p2 := twoProd(a.hi, a.hi)
	p2 += float64(2.0 * a.hi * a.lo)
	p2 += float64(a.lo * a.lo)
	s1, s2 := quickTwoSum(p1, p2)
	return dd{s1, s2}
}

// div is the "accurate" qd division (three partial quotients).
func (a dd) div(b dd) dd {
	q1 := a.hi / b.hi
	r := a.sub(b.mulD(q1))
	q2 := r.hi / b.hi
	r = r.sub(b.mulD(q2))
	q3 := r.hi / b.hi
	q1, q2 = quickTwoSum(q1, q2)
	return dd{q1, q2}.addD(q3)
}

// ddDiv is double / double in double-double (SciPy's dd_div_d_d).
func ddDiv(a, b float64) dd { return ddFrom(a).div(ddFrom(b)) }

func (a dd) divD(b float64) dd { return a.div(ddFrom(b)) }

func (a dd) isZero() bool { return a.hi == 0 }

func (a dd) isFinite() bool { return !math.IsInf(a.hi, 0) && !math.IsNaN(a.hi) }

// floor follows dd_floor.
func (a dd) floor() dd {
	hi := math.Floor(a.hi)
	lo := 0.0
	if hi == a.hi {
		lo = math.Floor(a.lo)
		hi, lo = quickTwoSum(hi, lo)
	}
	return dd{hi, lo}
}

func (a dd) ldexp(e int) dd { return dd{math.Ldexp(a.hi, e), math.Ldexp(a.lo, e)} }

// frexp follows dd_frexp: 0.5 <= |hi| < 1, or |hi| == 1 with hi*lo < 0.
func (a dd) frexp() (dd, int) {
	man, exponent := math.Frexp(a.hi)
	b1 := math.Ldexp(a.lo, -exponent)
	if math.Abs(man) == 0.5 && man*b1 < 0 {
		man *= 2
		b1 *= 2
		exponent--
	}
	return dd{man, b1}, exponent
}

// inv is 1/a.
func (a dd) inv() dd { return ddFrom(1).div(a) }

// round returns the float64 nearest to hi+lo. For a normalised dd that is hi
// itself; renormalising first makes it safe for any pair.
func (a dd) round() float64 {
	s, _ := twoSum(a.hi, a.lo)
	return s
}
