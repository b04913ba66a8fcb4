package ks

import "math"

// matlabP is MATLAB kstest2's two-sided asymptotic p-value, the method the
// paper used:
//
//	n_e = n1·n2/(n1+n2),  λ = max((√n_e + 0.12 + 0.11/√n_e)·D, 0),
//	p = 2 Σ_{j=1}^{101} (−1)^(j−1) e^(−2λ²j²), clipped to [0, 1].
//
// The reference column p_matlab_style_asymp was computed in Python with a
// fixed 101-term series summed by numpy.sum (pairwise summation) over
// libm exp values; this reproduces that evaluation order, and skips the terms
// whose exponential underflows to zero (adding a zero term changes nothing).
// O(1): at most 101, typically 10–40, exponentials; no allocation.
func matlabP(n1, n2 int, num int64) float64 {
	d := float64(num) / float64(int64(n1)*int64(n2))
	en := float64(int64(n1)*int64(n2)) / float64(n1+n2)
	se := math.Sqrt(en)
	lam := float64((se+0.12)+0.11/se) * d
	if lam < 0 {
		lam = 0
	}
	a := float64(-2*lam) * lam // -2*lam*lam, evaluated left to right
	var t [101]float64
	for j := 1; j <= 101; j++ {
		e := float64(a * float64(j*j))
		if e < -746 {
			break // exp underflows to 0 here and for all larger j
		}
		v := libmExp(e)
		if j%2 == 0 {
			v = -v
		}
		t[j-1] = v
	}
	p := 2 * npSum(t[:])
	return clip01(p)
}
