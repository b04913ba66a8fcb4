package energy

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/parsers/power"
	"github.com/tracecast/tracecast/stages/signal"
)

var update = flag.Bool("update", false, "rewrite testdata/power fixtures")

const (
	demoTrace  = "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"
	fixtureDir = "../../testdata/power"
)

// Ground truth: Yang et al.'s (2014) Taurus node (Table 1) with two workers: idle
// 91.6 W, each computing worker adds 16.8 W (both computing: 125.2 W, the
// table's P_app), each communicating worker adds 18.05 W.
var truth = models.StatePowers{Idle: 91.6, App: 91.6 + 16.8, Net: 91.6 + 18.05, Storage: 91.6}

// kwollectEpoch is where the Kwollect fixture puts trace time 0.
var kwollectEpoch = time.Date(2025, 7, 21, 16, 15, 30, 0, time.UTC)

func demoTimelines(t testing.TB, mapping map[string]string) map[string]*Timeline {
	t.Helper()
	f, err := os.Open(demoTrace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules := signal.StarPU()
	if err := rules.Compile(); err != nil {
		t.Fatal(err)
	}
	c := NewCollector(rules, mapping, "")
	if _, err := paje.Read(f, paje.DefaultOptions(), func(es []tracecast.Entity) error { c.Add(es); return nil }); err != nil {
		t.Fatal(err)
	}
	tls, err := c.Build(1000)
	if err != nil {
		t.Fatal(err)
	}
	return tls
}

// powerAt is the ground-truth power at class counts cnt.
func powerAt(p models.StatePowers, cnt [NumClasses]int32) float64 {
	return p.Idle + (p.App-p.Idle)*float64(cnt[signal.Compute]) + (p.Net-p.Idle)*float64(cnt[signal.Comm]) +
		(p.Storage-p.Idle)*float64(cnt[signal.Other])
}

// exact integrates the ground truth over [a, b]: total and
// occupancy-proportional class energies, and occupancy.
func exact(tl *Timeline, pw func([NumClasses]int32) float64, a, b float64) (e float64, ce, occ [NumClasses]float64) {
	a, b = math.Max(a, tl.T0), math.Min(b, tl.End)
	for i, s := range tl.Steps {
		end := tl.End
		if i+1 < len(tl.Steps) {
			end = tl.Steps[i+1].T
		}
		lo, hi := math.Max(a, s.T), math.Min(b, end)
		if hi <= lo {
			continue
		}
		de := pw(s.Count) * (hi - lo)
		e += de
		for c := range NumClasses {
			ce[c] += de * float64(s.Count[c]) / float64(tl.R)
			occ[c] += float64(s.Count[c]) * (hi - lo)
		}
	}
	return
}

func countsAt(tl *Timeline, t float64) [NumClasses]int32 {
	i := 0
	for i+1 < len(tl.Steps) && tl.Steps[i+1].T <= t {
		i++
	}
	return tl.Steps[i].Count
}

func gz(t *testing.T, name string, data []byte) {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	if err := os.WriteFile(filepath.Join(fixtureDir, name), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGenerateFixtures writes the fixtures with -update; otherwise it checks
// they exist. All are derived from the demo trace's real state timeline.
func TestGenerateFixtures(t *testing.T) {
	if !*update {
		for _, n := range []string{"cholesky-2cpu.rapl.csv.gz", "cholesky-2cpu.watts.csv.gz", "cholesky-2cpu.kwollect.json.gz", "cholesky-2cpu.dvfs.rapl.csv.gz", "cholesky-2cpu.gaps.jsonl.gz"} {
			if _, err := os.Stat(filepath.Join(fixtureDir, n)); err != nil {
				t.Errorf("missing fixture (go test ./stages/energy -run TestGenerateFixtures -update): %v", err)
			}
		}
		return
	}
	tl := demoTimelines(t, nil)[DefaultNode]
	pw := func(c [NumClasses]int32) float64 { return powerAt(truth, c) }
	// Counters also count outside the run, at idle power.
	counted := func(pw func([NumClasses]int32) float64, idle, a, b float64) float64 {
		e, _, _ := exact(tl, pw, a, b)
		return e + idle*(math.Max(0, math.Min(b, tl.T0)-a)+math.Max(0, b-math.Max(a, tl.End)))
	}
	start := math.Floor(tl.T0*100) / 100
	// RAPL counter at 100 Hz, wrapping at 20 J.
	var b bytes.Buffer
	b.WriteString("# project-made fixture: RAPL energy_uj of node0 for the demo StarPU trace, ground truth Yang et al. (2014) Taurus powers\n")
	b.WriteString("time,node,energy_uj,max_energy_range_uj\n")
	const rng = 20_000_000
	cum := 123456.0
	for k := 0; ; k++ {
		ts := start + float64(k)*0.01
		if k > 0 {
			cum += counted(pw, truth.Idle, ts-0.01, ts) * 1e6
		}
		fmt.Fprintf(&b, "%.2f,node0,%d,%d\n", ts, int64(math.Round(cum))%rng, rng)
		if ts > tl.End {
			break
		}
	}
	gz(t, "cholesky-2cpu.rapl.csv.gz", b.Bytes())
	// Instantaneous watts at 1 kHz, CSV.
	b.Reset()
	b.WriteString("time,node,watts\n")
	start = math.Floor(tl.T0*1000) / 1000
	for k := 0; ; k++ {
		ts := start + float64(k)*0.001
		fmt.Fprintf(&b, "%.3f,node0,%.2f\n", ts, pw(countsAt(tl, ts)))
		if ts > tl.End {
			break
		}
	}
	gz(t, "cholesky-2cpu.watts.csv.gz", b.Bytes())
	// Kwollect at 1 kHz (as a wattmetre's raw rate would allow), RFC 3339 timestamps.
	b.Reset()
	b.WriteString("[\n")
	for k := 0; ; k++ {
		ts := start + float64(k)*0.001
		stamp := kwollectEpoch.Add(time.Duration(math.Round(ts*1e6)) * time.Microsecond).Format(time.RFC3339Nano)
		last := ts > tl.End
		sep := ",\n"
		if last {
			sep = "\n"
		}
		fmt.Fprintf(&b, `{"timestamp":%q,"device_id":"node0","metric_id":"wattmetre_power_watt","value":%.2f,"labels":{"_device_orig":"wattmetre1-port6"}}%s`, stamp, pw(countsAt(tl, ts)), sep)
		if last {
			break
		}
	}
	b.WriteString("]\n")
	gz(t, "cholesky-2cpu.kwollect.json.gz", b.Bytes())
	// DVFS: power from Srinivasan and Bellur's (2014) i7 model at 2.4 GHz, cpu = computing workers / 2.
	dv, _ := models.DVFSFromInputs(models.PowerInputs{FMin: 1.6, FMax: 3.4, PIdleFMin: 35.54, PIdleFMax: 36.14, PFullFMin: 51.36, PFullFMax: 92.56})
	dpw := func(c [NumClasses]int32) float64 { return dv.Predict(float64(c[signal.Compute])/2, 2.4) }
	b.Reset()
	b.WriteString("time,node,energy_uj,max_energy_range_uj\n")
	cum = 0
	start = math.Floor(tl.T0*100) / 100
	for k := 0; ; k++ {
		ts := start + float64(k)*0.01
		if k > 0 {
			cum += counted(dpw, dv.Predict(0, 2.4), ts-0.01, ts) * 1e6
		}
		fmt.Fprintf(&b, "%.2f,node0,%d,262143328850\n", ts, int64(math.Round(cum)))
		if ts > tl.End {
			break
		}
	}
	gz(t, "cholesky-2cpu.dvfs.rapl.csv.gz", b.Bytes())
	// JSON lines at 1 kHz with two holes: 3.0–3.5 s (a gap, > MaxGap) and
	// 5.000–5.040 s (bridged).
	b.Reset()
	start = math.Floor(tl.T0*1000) / 1000
	for k := 0; ; k++ {
		ts := start + float64(k)*0.001
		if !(ts > 3.0005 && ts < 3.4995) && !(ts > 5.0005 && ts < 5.0395) {
			fmt.Fprintf(&b, "{\"time\":%.3f,\"node\":\"node0\",\"watts\":%.2f}\n", ts, pw(countsAt(tl, ts)))
		}
		if ts > tl.End {
			break
		}
	}
	gz(t, "cholesky-2cpu.gaps.jsonl.gz", b.Bytes())
}

func join(t *testing.T, file string, popts power.Options, opts Options, mapping map[string]string) *Result {
	t.Helper()
	tls := demoTimelines(t, mapping)
	f, err := os.Open(filepath.Join(fixtureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	j := NewJoiner(tls, opts)
	popts.Name = file
	if _, err := power.Read(f, popts, func(s []tracecast.PowerSample) error { j.Add(s); return nil }); err != nil {
		t.Fatal(err)
	}
	return j.Finish()
}

// Every supported format recovers the run's energy, its class split and the
// per-state powers from the real StarPU timeline.
func TestRecoverFromDemo(t *testing.T) {
	tl := demoTimelines(t, nil)[DefaultNode]
	pw := func(c [NumClasses]int32) float64 { return powerAt(truth, c) }
	tests := []struct {
		name  string
		file  string
		popts power.Options
		opts  Options
		// relative tolerances: run energy, class energies, fitted powers
		// (W; the comm power only when tolNet > 0)
		tolE, tolClass, tolP, tolNet float64
	}{
		// The counter is exact at every 10 ms: windows aligned on 10 ms get
		// exact energies; only the class split inside a 10 ms interval is
		// approximated (constant mean power).
		{"rapl", "cholesky-2cpu.rapl.csv.gz", power.Options{}, Options{Window: 0.1}, 2e-4, 0.03, 1e-3, 0.05},
		{"watts csv 1 kHz", "cholesky-2cpu.watts.csv.gz", power.Options{}, Options{Window: 0.1}, 2e-4, 0.03, 0.5, 0},
		{"kwollect 1 kHz", "cholesky-2cpu.kwollect.json.gz", power.Options{Format: power.Kwollect},
			Options{Window: 0.1, Offset: float64(kwollectEpoch.Unix())}, 2e-4, 0.03, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := join(t, tt.file, tt.popts, tt.opts, nil)
			if len(res.Totals) != 1 || res.Stats.Gaps != 0 || res.Stats.Late != 0 || res.Stats.Unmatched != 0 {
				t.Fatalf("totals %d stats %+v gaps %v", len(res.Totals), res.Stats, res.Gaps)
			}
			tot := res.Totals[0]
			e, ce, occ := exact(tl, pw, tl.T0, tl.End)
			if r := math.Abs(tot.EnergyJ/e - 1); r > tt.tolE {
				t.Errorf("run energy %.4f J, want %.4f J (rel %.2g > %g)", tot.EnergyJ, e, r, tt.tolE)
			}
			for c := range NumClasses {
				if ce[c] == 0 && tot.ClassEnergy[c] == 0 {
					continue
				}
				if r := math.Abs(tot.ClassEnergy[c]/ce[c] - 1); r > tt.tolClass {
					t.Errorf("class %s energy %.4f, want %.4f (rel %.2g)", signal.Class(c), tot.ClassEnergy[c], ce[c], r)
				}
				if math.Abs(tot.Occupancy[c]-occ[c]) > 1e-9*(tl.End-tl.T0) {
					t.Errorf("class %s occupancy %.6f, want %.6f", signal.Class(c), tot.Occupancy[c], occ[c])
				}
			}
			fit, err := FitStatePowers(res.Windows, 0.99)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: E %.4f J (truth %.4f), fit idle %.4f app %.4f net %.4f (truth %.2f %.2f %.2f), R² %.6f",
				tt.name, tot.EnergyJ, e, fit.Powers.Idle, fit.Powers.App, fit.Powers.Net, truth.Idle, truth.App, truth.Net, r2OrNaN(fit.Stats))
			for _, p := range [][3]float64{{fit.Powers.Idle, truth.Idle, tt.tolP}, {fit.Powers.App, truth.App, tt.tolP}, {fit.Powers.Net, truth.Net, tt.tolNet}} {
				if p[2] > 0 && math.Abs(p[0]-p[1]) > p[2] {
					t.Errorf("fitted %.4f W, want %.4f ± %g", p[0], p[1], p[2])
				}
			}
			// Counters are exact at their readings: windows inside the run
			// (aligned on the 10 ms readings) get the exact energy.
			if tt.name == "rapl" {
				for _, w := range res.Windows {
					if w.Start < tl.T0 || w.End > tl.End {
						continue
					}
					we, _, _ := exact(tl, pw, w.Start, w.End)
					if math.Abs(w.EnergyJ-we) > 1e-5 {
						t.Errorf("window %d: %.8f J, want %.8f", w.Window, w.EnergyJ, we)
					}
				}
			}
			// Yang et al.'s (2014) model with the true powers predicts the measured energy.
			pred := models.NodeEnergy(truth, tot.ModelOccupancy())
			if in := models.Inaccuracy(pred, tot.EnergyJ); in > tt.tolE+1e-9 {
				t.Errorf("inaccuracy %.3g", in)
			}
		})
	}
}

// The DVFS-generated stream: the fit recovers P(0, f) as idle power and
// (A·f/fmax + B)/2 as the per-worker compute increment.
func TestRecoverDVFS(t *testing.T) {
	res := join(t, "cholesky-2cpu.dvfs.rapl.csv.gz", power.Options{}, Options{Window: 0.1}, nil)
	dv, _ := models.DVFSFromInputs(models.PowerInputs{FMin: 1.6, FMax: 3.4, PIdleFMin: 35.54, PIdleFMax: 36.14, PFullFMin: 51.36, PFullFMax: 92.56})
	fit, err := FitStatePowers(res.Windows, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	idle := dv.Predict(0, 2.4)
	inc := (dv.Predict(1, 2.4) - idle) / 2
	t.Logf("DVFS: fit idle %.4f (truth %.4f), compute increment %.4f (truth %.4f), comm increment %.4f (truth 0)",
		fit.Powers.Idle, idle, fit.Powers.App-fit.Powers.Idle, inc, fit.Powers.Net-fit.Powers.Idle)
	if math.Abs(fit.Powers.Idle-idle) > 0.05 || math.Abs(fit.Powers.App-fit.Powers.Idle-inc) > 0.05 ||
		math.Abs(fit.Powers.Net-fit.Powers.Idle) > 0.05 {
		t.Errorf("fit %+v", fit.Powers)
	}
}

func TestGaps(t *testing.T) {
	res := join(t, "cholesky-2cpu.gaps.jsonl.gz", power.Options{}, Options{Window: 0.1, MaxGap: 0.1}, nil)
	if res.Stats.Gaps != 1 || len(res.Gaps) != 1 {
		t.Fatalf("gaps %v", res.Gaps)
	}
	g := res.Gaps[0]
	if math.Abs(g.Start-3.0) > 1e-6 || math.Abs(g.End-3.5) > 1e-6 {
		t.Errorf("gap %+v, want 3.0–3.5", g)
	}
	tl := res.Timelines[DefaultNode]
	tot := res.Totals[0]
	if math.Abs(tot.Covered-(tl.End-tl.T0-0.5)) > 1e-6 {
		t.Errorf("covered %.6f, want run − 0.5 s = %.6f", tot.Covered, tl.End-tl.T0-0.5)
	}
	// The windows inside the gap are missing; those around it partly covered.
	for _, w := range res.Windows {
		if w.Start >= 3.0-1e-9 && w.End <= 3.5+1e-9 && w.Covered > 0 {
			t.Errorf("window %d inside the gap covered %.3f", w.Window, w.Covered)
		}
	}
	// With the 40 ms hole bridged, energy outside the gap matches the truth.
	pw := func(c [NumClasses]int32) float64 { return powerAt(truth, c) }
	e1, _, _ := exact(tl, pw, tl.T0, 3.0)
	e2, _, _ := exact(tl, pw, 3.5, tl.End)
	if r := math.Abs(tot.EnergyJ/(e1+e2) - 1); r > 0.003 {
		t.Errorf("energy outside the gap %.4f, want %.4f (rel %.2g)", tot.EnergyJ, e1+e2, r)
	}
}

// Out-of-order samples within the lateness window give the same result as
// in-order ones; later ones are dropped and counted; memory stays bounded.
func TestLateness(t *testing.T) {
	tl := &Timeline{Node: "n", R: 1, T0: 0, End: 10, Steps: []signal.Step{{T: 0, Count: [NumClasses]int32{1, 0, 0, 0}}, {T: 5, Count: [NumClasses]int32{0, 1, 0, 0}}}}
	var in []tracecast.PowerSample
	for k := range 101 {
		w := 100.0
		if float64(k)*0.1 >= 5 {
			w = 150
		}
		in = append(in, tracecast.PowerSample{T: float64(k) * 0.1, Node: "n", Watts: w})
	}
	// Swap neighbours: each is at most 0.1 s late.
	shuffled := append([]tracecast.PowerSample(nil), in...)
	for k := 0; k+1 < len(shuffled); k += 2 {
		shuffled[k], shuffled[k+1] = shuffled[k+1], shuffled[k]
	}
	shuffled = append(shuffled, tracecast.PowerSample{T: 0.05, Node: "n", Watts: 1e6}, tracecast.PowerSample{T: 1, Node: "other", Watts: 1})
	j := NewJoiner(map[string]*Timeline{"n": tl}, Options{Window: 1, Lateness: 0.15})
	var early int
	for _, s := range shuffled {
		j.Add([]tracecast.PowerSample{s})
		early += len(j.TakeWindows())
	}
	res := j.Finish()
	if early < 8 {
		t.Errorf("only %d windows final before the end", early)
	}
	if res.Stats.Late != 1 || res.Stats.Unmatched != 1 || res.Stats.MaxBuffered > 3 {
		t.Errorf("stats %+v", res.Stats)
	}
	// 5 s at 100 W, a ramp 100→150 between 4.9 and 5.0 s, then 150 W.
	want := 100*4.9 + 125*0.1 + 150*5
	if math.Abs(res.Totals[0].EnergyJ-want) > 1e-9 {
		t.Errorf("energy %.6f, want %.6f", res.Totals[0].EnergyJ, want)
	}
	// Idle gets the head, compute the tail: the ramp is before the change.
	if math.Abs(res.Totals[0].ClassEnergy[signal.Idle]-(100*4.9+125*0.1)) > 1e-9 {
		t.Errorf("idle energy %.6f", res.Totals[0].ClassEnergy[signal.Idle])
	}
}

// Two workers on two nodes via a mapping: each node has one worker.
func TestMapping(t *testing.T) {
	tls := demoTimelines(t, map[string]string{"CPU0": "a", "CPU1": "b"})
	if len(tls) != 2 || tls["a"].R != 1 || tls["b"].R != 1 {
		t.Fatalf("timelines %v", tls)
	}
	j := NewJoiner(tls, Options{})
	var ss []tracecast.PowerSample
	for k := 0; k <= 800; k++ {
		ss = append(ss, tracecast.PowerSample{T: float64(k) * 0.01, Node: "a", Watts: 10}, tracecast.PowerSample{T: float64(k) * 0.01, Node: "b", Watts: 20})
	}
	j.Add(ss)
	res := j.Finish()
	for i, n := range []string{"a", "b"} {
		want := float64(10*(i+1)) * (tls[n].End - tls[n].T0)
		if math.Abs(res.Totals[i].EnergyJ-want) > 1e-6 {
			t.Errorf("node %s energy %.6f, want %.6f", n, res.Totals[i].EnergyJ, want)
		}
	}
	if rows := Rows(res.Windows); len(rows) != 2*NumClasses {
		t.Errorf("%d rows", len(rows))
	}
}

// Times before the epoch and an offset: nothing is mistaken for late.
func TestNegativeTimesAndOffset(t *testing.T) {
	tl := &Timeline{Node: "n", R: 2, T0: -4, End: -1, Steps: []signal.Step{{T: -4, Count: [NumClasses]int32{0, 2, 0, 0}}}}
	j := NewJoiner(map[string]*Timeline{"n": tl}, Options{Offset: 100})
	j.Add([]tracecast.PowerSample{{T: 95, Node: "n", Watts: 10}, {T: 97, Node: "n", Watts: 10}, {T: 99.5, Node: "n", Watts: 10}, {T: 99.5, Node: "n", Watts: 5}})
	res := j.Finish()
	if res.Stats.Late != 1 || math.Abs(res.Totals[0].EnergyJ-30) > 1e-9 || math.Abs(res.Totals[0].ClassEnergy[signal.Compute]-30) > 1e-9 {
		t.Errorf("stats %+v totals %+v", res.Stats, res.Totals)
	}
}

// Merging per-worker timelines gives exactly stages/signal's node-level
// signal; the container tree places workers on their Memory Node.
func TestTimelineMatchesSignal(t *testing.T) {
	f, err := os.Open(demoTrace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules := signal.StarPU()
	rules.Compile()
	b := signal.NewBuilder(rules)
	c := NewCollector(rules, nil, "")
	c.SetNodeType("Memory Node")
	if _, err := paje.Read(f, paje.DefaultOptions(), func(es []tracecast.Entity) error { b.Add(es); c.Add(es); return nil }); err != nil {
		t.Fatal(err)
	}
	sig, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	tls, err := c.Build(1000)
	if err != nil {
		t.Fatal(err)
	}
	tl := tls["MEMNODE0"]
	if len(tls) != 1 || tl == nil || tl.R != sig.R || len(tl.Steps) != len(sig.Steps) || tl.End != sig.End/1000 {
		t.Fatalf("timelines %v (signal: R %d, %d steps)", tls, sig.R, len(sig.Steps))
	}
	for i, s := range sig.Steps {
		if tl.Steps[i].Count != s.Count || tl.Steps[i].T != s.T/1000 {
			t.Fatalf("step %d: %+v, signal %+v", i, tl.Steps[i], s)
		}
	}
}

// Storage from an I/O-call stream: a process in I/O is one more activity on
// its node, in the storage class (signal.Other), sharing the power equally
// with the workers.
func TestStorageFromIO(t *testing.T) {
	rules := signal.StarPU()
	if err := rules.Compile(); err != nil {
		t.Fatal(err)
	}
	c := NewCollector(rules, map[string]string{"pid 7": "n", "CPU0": "n", "CPU1": "n"}, "n")
	st := func(w string, a, b float64, v string) tracecast.Entity {
		return tracecast.Entity{Nature: tracecast.NatureState, Container: w, Type: "Worker State", Start: a, End: b, Value: v}
	}
	// Two workers computing for 4 s (ms in the trace).
	c.Add([]tracecast.Entity{st("CPU0", 0, 4000, "GEMM"), st("CPU1", 0, 4000, "GEMM")})
	// pid 7 is in I/O from 1 s to 2 s on the I/O clock, which is 100 s
	// ahead of trace time.
	c.AddIO([]tracecast.Entity{{Nature: tracecast.NatureState, Container: "pid 7", Type: "IO State", Start: 101, End: 102, Value: "write"}}, 100)
	tls, err := c.Build(1000)
	if err != nil {
		t.Fatal(err)
	}
	j := NewJoiner(tls, Options{})
	var ss []tracecast.PowerSample
	for k := 0; k <= 400; k++ {
		ss = append(ss, tracecast.PowerSample{T: float64(k) * 0.01, Node: "n", Watts: 30})
	}
	j.Add(ss)
	res := j.Finish()
	tot := res.Totals[0]
	// 120 J in all; during the I/O second, 30 J are shared by 3 activities.
	if math.Abs(tot.EnergyJ-120) > 1e-9 || math.Abs(tot.ClassEnergy[signal.Other]-10) > 1e-9 || math.Abs(tot.ClassEnergy[signal.Compute]-110) > 1e-9 {
		t.Errorf("energy %.6f, storage %.6f, compute %.6f; want 120, 10, 110", tot.EnergyJ, tot.ClassEnergy[signal.Other], tot.ClassEnergy[signal.Compute])
	}
	if math.Abs(tot.Occupancy[signal.Other]-1) > 1e-9 || math.Abs(tot.Occupancy[signal.Compute]-8) > 1e-9 {
		t.Errorf("occupancy storage %.6f compute %.6f; want 1 and 8", tot.Occupancy[signal.Other], tot.Occupancy[signal.Compute])
	}
}

// r2OrNaN is a fit's R², NaN when it has none.
func r2OrNaN(st models.FitStats) float64 {
	if st.R2 == nil {
		return math.NaN()
	}
	return *st.R2
}
