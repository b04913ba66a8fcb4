package ks

import "math"

// The one-sample two-sided Kolmogorov distribution for finite n, as SciPy's
// scipy.stats.kstwo computes it (scipy/stats/_ksstats.py, SciPy 1.10.1):
// Simard & L'Ecuyer's (2011) dispatch between the Ruben–Gambino closed forms,
// the Durbin matrix (Marsaglia–Tsang–Wang), Pomeranz's recursion, the
// Pelz–Good expansion and 2·smirnov (the exact one-sided tail, Cephes).
//
// ks_2samp uses kstwo.sf(D, round(n_e)) as its "asymptotic" p-value, so this
// is needed for SciPy parity whenever a window exceeds 10000 samples. The
// Pelz–Good branch (where p ≈ 0.05 lives) is O(1); 2·smirnov, used for
// n·D² >= 2.2 (p below about 0.025), sums O(n) terms; the Durbin matrix
// branch, taken only for very small D (n·D^1.5 <= 1.4, p within ~1e-4 of 1),
// costs O(m³ log n) with m ≈ 2·n^(1/3) and allocates three m×m matrices.
//
// SciPy scales some intermediate values with numpy.longdouble (x87 80-bit)
// and multiplies matrices with BLAS; here those steps use double-double and a
// plain triple loop, so results can differ from SciPy in the last bits where
// those branches are taken.

const (
	e128  = 128
	ep128 = 0x1p128
	em128 = 0x1p-128
)

var (
	// fpi is math.Pi as a float64 variable, so that products are rounded at
	// run time as in Python (Go would fold math.Pi*math.Pi exactly).
	fpi       = math.Pi
	piSquared = fpi * fpi // np.pi ** 2 (pow(pi, 2) == pi*pi rounded)
	piFour    = powiCR(fpi, 4)
	piSix     = powiCR(fpi, 6)
	sqrt2Pi   = math.Sqrt(2 * math.Pi)
	sqrt3     = math.Sqrt(3)
	log2Pi    = logCR(2 * math.Pi)
)

// stirlingCoeffs are B_{2j}/(2j)/(2j-1) for j = 8..1 (_STIRLING_COEFFS).
var stirlingCoeffs = [...]float64{-2.955065359477124183e-2, 6.4102564102564102564e-3,
	-1.9175269175269175269e-3, 8.4175084175084175084e-4,
	-5.952380952380952381e-4, 7.9365079365079365079e-4,
	-2.7777777777777777778e-3, 8.3333333333333333333e-2}

// kstwoSF is scipy.stats.kstwo.sf(x, n) for an integer n >= 1.
func kstwoSF(x float64, n int) float64 {
	if n < 1 || math.IsNaN(x) {
		return math.NaN()
	}
	// rv_continuous.sf: 1 at or below the support's lower end 0.5/n, 0 at or
	// above its upper end 1.
	if x <= 0.5/float64(n) {
		return 1
	}
	if x >= 1 {
		return 0
	}
	return kolmognSF(n, x)
}

func clip01(p float64) float64 {
	if p < 0 {
		return 0
	}
	if p > 1 {
		return 1
	}
	return p
}

// kolmognSF ports _kolmogn(n, x, cdf=False).
func kolmognSF(n int, x float64) float64 {
	if x >= 1.0 {
		return 0
	}
	if x <= 0 {
		return 1
	}
	fn := float64(n)
	t := fn * x
	if t <= 1.0 { // Ruben–Gambino: 1/2n <= x <= 1/n
		if t <= 0.5 {
			return 1
		}
		var prob float64
		if n <= 140 {
			// np.prod(np.arange(1, n+1) * (1.0/n) * (2*t - 1)), multiplied
			// left to right.
			rn := 1.0 / fn
			c := 2*t - 1
			prob = float64(float64(1*rn) * c)
			for i := 2; i <= n; i++ {
				prob *= float64(float64(float64(i)*rn) * c)
			}
		} else {
			prob = libmExp(logNFactorialDivNPowN(n) + float64(fn*logCR(2*t-1)))
		}
		return clip01(1.0 - prob)
	}
	if t >= fn-1 { // Ruben–Gambino
		return clip01(2 * powiCR(1.0-x, n))
	}
	if x >= 0.5 { // exact: 2 * smirnov
		return clip01(2 * smirnovSF(n, x))
	}
	nxsquared := t * x
	if n <= 140 {
		if nxsquared <= 0.754693 {
			return sfFromCDF(kolmognDMTW(n, x))
		}
		if nxsquared <= 4 {
			return sfFromCDF(kolmognPomeranz(n, x))
		}
		return clip01(2 * smirnovSF(n, x))
	}
	if nxsquared >= 370.0 {
		return 0
	}
	if nxsquared >= 2.2 {
		return clip01(2 * smirnovSF(n, x))
	}
	if n <= 100000 && fn*pow15CR(x) <= 1.4 {
		return sfFromCDF(kolmognDMTW(n, x))
	}
	return clip01(1.0 - kolmognPelzGood(n, x))
}

// logNFactorialDivNPowN ports _log_nfactorial_div_n_pow_n: log(n!/n^n) by
// Stirling's series with n·log(n) removed up front.
func logNFactorialDivNPowN(n int) float64 {
	fn := float64(n)
	rn := 1.0 / fn
	x := rn / fn
	y := 0.0 // np.polyval: Horner from the leading coefficient
	for _, c := range stirlingCoeffs {
		y = float64(y*x) + c
	}
	return logCR(fn)/2 - fn + log2Pi/2 + float64(rn*y)
}

// kolmognDMTW ports _kolmogn_DMTW(n, d, cdf=True): Pr(D_n <= d) by the
// Durbin matrix algorithm in the Marsaglia–Tsang–Wang formulation, clipped to
// [0, 1]. The result is a double-double because SciPy's may be a longdouble,
// which it subtracts from 1 before rounding.
func kolmognDMTW(n int, d float64) dd {
	if d >= 1.0 {
		return dd{1, 0}
	}
	fn := float64(n)
	nd := fn * d
	if nd <= 0.5 {
		return dd{}
	}
	k := int(math.Ceil(nd))
	h := float64(k) - nd
	m := 2*k - 1

	H := make([]float64, m*m)
	v := make([]float64, m)
	w := make([]float64, m)
	fac := 1.0
	for j := 1; j <= m; j++ {
		v[j-1] = 1.0 - powiCR(h, j)
		w[j-1] = fac
		fac /= float64(j)
		v[j-1] *= fac
	}
	tt := -2 * powiCR(h, m)
	if 2*h-1.0 > 0 {
		tt = powiCR(2*h-1.0, m) - 2*powiCR(h, m)
	}
	v[m-1] = (1.0 + tt) * fac
	for i := 1; i < m; i++ {
		for r := i - 1; r < m; r++ {
			H[r*m+i] = w[r-(i-1)]
		}
	}
	for r := 0; r < m; r++ {
		H[r*m] = v[r]
	}
	for c := 0; c < m; c++ {
		H[(m-1)*m+c] = v[m-1-c]
	}

	Hpwr := make([]float64, m*m)
	for i := 0; i < m; i++ {
		Hpwr[i*m+i] = 1
	}
	tmp := make([]float64, m*m)
	nn := n
	expnt := 0
	hexpnt := 0
	for nn > 0 {
		if nn%2 == 1 {
			matMul(tmp, Hpwr, H, m)
			Hpwr, tmp = tmp, Hpwr
			expnt += hexpnt
		}
		matMul(tmp, H, H, m)
		H, tmp = tmp, H
		hexpnt *= 2
		if math.Abs(H[(k-1)*m+k-1]) > ep128 {
			for i := range H {
				H[i] /= ep128
			}
			hexpnt += e128
		}
		nn /= 2
	}

	// Multiply by n!/n^n. SciPy switches to numpy.longdouble after the first
	// rescaling; double-double stands in for it.
	p := Hpwr[(k-1)*m+k-1]
	i := 1
	for ; i <= n; i++ {
		p = float64(float64(i)*p) / fn
		if math.Abs(p) < em128 {
			break
		}
	}
	if i <= n {
		pd := ddFrom(p * ep128)
		expnt -= e128
		for i++; i <= n; i++ {
			pd = pd.mulD(float64(i)).divD(fn)
			if math.Abs(pd.hi) < em128 {
				pd = pd.ldexp(e128)
				expnt -= e128
			}
		}
		return clipDD(pd.ldexp(expnt))
	}
	if expnt != 0 {
		p = math.Ldexp(p, expnt)
	}
	return dd{clip01(p), 0}
}

// clipDD clips a double-double to [0, 1].
func clipDD(p dd) dd {
	if p.hi < 0 {
		return dd{}
	}
	if p.hi > 1 || (p.hi == 1 && p.lo > 0) {
		return dd{1, 0}
	}
	return p
}

// sfFromCDF is clip(1 - cdf) rounded once, as SciPy evaluates it (in
// longdouble when cdf is one).
func sfFromCDF(cdf dd) float64 { return clip01(ddSubDFromD(1, cdf).round()) }

// matMul sets c = a·b for m×m row-major matrices, accumulating each entry
// in ascending inner index from zero as reference BLAS dgemm (what
// numpy.matmul calls on Debian) does.
func matMul(c, a, b []float64, m int) {
	for i := 0; i < m; i++ {
		ci := c[i*m : i*m+m]
		clear(ci)
		for k := 0; k < m; k++ {
			aik := a[i*m+k]
			if aik == 0 {
				continue
			}
			bk := b[k*m : k*m+m]
			for j := range ci {
				ci[j] += float64(aik * bk[j])
			}
		}
	}
}

// pomeranzJ1J2 ports _pomeranz_compute_j1j2.
func pomeranzJ1J2(i, n, ll, ceilf, roundf int) (int, int) {
	var j1, j2 int
	if i == 0 {
		j1, j2 = -ll-ceilf-1, ll+ceilf-1
	} else {
		ip1div2, ip1mod2 := (i+1)/2, (i+1)%2
		if ip1mod2 == 0 { // i is odd
			if ip1div2 == n+1 {
				j1, j2 = n-ll-ceilf-1, n+ll+ceilf-1
			} else {
				j1, j2 = ip1div2-1-ll-roundf-1, ip1div2+ll-1+ceilf-1
			}
		} else {
			j1, j2 = ip1div2-1-ll-1, ip1div2+ll+roundf-1
		}
	}
	return max(j1+2, 0), min(j2, n)
}

// kolmognPomeranz ports _kolmogn_Pomeranz(n, x, cdf=True): Pr(D_n <= x) by
// Pomeranz's recursion (used for n <= 140 only), clipped to [0, 1].
func kolmognPomeranz(n int, x float64) dd {
	fn := float64(n)
	t := fn * x
	ll := int(math.Floor(t))
	f := 1.0 * (t - float64(ll))
	g := min(f, 1.0-f)
	ceilf, roundf := 0, 0
	if f > 0 {
		ceilf = 1
	}
	if f > 0.5 {
		roundf = 1
	}
	npwrs := 2 * (ll + 1)
	gpower := make([]float64, npwrs)
	twogpower := make([]float64, npwrs)
	onem2gpower := make([]float64, npwrs)
	gpower[0], twogpower[0], onem2gpower[0] = 1, 1, 1
	expnt := 0
	gOverN, twoGOverN, oneMinusTwoGOverN := g/fn, 2*g/fn, (1-2*g)/fn
	for m := 1; m < npwrs; m++ {
		fm := float64(m)
		gpower[m] = float64(gpower[m-1]*gOverN) / fm
		twogpower[m] = float64(twogpower[m-1]*twoGOverN) / fm
		onem2gpower[m] = float64(onem2gpower[m-1]*oneMinusTwoGOverN) / fm
	}
	V0 := make([]float64, npwrs)
	V1 := make([]float64, npwrs)
	V1[0] = 1
	V0s, V1s := 0, 0
	conv := make([]float64, 2*npwrs)

	j1, _ := pomeranzJ1J2(0, n, ll, ceilf, roundf)
	for i := 1; i < 2*n+2; i++ {
		k1 := j1
		V0, V1 = V1, V0
		V0s, V1s = V1s, V0s
		clear(V1)
		var j2 int
		j1, j2 = pomeranzJ1J2(i, n, ll, ceilf, roundf)
		var pwrs []float64
		switch {
		case i == 1 || i == 2*n+1:
			pwrs = gpower
		case i%2 == 1:
			pwrs = twogpower
		default:
			pwrs = onem2gpower
		}
		ln2 := j2 - k1 + 1
		if ln2 > 0 {
			a := pySlice(V0, k1-V0s, k1-V0s+ln2)
			b := pySlice(pwrs, 0, ln2)
			c := convolveFull(conv, a, b)
			convStart := j1 - k1
			convLen := j2 - j1 + 1
			copy(V1[:convLen], pySlice(c, convStart, convStart+convLen))
			mx := V1[0]
			for _, vv := range V1 {
				mx = max(mx, vv)
			}
			if 0 < mx && mx < em128 {
				for q := range V1 {
					V1[q] *= ep128
				}
				expnt -= e128
			}
			V1s = V0s + j1 - k1
		}
	}

	// Multiply by n!. SciPy's value becomes a numpy.longdouble at the first
	// rescaling (if any); double-double stands in for it from there on.
	a := V1[n-V1s]
	m := 1
	for ; m <= n; m++ {
		if math.Abs(a) > ep128 {
			break
		}
		a *= float64(m)
	}
	if m > n {
		if expnt != 0 {
			a = math.Ldexp(a, expnt)
		}
		return dd{clip01(a), 0}
	}
	ans := ddFrom(a)
	for ; m <= n; m++ {
		if math.Abs(ans.hi) > ep128 {
			ans = ans.ldexp(-e128)
			expnt += e128
		}
		ans = ans.mulD(float64(m))
	}
	if expnt != 0 {
		ans = ans.ldexp(expnt)
	}
	return clipDD(ans)
}

// pySlice returns s[lo:hi] with Python's clamping of out-of-range bounds
// (negative bounds count from the end).
func pySlice(s []float64, lo, hi int) []float64 {
	n := len(s)
	if lo < 0 {
		lo = max(lo+n, 0)
	}
	if hi < 0 {
		hi = max(hi+n, 0)
	}
	lo, hi = min(lo, n), min(hi, n)
	if hi < lo {
		return s[lo:lo]
	}
	return s[lo:hi]
}

// convolveFull writes numpy.convolve(a, b) (mode 'full') into buf and
// returns it. NumPy makes the longer operand the first one and evaluates each
// output as a dot product in ascending index of it (reference BLAS ddot and
// NumPy's small-kernel code both add left to right), which is what we do.
func convolveFull(buf, a, b []float64) []float64 {
	if len(a) == 0 || len(b) == 0 {
		return buf[:0]
	}
	if len(b) > len(a) {
		a, b = b, a
	}
	n := len(a) + len(b) - 1
	if cap(buf) < n {
		buf = make([]float64, n)
	}
	out := buf[:n]
	for k := range out {
		s := 0.0
		lo := max(0, k-len(b)+1)
		hi := min(k, len(a)-1)
		for i := lo; i <= hi; i++ {
			s += float64(a[i] * b[k-i])
		}
		out[k] = s
	}
	return out
}

// kolmognPelzGood ports _kolmogn_PelzGood(n, x, cdf=True): the Pelz–Good
// (1976) expansion of Pr(D_n <= x) for large n.
func kolmognPelzGood(n int, x float64) float64 {
	if x <= 0.0 {
		return 0
	}
	if x >= 1.0 {
		return 1
	}
	fn := float64(n)
	z := math.Sqrt(fn) * x
	zsquared, zthree, zfour, zsix := z*z, powiCR(z, 3), powiCR(z, 4), powiCR(z, 6)

	qlog := -piSquared / 8 / zsquared
	if qlog < -708 { // _MIN_LOG
		return 0
	}
	q := libmExp(qlog)

	k1a := -zsquared
	k1b := piSquared / 4

	k2a := float64(6*zsix) + float64(2*zfour)
	k2b := float64((float64(2*zfour)-float64(5*zsquared))*piSquared) / 4
	k2c := float64(piFour*(1-float64(2*zsquared))) / 16

	k3d := float64(piSix*(5-float64(30*zsquared))) / 64
	k3c := float64(piFour*(float64(-60*zsquared)+float64(212*zfour))) / 16
	k3b := float64(piSquared*(float64(135*zfour)-float64(96*zsix))) / 4
	k3a := float64(-30*zsix) - float64(90*powiCR(z, 8))

	var K [4]float64
	maxk := int(math.Ceil(16 * z / math.Pi))
	for k := maxk; k > 0; k-- {
		m := 2*k - 1
		msquared, mfour, msix := float64(m*m), float64(m*m*m*m), float64(m*m*m*m*m*m)
		qpower := powiCR(q, 8*k)
		c0 := 1.0
		c1 := k1a + float64(k1b*msquared)
		c2 := float64(k2a+float64(k2b*msquared)) + float64(k2c*mfour)
		c3 := float64(float64(k3a+float64(k3b*msquared))+float64(k3c*mfour)) + float64(k3d*msix)
		K[0] = float64(K[0]*qpower) + c0
		K[1] = float64(K[1]*qpower) + c1
		K[2] = float64(K[2]*qpower) + c2
		K[3] = float64(K[3]*qpower) + c3
	}
	for i := range K {
		K[i] *= q
		K[i] *= sqrt2Pi
	}
	K[0] /= z
	K[1] /= 6 * zfour
	K[2] /= 72 * powiCR(z, 7)
	K[3] /= 6480 * powiCR(z, 10)

	q = libmExp(-piSquared / 2 / zsquared)
	sqrt3z := sqrt3 * z
	k2extra, k3extra := 0.0, 0.0
	// np.sum over maxk <= 8 terms (pairwise summation degenerates to a
	// left-to-right loop below 8 elements; for exactly 8 it pairs them).
	var t2, t3 [16]float64
	nk := 0
	for k := maxk; k > 0; k-- {
		ksq := float64(k * k)
		kspi := math.Pi * float64(k)
		qp := powiCR(q, k*k)
		t2[nk] = float64(ksq * qp)
		t3[nk] = float64(float64(float64((sqrt3z+kspi)*(sqrt3z-kspi))*ksq) * qp)
		nk++
	}
	k2extra = npSum(t2[:nk])
	k3extra = npSum(t3[:nk])
	k2extra *= float64(piSquared*sqrt2Pi) / float64(-36*zthree)
	K[2] += k2extra
	k3extra *= float64(piSquared*sqrt2Pi) / float64(216*zsix)
	K[3] += k3extra
	// powers_of_n = n ** [0, 0.5, 1, 1.5]
	K[1] /= math.Sqrt(fn)
	K[2] /= fn
	K[3] /= pow15CR(fn)
	return 0 + K[0] + K[1] + K[2] + K[3]
}

// npSum is numpy's float64 sum (pairwise summation with an 8-way unrolled
// base case of up to 128 elements).
func npSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := 0.0
		for _, v := range a {
			res += v
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := 0; j < 8; j++ {
				r[j] += a[i+j]
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return npSum(a[:n2]) + npSum(a[n2:])
	}
}
