package features

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMergeRunsIsASort: merging the runs gives what sorting the whole
// gives, whatever the runs (sorted or not, empty, one), and eventLess is
// byEvent.
func TestMergeRunsIsASort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := rng.IntN(60)
		s := make([]event, n)
		for i := range s {
			// Ties in time and arrival: the kind decides.
			s[i] = event{t: float64(rng.IntN(10)), seq: uint64(rng.IntN(4)), kind: eventKind(i % 4), x: float64(i)}
		}
		var starts []int
		for i := 0; i < n; i += 1 + rng.IntN(12) {
			if trial%3 == 0 { // runs in order, as the feed makes them
				slices.SortFunc(s[i:min(i+12, n)], byEvent)
			}
			starts = append(starts, i+7) // an offset, as Sweep passes one
		}
		want := slices.SortedStableFunc(slices.Values(s), byEvent)
		got := mergeRuns(s, starts, 7, nil)
		if got == nil {
			got = s
		}
		for i := range got {
			if byEvent(got[i], want[i]) != 0 {
				t.Fatalf("trial %d: %v, want %v (runs at %v)", trial, got, want, starts)
			}
		}
		for i := range s {
			for j := range s {
				if eventLess(&s[i], &s[j]) != (byEvent(s[i], s[j]) < 0) {
					t.Fatalf("eventLess(%v, %v) is not byEvent", s[i], s[j])
				}
			}
		}
	}
}

// TestSortNearly: sortNearly sorts, nearly sorted input or not (past its
// budget it hands over to slices.SortFunc).
func TestSortNearly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := rng.IntN(200)
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		swaps := []int{0, 1, 5, n * n}[trial%4] // from in order to shuffled
		for range swaps {
			if n > 1 {
				i := rng.IntN(n - 1)
				s[i], s[i+1] = s[i+1], s[i]
			}
		}
		if trial%4 == 3 {
			rng.Shuffle(n, func(i, j int) { s[i], s[j] = s[j], s[i] })
		}
		sortNearly(s, func(a, b int) int { return a - b })
		if !slices.IsSorted(s) {
			t.Fatalf("trial %d: %v", trial, s)
		}
	}
}
