package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/ipc"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/signal"
)

// Ground truth of the synthetic run: a node of two workers draws 100 W
// idle and 20 W more per computing worker.
const (
	idleW = 100.0
	appW  = 120.0
)

// synthetic is a 4 s run of one node ("n0", two workers) in 1 s windows:
// 0, 1, 2, then 1 worker computing. Energies follow the ground truth
// exactly, so the fit must find it.
func synthetic(withGap bool) *energy.Result {
	busy := []int32{0, 1, 2, 1}
	tl := &energy.Timeline{Node: "n0", R: 2, T0: 0, End: 4, Containers: []string{"w0", "w1"}}
	var ws []energy.NodeWindow
	for i, b := range busy {
		var cnt [energy.NumClasses]int32
		cnt[signal.Idle], cnt[signal.Compute] = 2-b, b
		tl.Steps = append(tl.Steps, signal.Step{T: float64(i), Count: cnt})
		w := energy.NodeWindow{Node: "n0", Window: int64(i), Start: float64(i), End: float64(i + 1), Covered: 1}
		w.EnergyJ = idleW + (appW-idleW)*float64(b)
		w.Occupancy[signal.Idle], w.Occupancy[signal.Compute] = float64(2-b), float64(b)
		for c := range energy.NumClasses {
			w.ClassEnergy[c] = w.EnergyJ * w.Occupancy[c] / 2
		}
		ws = append(ws, w)
	}
	tls := map[string]*energy.Timeline{"n0": tl}
	res := &energy.Result{Windows: ws, Totals: energy.Totals(ws, tls), Timelines: tls, UnknownNodes: map[string]int64{}}
	if withGap {
		res.Gaps = []energy.Gap{{Node: "n0", Start: 1.5, End: 1.75}}
		res.Stats.Gaps, res.Stats.GapS, res.Stats.Late, res.Stats.Samples = 1, 0.25, 3, 400
	}
	return res
}

func TestNewEnergy(t *testing.T) {
	given := models.StatePowers{Idle: 90, App: 130, Storage: 90, Net: 90}
	// The increments given for the powers (what the energy command's help
	// once said): Yang et al. (2014)'s model would predict a negative energy.
	increments := models.StatePowers{Idle: 100, App: 15, Net: 5}
	// An idle power above the run's 120 W mean: the prediction stands (the
	// inaccuracy says how poor it is), the idle fraction would exceed 1.
	hot := models.StatePowers{Idle: 150, App: 160, Storage: 150, Net: 150}
	// Finite powers whose prediction overflows: +Inf J is no energy
	// (and model.json could not even hold it).
	huge := models.StatePowers{Idle: 1e308, App: 1e308, Storage: 1e308, Net: 1e308}
	for _, c := range []struct {
		name       string
		res        *energy.Result
		params     *models.StatePowers
		source     string
		idle, app  float64
		predicted  float64
		inaccuracy float64
		idleFrac   float64 // -1: null
		fitErr     string  // "" when there is a model
	}{
		// 4 s idle at 100 W plus 4 worker-seconds at +20 W: 480 J.
		{name: "fit", res: synthetic(false), source: "fit", idle: idleW, app: appW, predicted: 480, idleFrac: idleW * 4 / 480},
		// 4·90 + 4·40 = 520 J against 480 J measured.
		{name: "params", res: synthetic(false), params: &given, source: "params", idle: 90, app: 130, predicted: 520, inaccuracy: 40.0 / 480, idleFrac: 90.0 * 4 / 480},
		{name: "idle above the mean power", res: synthetic(false), params: &hot, source: "params", idle: 150, app: 160, predicted: 640, inaccuracy: 160.0 / 480, idleFrac: -1},
		// No window to fit: no model, the energies stand.
		{name: "fit fails", res: func() *energy.Result {
			r := synthetic(false)
			r.Windows = nil
			return r
		}(), fitErr: "fit state powers: no observations"},
		{name: "overflowing prediction", res: synthetic(false), params: &huge, fitErr: "implausible prediction: +Inf J"},
		{name: "increments for powers", res: synthetic(false), params: &increments, fitErr: "implausible powers: app 15 W, storage 0 W and net 5 W are below idle 100 W"},
		// A fit that says computing saves power is no model.
		{name: "implausible fit", res: func() *energy.Result {
			r := synthetic(false)
			for i := range r.Windows {
				r.Windows[i].EnergyJ = 200 - 30*r.Windows[i].Occupancy[signal.Compute]
			}
			return r
		}(), fitErr: "implausible fit: the fitted app power 170 W is below idle 200 W"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := NewEnergy(c.res, c.params)
			if rep.Source != c.source || !strings.Contains(rep.FitErr, c.fitErr) || (rep.FitErr == "") != (c.fitErr == "") {
				t.Fatalf("source %q, fit error %q; want %q, %q", rep.Source, rep.FitErr, c.source, c.fitErr)
			}
			if rep.Measured != 480 || rep.RunS != 4 || rep.EDP != 480*4 || len(rep.Nodes) != 1 || rep.Nodes[0].Workers != 2 {
				t.Fatalf("measured %g J over %g s (EDP %g), nodes %+v", rep.Measured, rep.RunS, rep.EDP, rep.Nodes)
			}
			if c.fitErr != "" {
				if rep.Powers != nil || rep.Predicted != nil || rep.Inaccuracy != nil || rep.IdleFraction != nil ||
					rep.Nodes[0].Predicted != nil || rep.Nodes[0].Inaccuracy != nil || rep.Fit != nil {
					t.Fatalf("a prediction without a model: %+v", rep)
				}
				// In model.json, what the model cannot say is null.
				b, _ := json.Marshal(rep)
				for _, want := range []string{`"powers":null`, `"predicted_j":null`, `"inaccuracy":null`, `"idle_fraction":null`, `"fit_error":`} {
					if !strings.Contains(string(b), want) {
						t.Errorf("model.json lacks %s: %s", want, b)
					}
				}
				return
			}
			near := func(what string, got *float64, want float64) {
				t.Helper()
				if got == nil || math.Abs(*got-want) > 1e-9 {
					t.Errorf("%s = %v, want %g", what, got, want)
				}
			}
			near("idle", &rep.Powers.Idle, c.idle)
			near("app", &rep.Powers.App, c.app)
			near("predicted", rep.Predicted, c.predicted)
			near("inaccuracy", rep.Inaccuracy, c.inaccuracy)
			near("node inaccuracy", rep.Nodes[0].Inaccuracy, c.inaccuracy)
			if c.idleFrac < 0 {
				if rep.IdleFraction != nil || !strings.Contains(rep.IdleFractionErr, "the idle power 150 W is above the run's mean power 120 W") {
					t.Errorf("idle fraction %v (%q), want null with the reason", rep.IdleFraction, rep.IdleFractionErr)
				}
			} else {
				near("idle fraction", rep.IdleFraction, c.idleFrac)
			}
			if (rep.Fit != nil) != (c.source == "fit") {
				t.Errorf("fit %+v", rep.Fit)
			}
		})
	}
}

// The table and the lines under it, as the terminal shows them.
func TestEnergyText(t *testing.T) {
	var b bytes.Buffer
	if err := NewEnergy(synthetic(true), nil).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `  node    class  energy J   share  occupancy s
    n0     idle   220.000   45.8%       4.0000
    n0  compute   260.000   54.2%       4.0000
    n0     comm     0.000    0.0%       0.0000
    n0  storage     0.000    0.0%       0.0000
    n0    total   480.000  100.0%       4.0000
n0: 2 workers, run 4.0000 s, covered 4.0000 s, mean power 120.00 W
gaps: 1, 0.2500 s not integrated (first: n0 1.5000–1.7500 s)
late samples dropped: 3 of 400 (0.8%): behind a later sample of their node by more than --lateness, or at its time; sort the stream or raise --lateness
per-state powers (fit): idle 100.000 W, app 120.000 W, storage 100.000 W, net 100.000 W (R² 1.000000 over 4 windows; states never occupied are reported at idle power)
per-state power model: predicted 480.000 J, measured 480.000 J, inaccuracy 0.0000%; EDP 1920 J·s; idle fraction 0.833
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	// Without a model the report says why and what to give.
	res := synthetic(false)
	res.Windows = nil
	b.Reset()
	if err := NewEnergy(res, nil).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "per-state powers: no model (fit state powers: no observations); give --params, or a shorter --window for more windows to fit\n") {
		t.Errorf("no model:\n%s", b.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestEnergyTextWriteError(t *testing.T) {
	if err := NewEnergy(synthetic(false), nil).WriteText(failWriter{}); err == nil || err.Error() != "disk full" {
		t.Fatalf("err = %v", err)
	}
}

func TestDecimate(t *testing.T) {
	mk := func(n int) []tracecast.PowerSample {
		s := make([]tracecast.PowerSample, n)
		for i := range s {
			s[i].T = float64(i)
		}
		return s
	}
	for _, c := range []struct {
		n, keep int
		want    []float64
	}{
		{n: 5, keep: 0, want: []float64{0, 1, 2, 3, 4}},
		{n: 5, keep: 5, want: []float64{0, 1, 2, 3, 4}},
		{n: 5, keep: 10, want: []float64{0, 1, 2, 3, 4}},
		{n: 10, keep: 5, want: []float64{0, 2, 4, 6, 8}},
		{n: 10, keep: 4, want: []float64{0, 3, 6, 9}}, // stride rounds up: never more than keep
		{n: 10, keep: 1, want: []float64{0}},
		{n: 0, keep: 3, want: []float64{}},
	} {
		got := Decimate(mk(c.n), c.keep)
		ts := make([]float64, len(got))
		for i, s := range got {
			ts[i] = s.T
		}
		if len(ts) != len(c.want) || (len(ts) > 0 && !equal(ts, c.want)) {
			t.Errorf("Decimate(%d samples, %d) = %v, want %v", c.n, c.keep, ts, c.want)
		}
	}
}

func equal(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out") // created by WriteFiles
	res := synthetic(true)
	series := map[string][]tracecast.PowerSample{"n0": {{T: 10, Node: "n0", Watts: 100}, {T: 11, Node: "n0", Watts: 120},
		{T: 12, Node: "n0", Watts: 140}, {T: 13, Node: "n0", Watts: 120}}}
	rep := NewEnergy(res, nil)
	meta := map[string]string{"trace": "run.trace", "window_s": "1"}
	if err := rep.WriteFiles(EnergyFiles{Dir: dir, Meta: meta, Series: series, PlotPoints: 2, Offset: 10}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"energy.png", "energy.svg", "power.png", "power.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if len(series["n0"]) != 2 {
		t.Errorf("series not decimated: %d samples", len(series["n0"]))
	}
	for f, want := range map[string]int{"energy.arrow": 4 * energy.NumClasses, "totals.arrow": energy.NumClasses} {
		af, err := os.Open(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		fr, err := ipc.NewFileReader(af)
		if err != nil {
			t.Fatal(err)
		}
		var rows int64
		for i := range fr.NumRecords() {
			rec, err := fr.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			rows += rec.NumRows()
		}
		md := fr.Schema().Metadata()
		if rows != int64(want) || md.FindKey("trace") < 0 || md.Values()[md.FindKey("trace")] != "run.trace" {
			t.Errorf("%s: %d rows (want %d), metadata %v", f, rows, want, md)
		}
		fr.Close()
		af.Close()
	}
	// model.json is the report's JSON, indented, with a final newline.
	b, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || !bytes.HasSuffix(b, []byte("}\n")) || !bytes.HasPrefix(b, []byte("{\n  \"nodes\": [")) {
		t.Fatalf("model.json: %v\n%s", err, b)
	}
	if m["source"] != "fit" || m["measured_j"] != 480.0 || m["fit"] == nil {
		t.Errorf("model.json: %s", b)
	}
}

// A window cut by a gap would weigh its few seconds like a whole one: the
// fit leaves it out.
func TestNewEnergyFitsCoveredWindowsOnly(t *testing.T) {
	res := synthetic(false)
	res.Windows = append(res.Windows, energy.NodeWindow{Node: "n0", Window: 4, Start: 4, End: 5, Covered: 0.5, EnergyJ: 1000})
	rep := NewEnergy(res, nil)
	if rep.Fit == nil || rep.Fit.Stats.N != 4 || rep.Powers == nil || math.Abs(rep.Powers.Idle-idleW) > 1e-9 || math.Abs(rep.Powers.App-appW) > 1e-9 {
		t.Fatalf("fit %+v, powers %+v", rep.Fit, rep.Powers)
	}
}

// The terminal says what the model could not say, and the join's
// warnings, instead of printing numbers that mean nothing.
func TestEnergyTextSaysWhy(t *testing.T) {
	res := synthetic(false)
	res.Warnings = []string{`no energy for node "n1": no power sample names node "n1"`}
	hot := models.StatePowers{Idle: 150, App: 160, Storage: 150, Net: 150}
	var b bytes.Buffer
	if err := NewEnergy(res, &hot).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"warning: no energy for node \"n1\": no power sample names node \"n1\"\n",
		"per-state power model: predicted 640.000 J, measured 480.000 J, inaccuracy 33.3333%; EDP 1920 J·s; idle fraction n/a (the idle power 150 W is above the run's mean power 120 W: the idle fraction would be 1.25, above 1)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
