// Package ks implements the two-sample Kolmogorov–Smirnov test that decides,
// in tracecast's benchmarking and prediction phases, whether two consecutive
// windows of an occurrence signal (the number of workers that are idle,
// computing, communicating, ... at each sample) have the same distribution:
// a "hit" when H0 is not rejected at α = 0.05, a "miss" otherwise (seed paper
// 004, section III).
//
// Occurrence signals are integers in 0..R, with R the number of workers (at
// most a few hundred), while windows hold up to 50000 samples and are
// compared millions of times. So an empirical distribution is a histogram
// (Hist): adding or removing a sample is O(1), the statistic D is computed
// exactly from integer cumulative counts in O(R) (D), and Sweep evaluates
// every candidate window size in a single pass over a signal.
//
// The p-value can be computed three ways (Method), each reproducing a
// reference tool on integer data with ties:
//
//   - Matlab: MATLAB kstest2's asymptotic formula with Stephens' correction,
//     what the paper used;
//   - SciPy: scipy.stats.ks_2samp(method='auto') of SciPy 1.10.1 — exact
//     lattice-path count (ignoring ties) up to 10000 samples per window,
//     else kstwo.sf at the rounded effective size;
//   - R: ks.test of R 4.2.2 — exact conditional on ties when n1·n2 < 10000,
//     else the Kolmogorov limit.
//
// The three agree on D but not on p, and on heavily tied small samples their
// decisions differ; record the method with every result. The implementations
// port the tools' own algorithms and floating-point evaluation order (and
// glibc's exp), so p-values match the reference tables in
// shared/ks-reference and testdata/more_refs.csv bit for bit for SciPy and
// MATLAB, and to the last few ulps for R (which evaluates at its own
// floating-point D). testdata/make_refs.py regenerates the golden files.
package ks
