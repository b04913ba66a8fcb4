package closedloop

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	bf "github.com/tracecast/tracecast/backfill"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/study"
)

// memTraces keeps every run's trace in memory.
type memTraces map[string]*bytes.Buffer

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

func (m memTraces) open(name string) (io.WriteCloser, error) {
	b := &bytes.Buffer{}
	m[name] = b
	return nopCloser{b}, nil
}

// tiny is a small workload with idle time: 120 tasks of 10 ms on 4
// workers, a level as wide as the workers on average.
func tiny() Config {
	c := DefaultConfig()
	c.SynthConfig.Tasks, c.SynthConfig.Workers, c.SynthConfig.Levels, c.SynthConfig.Seed = 120, 4, 30, 3
	return c
}

// span is what a trace says of a run: per worker, its codelet (primary
// task) and Backfill intervals, in ms.
type span struct{ start, end float64 }

type traceFacts struct {
	primary, backfill map[string][]span
}

func readTrace(t *testing.T, name string, b []byte) traceFacts {
	t.Helper()
	f := traceFacts{primary: map[string][]span{}, backfill: map[string][]span{}}
	opts := paje.DefaultOptions()
	opts.Name = name
	_, err := paje.Read(bytes.NewReader(b), opts, func(batch []tracecast.Entity) error {
		for _, e := range batch {
			if e.Nature != tracecast.NatureState {
				continue
			}
			switch e.Value {
			case "Backfill":
				f.backfill[e.Container] = append(f.backfill[e.Container], span{e.Start, e.End})
			case "dag_task":
				f.primary[e.Container] = append(f.primary[e.Container], span{e.Start, e.End})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

// makespan is the first primary start to the last primary end (ms).
func (f traceFacts) makespan() float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, ss := range f.primary {
		for _, s := range ss {
			lo, hi = math.Min(lo, s.start), math.Max(hi, s.end)
		}
	}
	return hi - lo
}

// TestClosedLoopInvariants runs every causal policy on a tiny DAG, keeping
// the traces, and checks what the table says against the traces: the
// never run is synth's own run (same trace, byte for byte, and makespan);
// no back-end task overlaps a primary task on its worker; the trace's
// Backfill states are the launches, each of length d; the slowdown and the
// throughput computed from the traces are the table's.
func TestClosedLoopInvariants(t *testing.T) {
	c := tiny()
	c.Timeouts = []string{"0", "1ms", "10ms"}
	traces := memTraces{}
	res, err := Run(c, traces.open)
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	sc := c.SynthConfig
	meta, err := sc.Synthesize(&plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(traces["s3-base"].Bytes(), plain.Bytes()) {
		t.Fatal("the run without back-end tasks is not tracecast synth's trace")
	}
	base := readTrace(t, "base", plain.Bytes())
	t0 := base.makespan() / 1e3
	if len(res.Rows) != 2*(len(Causal)+2) {
		t.Fatalf("%d rows, want %d", len(res.Rows), 2*(len(Causal)+2))
	}
	launched := 0
	for _, r := range res.Rows {
		name := "s3-" + r.Policy
		if r.Timeout != nil {
			name += "-t" + label(*r.Timeout)
		}
		name += "-" + label(r.D)
		t.Run(strings.TrimPrefix(name, "s3-"), func(t *testing.T) {
			if math.Abs(r.BaseMakespan-meta.Summary.MakespanMS/1e3) > 1e-12 || math.Abs(r.BaseMakespan-t0) > 1e-9 {
				t.Errorf("base makespan %v; synth's %v ms; its trace's %v s", r.BaseMakespan, meta.Summary.MakespanMS, t0)
			}
			if r.Policy == bf.Never {
				if r.Makespan != r.BaseMakespan || r.Launches != 0 || r.Slowdown != 0 {
					t.Errorf("never: %+v", r)
				}
				return
			}
			b, ok := traces[name]
			if !ok {
				t.Fatalf("no trace %s", name)
			}
			f := readTrace(t, name, b.Bytes())
			n, work := 0, 0.0
			for w, bs := range f.backfill {
				for _, s := range bs {
					n++
					work += s.end - s.start
					if math.Abs(s.end-s.start-r.D*1e3) > 1e-6 {
						t.Errorf("%s: a back-end task of %v ms, d is %v ms", w, s.end-s.start, r.D*1e3)
					}
					for _, p := range f.primary[w] {
						if p.start < s.end-1e-6 && s.start < p.end-1e-6 {
							t.Fatalf("%s: back-end task %v overlaps primary task %v", w, s, p)
						}
					}
				}
			}
			launched += n
			if n != r.Launches || math.Abs(work/1e3-r.Harvest) > 1e-9*math.Max(1, r.Harvest) {
				t.Errorf("the trace has %d back-end tasks, %v s; the table %d, %v s", n, work/1e3, r.Launches, r.Harvest)
			}
			tm := f.makespan() / 1e3
			if slow := (tm - t0) / t0; math.Abs(slow-r.Slowdown) > 1e-9 {
				t.Errorf("slowdown from the traces %v, the table's %v", slow, r.Slowdown)
			}
			if thr := work / 1e3 / tm; math.Abs(thr-r.Throughput) > 1e-9*math.Max(1, thr) {
				t.Errorf("throughput from the trace %v, the table's %v", thr, r.Throughput)
			}
			if r.Waited > 0 && !(r.DelayMean != 0 || r.DelayP99 != 0) {
				t.Errorf("%d tasks waited, no delay", r.Waited)
			}
		})
	}
	if launched == 0 {
		t.Fatal("no policy launched anything: the test checks nothing")
	}
	// Greedy and timeout 0 are one policy.
	var g, t0r []Row
	for _, r := range res.Rows {
		switch {
		case r.Policy == bf.Greedy:
			g = append(g, r)
		case r.Policy == bf.Timeout && *r.Timeout == 0:
			t0r = append(t0r, r)
		}
	}
	for i := range g {
		if g[i].Launches != t0r[i].Launches || g[i].Makespan != t0r[i].Makespan {
			t.Errorf("greedy %+v and timeout 0 %+v differ", g[i], t0r[i])
		}
	}
}

// TestClosedLoopDeterministic: the same options give the same rows, and the
// means over one seed are its rows.
func TestClosedLoopDeterministic(t *testing.T) {
	c := tiny()
	c.Tasks, c.Policies = []string{"2ms"}, []string{bf.Greedy, bf.Forecast}
	a, err := Run(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(a.Rows, b.Rows, func(x, y Row) bool {
		return x.Launches == y.Launches && x.Makespan == y.Makespan && x.DelayP99 == y.DelayP99
	}) {
		t.Fatal("two runs of the same options differ")
	}
	for i := range a.Rows {
		if a.Rows[i].Launches != a.Means[i].Launches || a.Rows[i].Slowdown != a.Means[i].Slowdown {
			t.Fatalf("the mean of one seed is not its run: %+v %+v", a.Rows[i], a.Means[i])
		}
	}
}

// TestMeans by hand: two seeds, one policy.
func TestMeans(t *testing.T) {
	rows := []Row{
		{Policy: "greedy", Seed: 1, Launches: 3, Harvest: 3, Slowdown: 0.1, Throughput: 1, DelayP99: 0.002},
		{Policy: "greedy", Seed: 2, Launches: 5, Harvest: 5, Slowdown: 0.3, Throughput: 2, DelayP99: 0.004},
	}
	m := means(rows, 2)
	if len(m) != 1 || m[0].Seeds != 2 || m[0].Seed != 1 || m[0].Launches != 4 || m[0].Harvest != 4 || math.Abs(m[0].Slowdown-0.2) > 1e-15 ||
		m[0].Throughput != 1.5 || math.Abs(m[0].DelayP99-0.003) > 1e-15 {
		t.Fatalf("%+v", m)
	}
}

// TestFrontier: the acceptance rule, by hand.
func TestFrontier(t *testing.T) {
	tau := func(v float64) *float64 { return &v }
	f := Row{Policy: bf.Forecast, D: 0.01, Harvest: 2, Slowdown: 0.05}
	for _, c := range []struct {
		name    string
		timeout Row
		ok      bool
	}{
		{"harvests less at a lower slowdown", Row{Harvest: 1.9, Slowdown: 0.01}, true},
		{"harvests more at a higher slowdown", Row{Harvest: 3, Slowdown: 0.06}, true},
		{"harvests as much at the same slowdown", Row{Harvest: 2, Slowdown: 0.05}, false},
		{"harvests more at a lower slowdown", Row{Harvest: 2.1, Slowdown: 0.04}, false},
	} {
		tr := c.timeout
		tr.Policy, tr.D, tr.Timeout = bf.Timeout, 0.01, tau(0.001)
		ok, br := Frontier([]Row{f, tr, {Policy: bf.Timeout, D: 0.01, Timeout: tau(1), Harvest: 0, Slowdown: 0}}, 0.01)
		if ok != c.ok || ok == (len(br) > 0) {
			t.Errorf("%s: %v %v", c.name, ok, br)
		}
		if v := Verdict([]Row{f, tr}, 0.01); strings.HasSuffix(v, "yes") != c.ok {
			t.Errorf("%s: %s", c.name, v)
		}
	}
	if ok, _ := Frontier([]Row{f}, 0.01); ok {
		t.Error("no timeout: the rule cannot hold")
	}
}

// TestDelays: p99 by nearest rank, and the mean, in seconds.
func TestDelays(t *testing.T) {
	without := make([]float64, 200)
	with := make([]float64, 200)
	for i := range with {
		with[i] = float64(i) // task i is i ms late
	}
	p99, mean := delays(with, without)
	if p99 != 0.197 || math.Abs(mean-0.0995) > 1e-12 {
		t.Fatalf("p99 %v mean %v", p99, mean)
	}
}

// TestBadOptions: every bad option is a usage error naming its flag, before
// anything runs.
func TestBadOptions(t *testing.T) {
	for _, c := range []struct {
		set  func(*Config)
		flag string
	}{
		{func(c *Config) { c.Tasks = []string{"0ms"} }, "--task"},
		{func(c *Config) { c.Tasks = []string{"ten"} }, "--task"},
		{func(c *Config) { c.Tasks = nil }, "--task"},
		{func(c *Config) { c.Timeouts = []string{"-1ms"} }, "--timeout"},
		{func(c *Config) { c.Alpha = 0 }, "--alpha"},
		{func(c *Config) { c.Policies = []string{"oracle"} }, "--policy"},
		{func(c *Config) { c.Seeds = 0 }, "--seeds"},
		{func(c *Config) { c.MaxLaunches = 0 }, "--max-launches"},
		{func(c *Config) { c.SynthConfig.Tasks = 1 }, "--tasks"},
		{func(c *Config) { c.SynthConfig.Workers = 0 }, "--workers"},
	} {
		cfg := tiny()
		c.set(&cfg)
		_, err := Run(cfg, func(string) (io.WriteCloser, error) {
			t.Fatal("a run started")
			return nil, nil
		})
		var ue *study.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%s: %v", c.flag, err)
		}
	}
}

// TestMaxLaunches: a run that would launch more back-end tasks than the
// limit stops with an error naming it.
func TestMaxLaunches(t *testing.T) {
	c := tiny()
	c.Tasks, c.Policies, c.MaxLaunches = []string{"100us"}, []string{bf.Greedy}, 50
	_, err := Run(c, nil)
	if err == nil || !strings.Contains(err.Error(), "--max-launches") {
		t.Fatalf("%v", err)
	}
}

// TestWriteFiles: the files -o DIR gets, and the traces tracecast states
// reads (gzip).
func TestWriteFiles(t *testing.T) {
	c := tiny()
	c.Tasks, c.Policies = []string{"1ms"}, []string{bf.Never, bf.Greedy, bf.Forecast}
	dir := t.TempDir()
	res, err := Run(c, TraceFiles(filepath.Join(dir, "traces")))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	jl, err := os.ReadFile(filepath.Join(dir, "closedloop.jsonl"))
	if err != nil || bytes.Count(jl, []byte("\n")) != 6 || !bytes.Contains(jl, []byte(`{"record":"mean","policy":"forecast"`)) {
		t.Fatalf("%v\n%s", err, jl)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "frontier.svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Fatalf("%v", err)
	}
	gz, err := os.Open(filepath.Join(dir, "traces", "s3-greedy-1ms.trace.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if f := readTrace(t, "greedy", b); len(f.backfill) == 0 {
		t.Fatal("greedy's trace has no Backfill state")
	}
	var out bytes.Buffer
	if err := WriteTable(&out, res); err != nil || !strings.Contains(out.String(), "forecast") {
		t.Fatalf("%v\n%s", err, out.String())
	}
}
