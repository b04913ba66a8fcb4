package paje

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// liveHeap returns the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestHeapBound fills a parser up to each of its limits (live containers,
// open states, pending links, held variable samples) and checks the heap
// it keeps is within the per-item costs HeapBound counts.
func TestHeapBound(t *testing.T) {
	const n = 20000
	cases := []struct {
		name  string
		items int // how many of the item the lines create
		per   int // the cost HeapBound counts per item
		lines func(i int) string
	}{
		{"containers", n, bytesPerContainer, func(i int) string {
			// A container with three slots: a state, a variable and a link
			// waiting in it (each counted apart from the container below).
			w := "c" + strconv.Itoa(i)
			return "2 1 " + w + " W p \"worker " + strconv.Itoa(i) + "\"\n4 1 " + w + " S Idle\n10 1 " + w + " V 1\n"
		}},
		{"open states", n, bytesPerOpen, func(i int) string {
			return "5 " + strconv.Itoa(1+i) + " w" + strconv.Itoa(1+i%2) + " S Task" + strconv.Itoa(i%50) + " t\n"
		}},
		{"pending links", n, bytesPerOpen, func(i int) string {
			return "8 " + strconv.Itoa(1+i) + " L p w1 v key_" + strconv.Itoa(i) + "_" + strconv.Itoa(i*7919) + "\n"
		}},
		{"held samples", n, bytesPerBuffered, func(i int) string {
			// Two variables, each sample later than the previous one
			// except every tenth: all held (the horizon is long).
			tm := 1 + i
			if i%10 == 9 {
				tm -= 5
			}
			return "10 " + strconv.Itoa(tm) + " w" + strconv.Itoa(1+i%2) + " V " + strconv.Itoa(i) + "\n"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			o.MaxContainers, o.MaxOpenStates, o.MaxBuffered = 4*n, 4*n, 4*n
			o.ReorderHorizon = 1e9
			var b strings.Builder
			b.WriteString(varHdr)
			for i := range c.items {
				b.WriteString(c.lines(i))
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			before := liveHeap()
			p := NewParser(o)
			for i, l := range lines {
				if err := p.Line([]byte(l), int64(i+1)); err != nil {
					t.Fatal(err)
				}
				if p.Pending() > BatchSize {
					p.Take(nil)
				}
			}
			used := int64(liveHeap()) - int64(before) // the lines are live in both
			s := p.sim
			counted := int64(fixedBytes) + int64(len(s.live))*bytesPerContainer + int64(s.open)*bytesPerOpen + int64(s.buffered)*bytesPerBuffered
			t.Logf("%d items: %d bytes live, %.0f per item (counted: %d per item, %d in all: %d containers, %d open, %d held)",
				c.items, used, float64(used)/float64(c.items), c.per, counted, len(s.live), s.open, s.buffered)
			if used > counted {
				t.Errorf("%d bytes live, more than the %d HeapBound counts", used, counted)
			}
			if c.name == "held samples" && s.buffered < c.items*9/10 {
				t.Errorf("only %d samples held", s.buffered)
			}
			runtime.KeepAlive(p)
			runtime.KeepAlive(lines)
		})
	}
}

// TestHeapBoundGrows: the bound grows with each limit, the threads, the
// chunk size and the longest line, and counts pj_dump's window.
func TestHeapBoundGrows(t *testing.T) {
	base := DefaultOptions()
	base.Threads = 2
	b := base.HeapBound()
	for name, change := range map[string]func(*Options){
		"containers":    func(o *Options) { o.MaxContainers *= 2 },
		"open states":   func(o *Options) { o.MaxOpenStates *= 2 },
		"buffered":      func(o *Options) { o.MaxBuffered *= 2 },
		"types":         func(o *Options) { o.MaxTypes *= 2 },
		"threads":       func(o *Options) { o.Threads = 8 },
		"line":          func(o *Options) { o.MaxLineBytes = 64 << 20 },
		"pjdump quirks": func(o *Options) { o.PjdumpQuirks = true },
	} {
		o := base
		change(&o)
		if o.HeapBound() <= b {
			t.Errorf("%s: %d, not more than %d", name, o.HeapBound(), b)
		}
	}
	var zero Options
	zero.Threads = 2
	if zero.HeapBound() != b {
		t.Errorf("zero options: %d, want the defaults' %d", zero.HeapBound(), b)
	}
}
