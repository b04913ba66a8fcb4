package features

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMergeRunsIsASort: merging the runs gives what sorting the whole
// gives, whatever the runs (sorted or not, empty, one).
func TestMergeRunsIsASort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := rng.IntN(60)
		s := make([]int, n)
		for i := range s {
			s[i] = rng.IntN(40)*100 + i // distinct: a total order
		}
		var starts []int
		for i := 0; i < n; i += 1 + rng.IntN(12) {
			if trial%3 == 0 { // runs in order, as the feed makes them
				slices.Sort(s[i:min(i+12, n)])
			}
			starts = append(starts, i+7) // an offset, as Sweep passes one
		}
		want := slices.Sorted(slices.Values(s))
		got := mergeRuns(s, starts, 7, nil, cmp.Compare[int])
		if got == nil {
			got = s
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: %v, want %v (runs at %v)", trial, got, want, starts)
		}
	}
}
