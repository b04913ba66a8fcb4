package font_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
)

// TestAddLazy: a collection added by AddLazy is parsed on the cache's first
// use, once, however many goroutines use it at once, and then found as if
// added by Add.
func TestAddLazy(t *testing.T) {
	var calls atomic.Int32
	c := font.NewCache(nil)
	c.AddLazy(func() font.Collection { calls.Add(1); return liberation.Collection() })
	if calls.Load() != 0 {
		t.Fatal("AddLazy parsed the collection at once")
	}
	eager := font.NewCache(liberation.Collection())
	want := eager.Lookup(font.Font{Typeface: "Liberation", Variant: "Serif"}, 12)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := c.Lookup(font.Font{Typeface: "Liberation", Variant: "Serif"}, 12)
			if got.Face == nil || got.Font != want.Font || got.Name() != want.Name() {
				t.Errorf("lazy lookup %+v %q, want %+v %q", got.Font, got.Name(), want.Font, want.Name())
			}
			if !c.Has(font.Font{Typeface: "Liberation", Variant: "Sans"}) {
				t.Error("Liberation Sans missing")
			}
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("the collection was parsed %d times", n)
	}
}
