package ks

import (
	"fmt"
	"math"
	"strings"
)

// Method selects how the p-value of the two-sample test is computed. The
// three methods agree on D but differ on the p-value, and near α they can
// disagree on the decision (for integer data with heavy ties R's exact p is
// much smaller than SciPy's at small n), so every output should record which
// one was used.
type Method string

const (
	// Matlab is MATLAB kstest2's asymptotic formula with Stephens'
	// correction, what the paper used. O(1) for every sample size.
	Matlab Method = "matlab"
	// SciPy is scipy.stats.ks_2samp(method='auto') from SciPy 1.10.1: exact
	// (ignoring ties) when max(n1, n2) <= 10000, else kstwo.sf(D, round(n_e)).
	SciPy Method = "scipy"
	// R is ks.test's default in R 4.2.2: exact conditional on ties when
	// n1·n2 < 10000, else the Kolmogorov limit 1 − K(√n_e·D).
	R Method = "r"
)

// DefaultAlpha is the significance level of the paper: a comparison is a
// "hit" when H0 (same distribution) is not rejected at 5%.
const DefaultAlpha = 0.05

// CheckAlpha refuses a significance level outside (0, 1): at 0 nothing is
// ever rejected (p < 0), at 1 or more everything is, and NaN compares
// false with every p. Front ends (flags, pipeline options) check with it
// and name their option; Test itself falls back to DefaultAlpha.
func CheckAlpha(alpha float64) error {
	if !(alpha > 0 && alpha < 1) {
		return fmt.Errorf("%g: a significance level must be in (0, 1), e.g. 0.05", alpha)
	}
	return nil
}

// ParseFlags checks the --method and --alpha of the commands that run KS
// tests: the method, or an error naming the flag at fault.
func ParseFlags(method string, alpha float64) (Method, error) {
	m, err := ParseMethod(method)
	if err != nil {
		return "", err
	}
	if err := CheckAlpha(alpha); err != nil {
		return "", fmt.Errorf("--alpha %w", err)
	}
	return m, nil
}

// Methods lists the supported methods.
var Methods = []Method{Matlab, SciPy, R}

// ParseMethod maps a name (case-insensitive, surrounding space ignored) to a
// Method, so configuration files and flags can name it.
func ParseMethod(s string) (Method, error) {
	switch m := Method(strings.ToLower(strings.TrimSpace(s))); m {
	case Matlab, SciPy, R:
		return m, nil
	}
	return "", fmt.Errorf("ks: unknown p-value method %q (want %q, %q or %q)", s, Matlab, SciPy, R)
}

// valid reports whether m is one of the defined methods (exact spelling).
func (m Method) valid() bool { return m == Matlab || m == SciPy || m == R }

// String returns the method name.
func (m Method) String() string { return string(m) }

// Result is the outcome of one two-sample test.
type Result struct {
	N1, N2 int
	// DNum/DDen is the exact statistic (DDen = N1·N2); D is the same as a
	// float64.
	DNum, DDen int64
	D          float64
	// P is the two-sided p-value (NaN if a sample is empty).
	P float64
	// Reject is P < alpha, as SciPy users and R's print test it, and
	// P ≤ alpha with Matlab, as kstest2 decides (H = alpha >= p): an exact
	// p-value can land on alpha. A "hit" in the paper's terms is !Reject.
	Reject bool
	Method Method
	// Exact reports that P came from an exact (permutation) distribution
	// rather than an asymptotic one: SciPy's exact branch (and it did not
	// fall back), or R's exact branch.
	Exact bool
}

// Hit reports whether H0 was not rejected.
func (r Result) Hit() bool { return !r.Reject }

// Test runs the two-sided two-sample Kolmogorov–Smirnov test of a against b
// with the given p-value method and significance level. An alpha outside
// (0, 1] (including 0 or NaN) selects DefaultAlpha. If either sample is
// empty the p-value is NaN and Reject is false. Test panics on an unknown
// Method (use ParseMethod to validate names).
//
// With R, a plays the part of ks.test's x and b of y; R's exact branch is
// symmetric only up to rounding (about 1e-14), and so is this port.
//
// Cost: D is O(R). Matlab and R's asymptotic branch are O(1) (tens to a few
// hundred nanoseconds) and allocation-free. SciPy's asymptotic branch (more
// than 10000 samples in a window) follows SciPy: O(1) Pelz–Good for p above
// about 0.025 and p = 0; but for 0 < p < ~0.025 it sums Cephes smirnov's
// series, O(n) terms — milliseconds for n ≈ 10^4 (Sweep avoids this with a
// bound); for p within ~1e-4 of 1 it uses the Durbin matrix (O(m³ log n),
// m ≈ 2n^(1/3), allocates). The exact branches allocate: R's is O(n1·n2) <
// 10^4 steps; SciPy's is O(n) for equal sizes and O(max(n1,n2)·band) up to
// 10^8 steps for unequal sizes near the 10000 limit.
func Test(a, b *Hist, m Method, alpha float64) Result {
	if !(alpha > 0 && alpha <= 1) {
		alpha = DefaultAlpha
	}
	num, den := D(a, b)
	r := Result{N1: a.N(), N2: b.N(), DNum: num, DDen: den, Method: m}
	if den == 0 {
		if !m.valid() {
			panic(fmt.Sprintf("ks: Test: unknown method %q", string(m)))
		}
		r.P = math.NaN()
		return r
	}
	r.D = float64(num) / float64(den)
	switch m {
	case Matlab:
		r.P = matlabP(r.N1, r.N2, num)
	case SciPy:
		r.P, r.Exact = sciPyP(a, b, num)
	case R:
		if int64(r.N1)*int64(r.N2) < rExactMaxProduct {
			r.P, r.Exact = rExactP(a, b, num), true
		} else {
			r.P = rAsympP(r.N1, r.N2, num)
		}
	default:
		panic(fmt.Sprintf("ks: Test: unknown method %q", string(m)))
	}
	r.Reject = r.P < alpha || m == Matlab && r.P == alpha
	return r
}
