package modelio

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/models"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadPowerSamples(t *testing.T) {
	for _, c := range []struct {
		name, csv string
		want      []models.PowerSample
		err       string
	}{
		{name: "any column order, percentages, comments",
			csv:  "F, Watts ,cpu\n# a comment\n2.79,150,100\n1.86,56,0.5\n",
			want: []models.PowerSample{{CPU: 1, F: 2.79, Watts: 150}, {CPU: 0.5, F: 1.86, Watts: 56}}},
		{name: "header only", csv: "cpu,f,watts\n", want: []models.PowerSample{}},
		{name: "missing column", csv: "cpu,f\n1,2\n", err: `s.csv:1: no "watts" column (header: cpu,f)`},
		{name: "bad number", csv: "cpu,f,watts\n1,2,3\n1,x,3\n", err: `s.csv:3: bad f "x"`},
		{name: "not finite", csv: "cpu,f,watts\n1,2,NaN\n", err: `s.csv:2: bad watts "NaN"`},
		{name: "short row", csv: "cpu,f,watts\n1,2\n", err: "s.csv:2: missing watts"},
		{name: "empty file", csv: "", err: "s.csv: empty file (want a header row: cpu,f,watts)"},
		{name: "column twice", csv: "cpu,f,watts,F\n1,2,3,4\n", err: `s.csv:1: two "f" columns`},
		{name: "negative cpu", csv: "cpu,f,watts\n-0.5,2,3\n", err: `s.csv:2: cpu "-0.5" is not a utilisation (0 to 1, or a percentage up to 100)`},
		{name: "cpu above 100%", csv: "cpu,f,watts\n500,2,3\n", err: `s.csv:2: cpu "500" is not a utilisation (0 to 1, or a percentage up to 100)`},
		{name: "negative frequency", csv: "cpu,f,watts\n1,-2,3\n", err: `s.csv:2: frequency "-2" is not positive`},
		{name: "negative power", csv: "cpu,f,watts\n1,2,-3\n", err: `s.csv:2: power "-3" is not positive`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadPowerSamples(write(t, "s.csv", c.csv))
			if c.err != "" {
				if err == nil || !strings.HasSuffix(err.Error(), c.err) {
					t.Fatalf("err = %v, want …%s", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	if _, err := ReadPowerSamples(filepath.Join(t.TempDir(), "none.csv")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadPoints(t *testing.T) {
	for _, c := range []struct {
		name, csv string
		want      []models.Point
		err       string
	}{
		{name: "other columns ignored", csv: "time,note,power,config\n100,x,50,1c\n55,,70,2c\n",
			want: []models.Point{{Config: "1c", Time: 100, Power: 50}, {Config: "2c", Time: 55, Power: 70}}},
		// A row too short for its config still has its numbers.
		{name: "short row, empty config", csv: "time,power,config\n1,2\n", want: []models.Point{{Time: 1, Power: 2}}},
		{name: "bad time", csv: "config,time,power\n1c,x,50\n", err: `p.csv:2: bad time "x"`},
		{name: "no power", csv: "config,time\n", err: `p.csv:1: no "power" column`},
		{name: "negative power", csv: "config,time,power\na,10,100\nb,8,-120\n", err: `p.csv:3: time and power must be positive (got 8 and -120)`},
		{name: "zero time", csv: "config,time,power\na,0,100\n", err: `p.csv:2: time and power must be positive`},
		{name: "time twice", csv: "config,time,power,time\na,1,100,5\n", err: `p.csv:1: two "time" columns`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadPoints(write(t, "p.csv", c.csv))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %s", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestWritePoints(t *testing.T) {
	pts := []models.Point{{Config: "1c, 2GHz", Time: 100.5, Power: 50}, {Config: "2c", Time: 1e-7, Power: 70.25}}
	var b strings.Builder
	if err := WritePoints(&b, pts); err != nil {
		t.Fatal(err)
	}
	if want := "config,time,power\n\"1c, 2GHz\",100.5,50\n2c,1e-07,70.25\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	back, err := ReadPoints(write(t, "p.csv", b.String()))
	if err != nil || !reflect.DeepEqual(back, pts) {
		t.Errorf("read back %+v, %v", back, err)
	}
}

// Srinivasan and Bellur (2014) Table 4, i5 760 row: the file written from the six inputs reads
// back and predicts the inputs.
func TestPowerModelFile(t *testing.T) {
	in := models.PowerInputs{FMin: 1.86, FMax: 2.79, PIdleFMin: 55.75, PIdleFMax: 56.28, PFullFMin: 107.25, PFullFMax: 149.72}
	mf, err := PowerModelFromInputs(in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(mf)
	back, err := ReadPowerModel(write(t, "m.json", string(b)))
	if err != nil || back.Model != PowerModelName || back.Inputs == nil || back.A != mf.A {
		t.Fatalf("%+v, %v", back, err)
	}
	measured := 150.0
	p, err := back.Prediction(1, 2.79, &measured)
	if err != nil || math.Abs(p["watts"]-149.72) > 1e-9 || math.Abs(p["error_pct"]-0.28/150*100) > 1e-9 || p["measured"] != 150 || len(p) != 5 {
		t.Errorf("prediction %v, %v", p, err)
	}
	if p, err := back.Prediction(0, 1.86, nil); err != nil || len(p) != 3 || math.Abs(p["watts"]-55.75) > 1e-9 {
		t.Errorf("idle at fmin: %v, %v", p, err)
	}
	if _, err := PowerModelFromInputs(models.PowerInputs{FMin: 2, FMax: 1}); err == nil {
		t.Error("fmin > fmax accepted")
	}
	for content, want := range map[string]string{
		`{"model": "x"}`: "not a power model (no fmax)",
		`{`:              "m.json: unexpected end of JSON input",
	} {
		if _, err := ReadPowerModel(write(t, "m.json", content)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %s", content, err, want)
		}
	}
}

// Least squares from samples of the i5 model recover it.
func TestFitPowerModel(t *testing.T) {
	m, err := models.DVFSFromInputs(models.PowerInputs{FMin: 1.86, FMax: 2.79, PIdleFMin: 55.75, PIdleFMax: 56.28, PFullFMin: 107.25, PFullFMax: 149.72})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("f,cpu,watts\n")
	for _, f := range []float64{1.86, 2.26, 2.79} {
		for _, c := range []float64{0, 0.5, 1} {
			b.WriteString(strings.Join([]string{ftoa(f), ftoa(c), ftoa(m.Predict(c, f))}, ",") + "\n")
		}
	}
	mf, err := FitPowerModel(write(t, "s.csv", b.String()), 0)
	if err != nil {
		t.Fatal(err)
	}
	if mf.Model != PowerModelName || mf.Fit == nil || mf.Inputs != nil || math.Abs(mf.A-m.A) > 1e-6 || math.Abs(mf.Alpha-m.Alpha) > 1e-6 {
		t.Errorf("fitted %+v, want %+v", mf, m)
	}
	if _, err := FitPowerModel(write(t, "s.csv", "f,cpu,watts\n2,1,100\n"), 0); err == nil {
		t.Error("one sample fitted")
	}
}

func ftoa(v float64) string { b, _ := json.Marshal(v); return string(b) }

// Generated by U = 0.43, θmin = 0.79, θmax = 0.73, CT¹max = 58 at x = 0.2.
func TestCTModelFile(t *testing.T) {
	in := models.CTInputs{FMin: 1.86, FMax: 2.79, X: 0.2, CTFullMin: 70.47, CTFullMax: 58, CTXMin: 293.1552, CTXMax: 227.36}
	mf, err := CTModelFromInputs(in)
	if err != nil {
		t.Fatal(err)
	}
	if mf.Model != CTModelName || math.Abs(mf.K-0.12) > 1e-9 {
		t.Fatalf("%+v", mf)
	}
	b, _ := json.Marshal(mf)
	back, err := ReadCTModel(write(t, "ct.json", string(b)))
	if err != nil {
		t.Fatal(err)
	}
	measured := 300.0
	p, err := back.Prediction(0.2, 1.86, &measured)
	if err != nil || math.Abs(p["completion_time"]-293.1552) > 1e-6 || math.Abs(p["theta"]-0.79) > 1e-9 || p["measured"] != 300 ||
		math.Abs(p["error_pct"]-models.ErrorPct(300, p["completion_time"])) > 1e-12 {
		t.Errorf("prediction %v", p)
	}
	if _, err := ReadCTModel(write(t, "ct.json", `{"fmax": 2}`)); err == nil || !strings.Contains(err.Error(), "not a completion-time model") {
		t.Errorf("err = %v", err)
	}
}

func TestReadStatePowers(t *testing.T) {
	want := models.StatePowers{Idle: 91.6, App: 125.2, Storage: 129, Net: 127.7}
	for name, content := range map[string]string{
		"p.yaml": "idle: 91.6\napp: 125.2\nstorage: 129.0\nnet: 127.7\n",
		"p.json": `{"idle": 91.6, "app": 125.2, "storage": 129, "net": 127.7}`,
	} {
		if got, err := ReadStatePowers(write(t, name, content)); err != nil || got != want {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	if _, err := ReadStatePowers(write(t, "p.yaml", "idle: [")); err == nil || !strings.Contains(err.Error(), "p.yaml: ") {
		t.Errorf("bad YAML: %v", err)
	}
	// One meaning: absolute powers. The increments given for the powers
	// (what the energy command's help once said) are refused, naming the
	// file and the fix, instead of predicting a negative energy.
	for _, c := range []struct {
		name, content, want string
	}{
		{"increments", `{"idle": 100, "app": 15, "net": 5}`, `p.json: implausible powers: app 15 W and net 5 W are below idle 100 W: app, storage and net are the node's whole power`},
		{"unknown key", `{"idle": 100, "compute": 115}`, `p.json: unknown key "compute"`},
		{"no idle", `{"app": 115}`, "p.json: no idle power"},
		{"empty", ``, "p.json: no idle power"},
		{"not a number", `{"idle": "lots"}`, "p.json: "},
	} {
		if _, err := ReadStatePowers(write(t, "p.json", c.content)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A state left out is at idle power.
	if got, err := ReadStatePowers(write(t, "p.yaml", "idle: 100\napp: 115\n")); err != nil || got != (models.StatePowers{Idle: 100, App: 115, Storage: 100, Net: 100}) {
		t.Errorf("partial: %+v, %v", got, err)
	}
}

func TestSpeedup(t *testing.T) {
	must := func(m map[string]float64, err error) map[string]float64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct {
		name string
		got  map[string]float64
		want map[string]float64
	}{
		{"idle fraction", must(Speedup(2, 0.5)), map[string]float64{"time_speedup": 2, "idle_fraction": 0.5, "energy_speedup": 1 / (0.5 + 0.25)}},
		{"energies", must(SpeedupFromEnergies(6, 300, 700)), map[string]float64{"time_speedup": 6, "idle_fraction": 0.3,
			"energy_speedup": 1000.0 / 750, "parallel_energy": 750}},
		{"all idle", must(Speedup(4, 1)), map[string]float64{"time_speedup": 4, "idle_fraction": 1, "energy_speedup": 4}},
	} {
		if len(c.got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
			continue
		}
		for k, v := range c.want {
			if math.Abs(c.got[k]-v) > 1e-12 {
				t.Errorf("%s: %s = %v, want %v", c.name, k, c.got[k], v)
			}
		}
	}
	// Inputs that make no speedup are refused, not printed as NaN.
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"NaN idle fraction", second(Speedup(2, nan)), "the idle fraction must be in [0, 1] (got NaN)"},
		{"idle fraction above 1", second(Speedup(2, 1.2)), "the idle fraction must be in [0, 1] (got 1.2)"},
		{"zero time speedup", second(Speedup(0, 0.5)), "the time speedup must be a positive number (got 0)"},
		{"infinite time speedup", second(Speedup(inf, 0.5)), "the time speedup must be a positive number (got +Inf)"},
		{"negative energy", second(SpeedupFromEnergies(2, -1, 10)), "must be finite, not negative and not both zero (got -1 J and 10 J)"},
		{"no energy", second(SpeedupFromEnergies(2, 0, 0)), "not both zero"},
		{"NaN energy", second(SpeedupFromEnergies(2, nan, 1)), "(got NaN J and 1 J)"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// Srinivasan and Bellur's (2014) models refuse what would make them predict a power or a
// completion time that is none: inputs that say a loaded CPU draws less
// than an idle one or that a task finishes sooner with less CPU, a
// least-squares fit with negative watts, a prediction that is not
// positive, a measurement eq. 10 cannot divide by.
func TestSeed001Refusals(t *testing.T) {
	i5 := models.PowerInputs{FMin: 1.86, FMax: 2.79, PIdleFMin: 55.75, PIdleFMax: 56.28, PFullFMin: 107.25, PFullFMax: 149.72}
	pm, err := PowerModelFromInputs(i5)
	if err != nil {
		t.Fatal(err)
	}
	ctIn := models.CTInputs{FMin: 1, FMax: 2, X: 0.2, CTFullMin: 10, CTFullMax: 6, CTXMin: 20, CTXMax: 12}
	ct, err := CTModelFromInputs(ctIn)
	if err != nil {
		t.Fatal(err)
	}
	measured0, measuredNeg := 0.0, -3.0
	fast := ctIn
	fast.CTXMin, fast.CTXMax = 8, 5 // faster at 20% CPU than at 100%
	swapped := i5
	swapped.PFullFMin = 30 // full load below idle at fmin
	var noisy strings.Builder
	noisy.WriteString("cpu,f,watts\n")
	for _, f := range []float64{1, 2} {
		for _, c := range []float64{0, 1} {
			noisy.WriteString(ftoa(c) + "," + ftoa(f) + "," + ftoa(60-50*c+5*f) + "\n") // power falls with load
		}
	}
	noisy.WriteString("0.5,1.5,42\n")
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"full below idle", second(PowerModelFromInputs(swapped)), "the power at 100% CPU and fmin (30 W) is below the idle power there (55.75 W)"},
		{"negative power input", second(PowerModelFromInputs(models.PowerInputs{FMin: 1, FMax: 2, PIdleFMin: -5, PIdleFMax: 10, PFullFMin: 20, PFullFMax: 30})), "powers must be positive"},
		{"fit: load lowers the power", second(FitPowerModel(write(t, "n.csv", noisy.String()), 0)), "implausible fit: at f = 1 it predicts 14.9 W at 100% CPU, below the idle 64.9 W"},
		{"power not positive far from the model's frequencies", second(PowerModelFile{PowerModel: models.PowerModel{FMax: 2, P0: 10, Alpha: 40, B: 5}}.Prediction(0, 0.5, nil)),
			"implausible prediction: -20 W at 0% CPU and f = 0.5: the model does not hold there"},
		{"a power model's prediction stands", second(pm.Prediction(0, 0.01, nil)), "<nil>"},
		{"measured power zero", second(pm.Prediction(1, 2.79, &measured0)), "the measured power must be a positive number (got 0)"},
		{"faster with less CPU", second(CTModelFromInputs(fast)), "at f = 1 the task took 8 at 20% CPU, less than the 10 it took at 100% (θ = -0.05 < 0)"},
		{"negative completion time", second(CTModelFile{CTModel: models.CTModel{FMin: 1, FMax: 2, U: 0.6667, ThetaMin: -0.05, ThetaMax: -0.0417, CTFullMax: 6}}.Prediction(0.01, 2, nil)),
			"implausible prediction: a completion time of -18.77 at 1% CPU and f = 2"},
		{"measured time negative", second(ct.Prediction(1, 2, &measuredNeg)), "the measured completion time must be a positive number (got -3)"},
	} {
		if c.want == "<nil>" {
			if c.err != nil {
				t.Errorf("%s: %v", c.name, c.err)
			}
			continue
		}
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %q", c.name, c.err, c.want)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	for _, p := range []string{"", path} {
		var b bytes.Buffer
		if err := WriteJSON(&b, p, map[string]int{"a": 1}); err != nil || b.String() != "{\n  \"a\": 1\n}\n" {
			t.Fatalf("%q %v", b.String(), err)
		}
	}
	if f, err := os.ReadFile(path); err != nil || string(f) != "{\n  \"a\": 1\n}\n" {
		t.Fatalf("%q %v", f, err)
	}
	if err := WriteJSON(io.Discard, filepath.Join(path, "x"), 1); err == nil {
		t.Error("a file under a file written")
	}
}
