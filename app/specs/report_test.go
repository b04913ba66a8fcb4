package specs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/pajetest"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/report"
)

// writeRepeated writes a StarPU-like trace of 4 workers whose states (a
// task, an input fetch nested in some, sleeping between) repeat n times
// one after the other in time, as paje_scale.py repeats a trace's events.
func writeRepeated(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(pajetest.Header(
		pajetest.ContainerType(0), pajetest.StateType(1), pajetest.CreateContainer(2),
		pajetest.SetState(3), pajetest.PushState(4), pajetest.PopState(5),
	) + `0 P 0 Program
0 W P Worker
1 S W "Worker State"
2 0 p P 0 program
`)
	const workers, steps = 4, 4000
	for k := range workers {
		fmt.Fprintf(w, "2 0 w%d W p CPU%d\n", k, k)
	}
	codelets := []string{"GEMM", "TRSM", "SYRK", "POTRF"}
	for r := range n {
		for i := range steps {
			t0 := float64(r*steps+i) * 1.0
			for k := range workers {
				switch (i + k) % 5 {
				case 0, 3:
					fmt.Fprintf(w, "3 %.6f S w%d Sleeping\n", t0, k)
				case 1:
					fmt.Fprintf(w, "3 %.6f S w%d %s\n", t0, k, codelets[(i/5+k)%4])
					fmt.Fprintf(w, "4 %.6f S w%d FetchingInput\n", t0+0.1, k)
					fmt.Fprintf(w, "5 %.6f S w%d\n", t0+0.3, k)
				default:
					fmt.Fprintf(w, "3 %.6f S w%d %s\n", t0+0.05*float64(k), k, codelets[(i+k)%4])
				}
			}
		}
	}
	fmt.Fprintf(w, "3 %.6f S w0 Sleeping\n", float64(n*steps))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// peakHeap runs fn while sampling the heap in use every millisecond, with
// the collector at GOGC=10 so that the heap follows what is live, and
// returns the most seen.
func peakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
		}
	}()
	fn()
	close(stop)
	<-done
	return peak
}

// TestReportMemoryFlat: the report of a trace repeated 16 times takes no
// more heap than the report of the trace repeated 4 times (within 4 MB),
// and draws the same page shape — its memory does not grow with the
// trace's length. (The single-pass collector kept every selected state and
// the whole step function: 3.1 GB on a 2.1 GB trace. Keeping only the
// states, 24 bytes each, fails here: +40 MB.)
func TestReportMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes traces of 20 MB and reports them")
	}
	dir := t.TempDir()
	heap := map[int]uint64{}
	for _, n := range []int{4, 16} {
		path := filepath.Join(dir, fmt.Sprintf("x%d.trace", n))
		writeRepeated(t, path, n)
		var err error
		var rows, points int
		var states string
		heap[n] = peakHeap(func() {
			p, e := r.Page(ctx, Trace{Path: path}, "starpu", nil, ReportPower{})
			if err = e; err == nil {
				rows, points = len(p.Gantt.Rows), len(p.Occ.T)
				for _, it := range p.Summary {
					if it.Name == "their states" {
						states = it.Value
					}
				}
				if !p.Gantt.Aggregated {
					err = fmt.Errorf("the Gantt chart of %d repetitions is not aggregated", n)
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(path)
		t.Logf("%d repetitions (%.1f MB, %s states): peak heap %.1f MB, %d rows, %d occupancy points", n, float64(st.Size())/1e6, states, float64(heap[n])/1e6, rows, points)
		if rows != 4 || points != 3000 || states == "" {
			t.Errorf("%d rows, %d points, %q states", rows, points, states)
		}
	}
	if grow := float64(heap[16]) - float64(heap[4]); grow > 4e6 {
		t.Errorf("the peak heap grew by %.1f MB from 4 to 16 repetitions: the report's memory grows with the trace", grow/1e6)
	}
}

// TestReportNeedsAFile: the report reads its trace twice: standard input
// is refused, saying so.
func TestReportNeedsAFile(t *testing.T) {
	_, err := r.Page(ctx, Trace{Path: "-"}, "auto", nil, ReportPower{})
	var oe *OptionError
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), "give a file, not standard input") {
		t.Errorf("report of standard input: %v", err)
	}
}

// TestPageSpellsAsync: the report command runs the spell overlay's
// forecaster on a goroutine of its own (pageSink); its page is the page of
// the collector run alone, which does that work within WriteStates.
func TestPageSpellsAsync(t *testing.T) {
	for _, path := range []string{"../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "../../testdata/smpi/jacobi-8.trace.gz"} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			async, err := r.Page(ctx, Trace{Path: path}, "auto", nil, ReportPower{})
			if err != nil {
				t.Fatal(err)
			}
			survey, err := report.NewPageSurvey("auto")
			if err != nil {
				t.Fatal(err)
			}
			first := pipelines.Spec{Name: "survey", Sources: []pipelines.Node{Trace{Path: path}.Source()}, Sinks: []pipelines.Node{collect("survey", "trace")}}
			if err := r.Run(ctx, first, map[string]tracecast.Sink{"survey": survey}); err != nil {
				t.Fatal(err)
			}
			c, err := survey.Collector(report.PageOptions{Title: path})
			if err != nil {
				t.Fatal(err)
			}
			second := pipelines.Spec{Name: "page", Sources: []pipelines.Node{Trace{Path: path}.Source()}, Sinks: []pipelines.Node{collect("page", "trace")}}
			if err := r.Run(ctx, second, map[string]tracecast.Sink{"page": c}); err != nil {
				t.Fatal(err)
			}
			alone, err := c.Page()
			if err != nil {
				t.Fatal(err)
			}
			var a, b bytes.Buffer
			if err := async.WriteHTML(&a); err != nil {
				t.Fatal(err)
			}
			if err := alone.WriteHTML(&b); err != nil {
				t.Fatal(err)
			}
			if n := len(async.Spells.Ticks); n == 0 || !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("the page with the forecaster on its own goroutine (%d bytes, %d rows of spells) is not the page of the collector alone (%d bytes)", a.Len(), n, b.Len())
			}
		})
	}
}
