package backfill

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracecast/tracecast"
)

// event is one worker change of a test run.
type event struct {
	t    float64
	w    string
	idle bool
}

// run feeds events to an engine and returns its decisions and table.
func run(t *testing.T, cfg Config, evs []event, end float64) ([]tracecast.Decision, *Result) {
	t.Helper()
	var ds []tracecast.Decision
	e, err := New(cfg, Sink{Decision: func(d tracecast.Decision) { ds = append(ds, d) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		e.Change(ev.t, ev.w, ev.idle)
	}
	return ds, e.Finish(end)
}

func row(t *testing.T, res *Result, policy string) Row {
	t.Helper()
	for _, r := range res.Rows {
		if r.Policy == policy {
			return r
		}
	}
	t.Fatalf("no %s row", policy)
	return Row{}
}

// Worker a: idle [0, 25), busy [25, 30), idle [30, 33); worker b: busy
// [0, 10), idle [10, 14), busy after. Tasks of 10 (o = 0).
var handRun = []event{{0, "a", true}, {0, "b", false}, {10, "b", true}, {14, "b", false}, {25, "a", false}, {30, "a", true}}

func TestHandComputed(t *testing.T) {
	for _, tc := range []struct {
		mode                     Mode
		policy                   string
		launches                 int
		harvest, waste, delay    float64
		oracleHarvest, greedyAt1 float64
	}{
		// Kill: greedy launches at 0, 10, 20 (killed at 25: 5 wasted) on a,
		// at 10 on b (killed at 14: 4) and at 30 on a (killed at 33: 3).
		{Kill, Greedy, 5, 20, 12, 0, 20, 8},
		// Wait: the same launches on a at 0, 10, 20 (overrun 5), then a
		// is held until 30: launches at 30 (overrun 7); b at 10 (overrun 6).
		{Wait, Greedy, 5, 50, 0, 18, 20, 32},
		{Kill, Oracle, 2, 20, 0, 0, 20, 8},
		{Wait, Oracle, 2, 20, 0, 0, 20, 32},
	} {
		cfg := Config{Run: "r", Tasks: []float64{10}, Mode: tc.mode, Alphas: []float64{1}, KeepSpells: true}
		ds, res := run(t, cfg, handRun, 33)
		r := row(t, res, tc.policy)
		if r.Launches != tc.launches || r.Harvest != tc.harvest || r.Waste != tc.waste || r.Delay != tc.delay {
			t.Errorf("%s %s: launches %d U %g W %g D %g, want %d %g %g %g", tc.mode, tc.policy, r.Launches, r.Harvest, r.Waste, r.Delay,
				tc.launches, tc.harvest, tc.waste, tc.delay)
		}
		if r.OracleHarvest != tc.oracleHarvest || r.GreedyScore != tc.greedyAt1 {
			t.Errorf("%s: U* %g S_greedy %g, want %g %g", tc.mode, r.OracleHarvest, r.GreedyScore, tc.oracleHarvest, tc.greedyAt1)
		}
		n := 0
		for _, d := range ds {
			if d.Policy == tc.policy {
				n++
			}
		}
		if n != tc.launches {
			t.Errorf("%s %s: %d decision records, want %d", tc.mode, tc.policy, n, tc.launches)
		}
	}
}

func TestValue(t *testing.T) {
	// Kill at α = 1: S_greedy = 20 − 12 = 8, S_oracle = 20: V = (S − 8)/12.
	cfg := Config{Run: "r", Tasks: []float64{10}, Mode: Kill, Alphas: []float64{1}, KeepSpells: true}
	_, res := run(t, cfg, handRun, 33)
	for _, r := range res.Rows {
		want := (r.Score - 8) / 12
		if math.Abs(r.Value-want) > 1e-12 {
			t.Errorf("%s: V %g, want %g", r.Policy, r.Value, want)
		}
	}
	if v := row(t, res, Oracle).Value; v != 1 {
		t.Errorf("oracle V %g, want 1", v)
	}
	if v := row(t, res, Greedy).Value; v != 0 {
		t.Errorf("greedy V %g, want 0 (it is S_ref)", v)
	}
	// The hindsight timeout: τ = 0 makes 8; τ = 5 launches at 5, 15
	// (killed at 25: 10 wasted) on a, none fits b: 10 − 10 = 0... the
	// best of the grid is found by replaying every τ.
	h := row(t, res, HindsightTimeout)
	if h.Score < 8 {
		t.Errorf("hindsight-timeout S %g below greedy's (τ = 0 is on its grid)", h.Score)
	}
}

// TestDecisionsValid runs every policy on random spells and checks every
// decision: inside an idle spell of its worker, after the worker's
// previous task of the same lane, with the outcome the spell gives it.
func TestDecisionsValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	evs, spells, end := randomRun(rng, 4, 3000)
	for _, mode := range []Mode{Kill, Wait} {
		cfg := Config{Run: "r", Tasks: []float64{0.001, 0.01}, Overhead: 0.0002, Mode: mode, Alphas: []float64{1, 10},
			Timeouts: []float64{0.002}, KeepSpells: true}
		ds, res := run(t, cfg, evs, end)
		if len(ds) == 0 {
			t.Fatal("no decision")
		}
		type lane struct {
			policy string
			d, a   float64
			tau    float64
		}
		free := map[lane]map[string]float64{}
		totals := map[lane]*[3]float64{}
		for _, d := range ds {
			k := lane{d.Policy, d.D, d.Alpha, d.Timeout}
			if math.IsNaN(k.a) {
				k.a = -1
			}
			if math.IsNaN(k.tau) {
				k.tau = -1
			}
			if free[k] == nil {
				free[k], totals[k] = map[string]float64{}, &[3]float64{}
			}
			sp := spells[d.Worker]
			i, _ := slices.BinarySearchFunc(sp, d.Start, func(s [2]float64, x float64) int {
				switch {
				case s[1] <= x:
					return -1
				case s[0] > x:
					return 1
				}
				return 0
			})
			if i == len(sp) || !(sp[i][0] <= d.Start && d.Start < sp[i][1]) {
				t.Fatalf("%s: %+v starts outside an idle spell", mode, d)
			}
			if f, ok := free[k][d.Worker]; ok && d.Start < f {
				t.Fatalf("%s: %+v starts before the worker's previous task ended (%g)", mode, d, f)
			}
			until := d.Start + d.Overhead + d.D
			want := "completed"
			switch {
			case until <= sp[i][1]:
				totals[k][0] += d.D
				free[k][d.Worker] = until
			case mode == Kill:
				want = "killed"
				totals[k][1] += sp[i][1] - d.Start
				free[k][d.Worker] = sp[i][1]
			default:
				want = "overran"
				totals[k][0] += d.D
				totals[k][2] += until - sp[i][1]
				free[k][d.Worker] = until
			}
			if d.Outcome != want {
				t.Fatalf("%s: %+v: outcome %s, want %s", mode, d, d.Outcome, want)
			}
		}
		for _, r := range res.Rows {
			if r.Policy == Never {
				continue
			}
			k := lane{r.Policy, r.D, r.Alpha, r.Timeout}
			if r.Policy == Greedy || r.Policy == Timeout || r.Policy == Oracle {
				k.a = -1
			}
			if math.IsNaN(k.tau) || r.Policy == HindsightTimeout {
				k.tau = r.Timeout
				if math.IsNaN(k.tau) {
					k.tau = -1
				}
			}
			got := totals[k]
			if got == nil {
				if r.Launches != 0 {
					t.Errorf("%s %s d=%g α=%g: %d launches but no decision", mode, r.Policy, r.D, r.Alpha, r.Launches)
				}
				continue
			}
			for j, v := range []float64{r.Harvest, r.Waste, r.Delay} {
				if math.Abs(v-got[j]) > 1e-9*math.Max(1, math.Abs(v)) {
					t.Errorf("%s %s d=%g α=%g: total %d is %g, the decisions make %g", mode, r.Policy, r.D, r.Alpha, j, v, got[j])
				}
			}
		}
	}
}

// byTime sorts a run's events by time, the workers' in their order.
func byTime(evs []event) {
	slices.SortStableFunc(evs, func(a, b event) int { return cmp.Compare(a.t, b.t) })
}

// randomRun makes R workers alternating busy and idle periods, with idle
// spells heavy-tailed (most short, some long), over n changes each.
func randomRun(rng *rand.Rand, r, n int) ([]event, map[string][][2]float64, float64) {
	return runWith(rng, r, n, func() float64 { return 1e-5 * math.Exp(rng.NormFloat64()*2.5) })
}

// runWith makes R workers alternating busy periods (exponential, 2 ms)
// and idle ones of the lengths idle draws, over n changes each, and
// returns the events in time order, each worker's spells and the run's
// end.
func runWith(rng *rand.Rand, r, n int, idle func() float64) ([]event, map[string][][2]float64, float64) {
	var evs []event
	spells := map[string][][2]float64{}
	end := 0.0
	for w := range r {
		name := string(rune('a' + w))
		t := 0.0
		for i := range n {
			isIdle := i%2 == 0
			evs = append(evs, event{t, name, isIdle})
			var d float64
			if isIdle {
				d = idle()
				spells[name] = append(spells[name], [2]float64{t, t + d})
			} else {
				d = 0.002 * rng.ExpFloat64()
			}
			t += d
		}
		end = math.Max(end, t)
	}
	byTime(evs)
	// The run's end closes the spells still open.
	for name, sp := range spells {
		if last := &sp[len(sp)-1]; last[1] > end {
			last[1] = end
		}
		spells[name] = sp
	}
	return evs, spells, end
}

// TestCutRun checks causality: a run cut at time c makes every decision
// whose outcome was known before c exactly as the whole run does.
func TestCutRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	evs, _, end := randomRun(rng, 3, 2000)
	for _, mode := range []Mode{Kill, Wait} {
		cfg := Config{Run: "r", Tasks: []float64{0.001}, Overhead: 0.0001, Mode: mode, Alphas: []float64{1, 10},
			Policies: []string{Greedy, OnlineTimeout, Residual, Forecast}}
		all, _ := run(t, cfg, evs, end)
		for _, frac := range []float64{0.2, 0.5, 0.8} {
			c := end * frac
			var cut []event
			for _, ev := range evs {
				if ev.t <= c {
					cut = append(cut, ev)
				}
			}
			part, _ := run(t, cfg, cut, c)
			known := func(d tracecast.Decision) bool { return d.Start+d.Overhead+d.D < c }
			var want, got []tracecast.Decision
			for _, d := range all {
				if known(d) && d.Outcome == "completed" {
					want = append(want, d)
				}
			}
			for _, d := range part {
				if known(d) && d.Outcome == "completed" {
					got = append(got, d)
				}
			}
			key := func(d tracecast.Decision) string { return d.ID }
			slices.SortFunc(want, func(a, b tracecast.Decision) int { return compareStr(key(a), key(b)) })
			slices.SortFunc(got, func(a, b tracecast.Decision) int { return compareStr(key(a), key(b)) })
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("%s cut at %.0f%%: %d completed decisions, the whole run has %d", mode, 100*frac, len(got), len(want))
			}
			for i := range want {
				if want[i].Start != got[i].Start || want[i].Worker != got[i].Worker || want[i].Policy != got[i].Policy {
					t.Fatalf("%s cut at %.0f%%: decision %d differs: %+v, whole run %+v", mode, 100*frac, i, got[i], want[i])
				}
			}
		}
	}
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Tasks: nil, Mode: Kill, Alphas: []float64{1}},
		{Tasks: []float64{-1}, Mode: Kill, Alphas: []float64{1}},
		{Tasks: []float64{1}, Mode: "both", Alphas: []float64{1}},
		{Tasks: []float64{1}, Mode: Kill, Alphas: []float64{0}},
		{Tasks: []float64{1}, Mode: Kill, Alphas: []float64{1}, Policies: []string{"magic"}},
		{Tasks: []float64{1}, Mode: Kill, Alphas: []float64{1}, Policies: []string{Oracle}}, // needs the spells kept
		{Tasks: []float64{1}, Mode: Kill, Alphas: []float64{1}, Policies: []string{Timeout}},
	} {
		if _, err := New(cfg, Sink{}); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// TestCutRunPlans: the plans issued before a cut are those of the whole
// run (a plan is issued at e.now, once what happened then is known: the
// records before the cut's last instant cannot change).
func TestCutRunPlans(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	evs, _, end := randomRun(rng, 3, 2000)
	plans := func(evs []event, end float64) []tracecast.Plan {
		var ps []tracecast.Plan
		cfg := Config{Run: "r", Tasks: []float64{0.001, 0.01}, Mode: Wait, Alphas: []float64{10}, Policies: []string{Forecast}}
		e, err := New(cfg, Sink{Plan: func(p tracecast.Plan) { ps = append(ps, p) }})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			e.Change(ev.t, ev.w, ev.idle)
		}
		e.Finish(end)
		return ps
	}
	all := plans(evs, end)
	if len(all) < 100 {
		t.Fatalf("only %d plans", len(all))
	}
	for _, frac := range []float64{0.2, 0.5, 0.8} {
		c := end * frac
		var cut []event
		for _, ev := range evs {
			if ev.t <= c {
				cut = append(cut, ev)
			}
		}
		last := cut[len(cut)-1].t // plans at the last instant wait for what comes after it
		var got, want []string
		for _, p := range plans(cut, c) {
			if p.IssuedAt < last {
				got = append(got, string(p.AppendJSON(nil)))
			}
		}
		for _, p := range all {
			if p.IssuedAt < last {
				want = append(want, string(p.AppendJSON(nil)))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("cut at %.0f%%: %d plans before %g, the whole run has %d", 100*frac, len(got), last, len(want))
		}
	}
}

// TestBusySpells: a busy worker's forecasts are conditioned on the state
// its spell began in and learnt from the busy spells ended before the
// issue only; they change no decision; every spell ends once (SpellEnd).
func TestBusySpells(t *testing.T) {
	// One worker: GEMM for 10 ms, FetchingInput for 0.5 µs, idle 1 ms
	// between them, 200 times; a second worker idle throughout.
	type ch struct {
		t     float64
		idle  bool
		value string
	}
	var chs []ch
	tm := 0.0
	for i := range 200 {
		v, d := "GEMM", 0.01
		if i%2 == 1 {
			v, d = "FetchingInput", 5e-7
		}
		chs = append(chs, ch{tm, false, v}, ch{tm + d, true, "Overhead"})
		tm += d + 0.001
	}
	feed := func(spells bool) ([]tracecast.Decision, []tracecast.SpellForecast, []SpellEnd) {
		var ds []tracecast.Decision
		var fs []tracecast.SpellForecast
		var ends []SpellEnd
		cfg := Config{Run: "r", Tasks: []float64{0.002}, Mode: Wait, Alphas: []float64{10}, Policies: []string{Forecast}}
		if spells {
			cfg.SpellLengths = []float64{0.001}
		}
		e, err := New(cfg, Sink{Decision: func(d tracecast.Decision) { ds = append(ds, d) },
			Spell: func(f tracecast.SpellForecast) { fs = append(fs, f) }, SpellEnd: func(s SpellEnd) { ends = append(ends, s) }})
		if err != nil {
			t.Fatal(err)
		}
		e.Begin(0, []string{"a", "b"}, true)
		for _, c := range chs {
			e.ChangeState(c.t, "a", c.idle, c.value)
		}
		e.Finish(tm)
		return ds, fs, ends
	}
	ds0, _, _ := feed(false)
	ds, fs, ends := feed(true)
	if !slices.EqualFunc(ds, ds0, func(a, b tracecast.Decision) bool { return string(a.AppendJSON(nil)) == string(b.AppendJSON(nil)) }) {
		t.Fatalf("the spell forecasts changed the decisions: %d against %d", len(ds), len(ds0))
	}
	first, last := map[string]tracecast.SpellForecast{}, map[string]tracecast.SpellForecast{}
	busyStarts := 0
	for _, f := range fs {
		if f.State != "busy" || f.Worker != "a" || f.Elapsed != 0 {
			continue
		}
		busyStarts++
		v := "GEMM"
		if busyStarts%2 == 0 {
			v = "FetchingInput"
		}
		if _, ok := first[v]; !ok {
			first[v] = f
		}
		last[v] = f
	}
	if busyStarts != 200 {
		t.Fatalf("%d busy spells forecast at their start, want 200", busyStarts)
	}
	// The first spell has nothing to learn from (Gott's prior: as likely
	// to end within 10 ns as not); by the end each state's own lengths.
	if q := first["GEMM"].Q50; q > 1e-7 {
		t.Errorf("the first forecast's median %g s: learnt from nothing", q)
	}
	if q := last["GEMM"].Q50; q < 0.008 || q > 0.012 {
		t.Errorf("GEMM's median forecast %g s, want about 10 ms", q)
	}
	if q := last["FetchingInput"].Q50; q < 3e-7 || q > 7e-7 {
		t.Errorf("FetchingInput's median forecast %g s, want about 0.5 µs", q)
	}
	var idleA, busyA, idleB int
	for _, s := range ends {
		switch {
		case s.Worker == "a" && s.State == "busy":
			busyA++
		case s.Worker == "a":
			idleA++
		default:
			idleB++
		}
		if !(s.End > s.Start) {
			t.Errorf("spell %+v", s)
		}
	}
	if busyA != 200 || idleA != 200 || idleB != 1 {
		t.Errorf("spells ended: a %d busy, %d idle; b %d idle", busyA, idleA, idleB)
	}
}
