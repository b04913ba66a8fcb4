package runsort

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

type item struct {
	t   int
	seq int
}

func byT(a, b item) int { return cmp.Compare(a.t, b.t) }

// TestStableIsSortStable: on runs of every count and length, with ties
// within and across runs, Stable gives slices.SortStableFunc's order.
func TestStableIsSortStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var buf []item
	for trial := range 2000 {
		runs, n := 1+rng.IntN(20), rng.IntN(300)
		if trial%7 == 0 {
			runs = 1 + rng.IntN(n+1) // many short runs
		}
		s := make([]item, 0, n)
		for r := range runs {
			m := n / runs
			if r == runs-1 {
				m = n - len(s)
			}
			v := rng.IntN(10)
			for range m {
				v += rng.IntN(3) // ties
				s = append(s, item{v, len(s)})
			}
		}
		want := slices.Clone(s)
		slices.SortStableFunc(want, byT)
		buf = Stable(s, byT, buf)
		if !slices.Equal(s, want) {
			t.Fatalf("trial %d (%d runs, %d items): %v, want %v", trial, runs, n, s, want)
		}
	}
}

func BenchmarkStable(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, per = 12, 400
	src := make([]item, 0, rows*per)
	for range rows {
		v := 0
		for range per {
			v += rng.IntN(5)
			src = append(src, item{v, len(src)})
		}
	}
	s := make([]item, len(src))
	var buf []item
	b.Run("runsort", func(b *testing.B) {
		for range b.N {
			copy(s, src)
			buf = Stable(s, byT, buf)
		}
	})
	b.Run("slices", func(b *testing.B) {
		for range b.N {
			copy(s, src)
			slices.SortStableFunc(s, byT)
		}
	})
}
