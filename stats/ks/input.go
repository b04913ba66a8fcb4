package ks

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/input"
)

// ReadSample reads a sample of the ks command: one non-negative integer per
// line, blank lines and # comments skipped. A bad line is an error naming
// it (name:line); an input without samples is an error too.
func ReadSample(r io.Reader, name string) ([]int, error) {
	var xs []int
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s:%d: want a non-negative integer, got %q", name, line, s)
		}
		xs = append(xs, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("%s: no samples", name)
	}
	return xs, nil
}

// TestSamples tests two samples of non-negative integers: Test on their
// histograms over the ranks of their distinct values. The test depends only
// on the order of the values (D, and R's ties), so ranks give the same
// result as the values themselves, and a histogram costs O(distinct values)
// however large they are (over 0..the largest value, one sample of 10^12
// needed 8 TB).
func TestSamples(a, b []int, m Method, alpha float64) Result {
	vals := slices.Concat(a, b)
	slices.Sort(vals)
	vals = slices.Compact(vals)
	hist := func(xs []int) *Hist {
		h := NewHist(max(len(vals)-1, 0))
		for _, x := range xs {
			i, _ := slices.BinarySearch(vals, x)
			h.Add(i)
		}
		return h
	}
	return Test(hist(a), hist(b), m, alpha)
}

// Record is the result as a tracecast.kstest/1 record (the ks command's
// output).
func (r Result) Record(alpha float64) tracecast.KSTest {
	return tracecast.KSTest{N1: r.N1, N2: r.N2, D: r.D, DNum: r.DNum, DDen: r.DDen, P: r.P, Alpha: alpha,
		Reject: r.Reject, Hit: !r.Reject, Method: string(r.Method), Exact: r.Exact}
}

// WriteJSON writes the result as one JSON line, its tracecast.kstest/1
// record: "record" first, a NaN p as null, strings not HTML-escaped.
func (r Result) WriteJSON(w io.Writer, alpha float64) error {
	_, err := w.Write(append(r.Record(alpha).AppendJSON(nil), '\n'))
	return err
}

// MaxWindows bounds the number of window sizes ParseWindows gives: a sweep
// keeps a few counters per size, and a trace of ten million samples has at
// most a few thousand sizes worth comparing.
const MaxWindows = 10_000

// ParseWindows reads window sizes in samples: a list ("1000,2000,5000") or
// a range FROM:TO:STEP ("1000:50000:1000"), positive integers, at most
// MaxWindows sizes. Errors name the flag --windows.
func ParseWindows(s string) ([]int, error) {
	if p := strings.Split(s, ":"); len(p) == 3 {
		from, e1 := strconv.Atoi(p[0])
		to, e2 := strconv.Atoi(p[1])
		step, e3 := strconv.Atoi(p[2])
		if e1 != nil || e2 != nil || e3 != nil || from <= 0 || step <= 0 || to < from {
			return nil, fmt.Errorf("--windows %q: want FROM:TO:STEP with positive integers", s)
		}
		// Counted before any is made: (to-from)/step cannot overflow
		// (0 <= to-from < MaxInt), w += step could.
		n := (to-from)/step + 1
		if n > MaxWindows {
			return nil, fmt.Errorf("--windows %q: %d window sizes, more than the %d allowed: raise STEP or narrow FROM:TO", s, n, MaxWindows)
		}
		ws := make([]int, n)
		for i := range ws {
			ws[i] = from + i*step
		}
		return ws, nil
	}
	var ws []int
	for _, f := range strings.Split(s, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w <= 0 {
			return nil, fmt.Errorf("--windows %q: %q is not a positive window size", s, f)
		}
		if len(ws) == MaxWindows {
			return nil, fmt.Errorf("--windows: more than the %d window sizes allowed", MaxWindows)
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// ReadSampleFile reads a sample (ReadSample) from a file, plain or gzip
// ("-": standard input).
func ReadSampleFile(path string) ([]int, error) {
	r, name, closeIn, err := input.Open(path)
	if err != nil {
		return nil, err
	}
	defer closeIn()
	return ReadSample(r, name)
}
