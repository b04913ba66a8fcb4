package specs

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/internal/duckdbtest"
	"github.com/tracecast/tracecast/internal/lineerr"
	"github.com/tracecast/tracecast/models/iobench"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/study"
)

const (
	starpu = "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"
	ring   = "../../testdata/smpi/ring-4.trace"
	strace = "../../testdata/iocall/dd_tt_y.strace"
	rapl   = "../../testdata/power/cholesky-2cpu.rapl.csv.gz"
)

var (
	ctx = context.Background()
	r   = Runner{Log: zerolog.Nop()}
	sig = Signal{Rules: "auto", Class: "idle", MaxSamples: 10_000_000}
)

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.trace")
	data, _ := os.ReadFile(ring)
	os.WriteFile(bad, append(data, "12 0.5 2 1\n"...), 0o644)
	for _, tc := range []struct {
		name  string
		trace Trace
		s     Signal
		check func(error) bool
	}{
		{"bad option", Trace{Path: ring}, Signal{Rules: "auto", Class: "nope", MaxSamples: 1}, func(err error) bool {
			var oe *OptionError
			return errors.As(err, &oe) && strings.HasPrefix(err.Error(), "class: ")
		}},
		{"bad line", Trace{Path: bad}, sig, func(err error) bool {
			var le *lineerr.Error
			return errors.As(err, &le) && strings.HasPrefix(err.Error(), bad+":")
		}},
		{"missing file", Trace{Path: filepath.Join(dir, "missing")}, sig, func(err error) bool {
			var pe *fs.PathError
			return errors.As(err, &pe) && err == error(pe)
		}},
	} {
		if _, err := r.Containers(ctx, tc.trace, tc.s); err == nil || !tc.check(err) {
			t.Errorf("%s: %T %v", tc.name, err, err)
		}
	}
	if (Trace{Path: "-"}).Name() != "<stdin>" || (Trace{Path: ring}).Name() != ring {
		t.Error("trace names")
	}
}

func TestSignalAndHitrates(t *testing.T) {
	dir := t.TempDir()
	for _, out := range []string{"s.csv", "s.arrow"} {
		if err := r.SignalFile(ctx, Trace{Path: starpu}, Signal{Rules: "auto", Class: "idle", Period: tracecast.TraceUnits(1), MaxSamples: 1e7}, filepath.Join(dir, out)); err != nil {
			t.Fatal(err)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "s.csv"))
	arrow, _ := os.ReadFile(filepath.Join(dir, "s.arrow"))
	if lines := strings.Count(string(csv), "\n"); lines != 6969 || !strings.HasPrefix(string(arrow), "ARROW1") {
		t.Errorf("csv %d lines, arrow %.6q", lines, arrow)
	}
	if R, err := r.Containers(ctx, Trace{Path: starpu}, sig); err != nil || R != 2 {
		t.Errorf("R %d %v", R, err)
	}
	h := &study.Hitrates{Trace: "t", Windows: []int{10, 100}, Method: ks.Matlab, Alpha: 0.05}
	if err := r.Hitrates(ctx, Trace{Path: starpu}, Signal{Rules: "auto", Class: "idle", Period: tracecast.TraceUnits(1), MaxSamples: 1e7}, h); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := h.WriteResults(&b, false); err != nil || strings.Count(b.String(), "\n") != 2 || !strings.Contains(b.String(), `"samples":6968`) {
		t.Errorf("%v\n%s", err, b.String())
	}
}

func TestWindows(t *testing.T) {
	dir := t.TempDir()
	o := Windows{Signal: Signal{Rules: "auto", Class: "idle", Period: tracecast.TraceUnits(1), MaxSamples: 1e7}, Window: 100, Queries: []string{"idle>=50%"},
		Method: "matlab", Alpha: 0.05, IdleThreshold: 0.8, RegimeMisses: 3}
	res, err := r.Windows(ctx, Trace{Path: starpu}, o, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Windows) != 69 || len(res.Predictions) != 69 || res.Meta["period"] != "1" || !strings.HasSuffix(res.Predictions[0].ID, "/w1/idle>=50%") {
		t.Errorf("%d windows, %d predictions, %v", len(res.Windows), len(res.Predictions), res.Meta)
	}
	for _, f := range []string{"windows.arrow", "predictions.arrow", "verdicts.arrow", "alerts.arrow", "records.jsonl"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	var oe *OptionError
	if _, err := r.Windows(ctx, Trace{Path: starpu}, Windows{Signal: o.Signal}, "", ""); !errors.As(err, &oe) {
		t.Errorf("no window: %v", err)
	}
}

func TestForecasts(t *testing.T) {
	dir := t.TempDir()
	o := Forecasts{Rules: "auto", Queries: []string{"idle>=25%"}, Horizons: []string{"100ms"}, Method: "auto", Coverage: 0.9,
		Threshold: 0.8, RegimeAlpha: 0.01, Out: dir, Format: "jsonl", Score: true}
	run, err := r.Forecast(ctx, Trace{Path: starpu}, o)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Scored || len(run.Scores) != 1 || len(run.Kept.Forecasts) == 0 || !strings.HasPrefix(run.RunID, "testdata/starpu-cholesky-2cpu-") {
		t.Errorf("scored %v, %d scores, %d forecasts, run %s", run.Scored, len(run.Scores), len(run.Kept.Forecasts), run.RunID)
	}
	for _, f := range []string{"forecasts.jsonl", "outcomes.jsonl", "episodes.jsonl", "skills.jsonl", "scores.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// Default horizons from the run's span; kept for a summary.
	o.Horizons, o.Out, o.Format, o.Score, o.Terminal = nil, "", "", false, true
	if run, err = r.Forecast(ctx, Trace{Path: starpu}, o); err != nil || len(run.Scores) != 3 {
		t.Errorf("%v, %d scores", err, len(run.Scores))
	}
	steps, err := r.Steps(ctx, Trace{Path: ring}, "auto", "idle", 0, true)
	if err != nil || steps.R[0] != 4 {
		t.Errorf("steps %v", err)
	}
	if _, err := r.Page(ctx, Trace{Path: ring}, "auto", nil, ReportPower{}); err != nil {
		t.Error(err)
	}
	var oe *OptionError
	if _, err := r.Page(ctx, Trace{Path: ring}, "nope", nil, ReportPower{}); !errors.As(err, &oe) {
		t.Errorf("bad rules: %v", err)
	}
}

func TestEnergy(t *testing.T) {
	o := DefaultEnergy()
	o.Trace, o.Power, o.Node, o.Window, o.Series = starpu, rapl, "node0", 0.1, true
	rep, c, err := r.Energy(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Nodes) != 1 || rep.Measured < 865 || rep.Measured > 866 || len(c.Series["node0"]) == 0 {
		t.Errorf("%+v", rep)
	}
	for _, tc := range []struct {
		name string
		edit func(*Energy)
		msg  string
	}{
		{"rules", func(o *Energy) { o.Rules = "x" }, `unknown --rules "x" (starpu, smpi)`},
		{"unit", func(o *Energy) { o.TimeUnit = "h" }, `unknown --time-unit "h"`},
		{"window", func(o *Energy) { o.Window = -1 }, "--window, --max-gap and --lateness must not be negative"},
		{"map", func(o *Energy) { o.Map = []string{"CPU0"} }, `--map "CPU0": want CONTAINER=NODE`},
		{"format", func(o *Energy) { o.PowerFormat = "x" }, "x"},
	} {
		bad := o
		tc.edit(&bad)
		var oe *OptionError
		if _, _, err := r.Energy(ctx, bad); !errors.As(err, &oe) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestProfiles(t *testing.T) {
	p := Profile{Path: strace, MaxPIDs: 10, MaxOpenCalls: 10, MaxFDs: 10, Buckets: "4K,64K,1M"}
	n := 0
	if err := r.Calls(ctx, "iocalls", p, func(*tracecast.IOCall) error { n++; return nil }); err != nil || n == 0 {
		t.Fatalf("%d calls, %v", n, err)
	}
	s, err := r.Summary(ctx, "iotime", p)
	if err != nil || s.Total.Calls == 0 || s.Total.Calls > int64(n) {
		t.Errorf("summary of %d calls (%v), read %d", s.Total.Calls, err, n)
	}
	var oe *OptionError
	for _, bad := range []Profile{{Path: strace, Format: "xml", MaxPIDs: 1, MaxOpenCalls: 1, MaxFDs: 1, Buckets: "4K"}, {Path: strace, Buckets: "x"}} {
		if _, err := r.Summary(ctx, "iotime", bad); !errors.As(err, &oe) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

func TestIOFlows(t *testing.T) {
	dir := t.TempDir()
	p := Profile{Path: strace, MaxPIDs: 100, MaxOpenCalls: 100, MaxFDs: 100, Buckets: "4K,64K,1M"}
	for _, format := range []string{"csv", "jsonl"} {
		out := filepath.Join(dir, "calls."+format)
		if err := r.WriteCalls(ctx, p, format, out); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(out); strings.Count(string(b), "\n") < 100 {
			t.Errorf("%s: %d bytes", format, len(b))
		}
	}
	var oe *OptionError
	if err := r.WriteCalls(ctx, p, "xml", filepath.Join(dir, "x")); !errors.As(err, &oe) {
		t.Errorf("xml: %v", err)
	}
	o := iobench.DefaultOptions()
	o.Dir, o.MinCalls, o.MaxCalls, o.Reps, o.MaxGap = dir, 2, 4, 1, time.Microsecond
	bench := filepath.Join(dir, "bench.json")
	if err := r.Bench(ctx, p, o, bench); err != nil {
		t.Fatal(err)
	}
	o.Dir = filepath.Join(dir, "missing")
	if err := r.Bench(ctx, p, o, bench); !errors.As(err, &oe) {
		t.Errorf("missing dir: %v", err)
	}
	pred, err := r.IOPredict(ctx, p, bench, bench, strace, iobench.PredictOptions{})
	if err != nil || pred.ErrorPct == nil || len(pred.Categories) == 0 {
		t.Fatalf("%v %+v", err, pred)
	}
	if _, err := r.IOPredict(ctx, p, filepath.Join(dir, "calls.csv"), bench, "", iobench.PredictOptions{}); err == nil {
		t.Error("a CSV read as a benchmark")
	}
}

func TestVerifyAndReport(t *testing.T) {
	dir := t.TempDir()
	o := Forecasts{Rules: "auto", Queries: []string{"idle>=25%"}, Horizons: []string{"10ms"}, Method: "persistence", Coverage: 0.9, Out: dir}
	if _, err := r.Forecast(ctx, Trace{Path: ring}, o); err != nil {
		t.Fatal(err)
	}
	scores, err := r.Verify(ctx, Trace{Path: ring}, "auto", 0, filepath.Join(dir, "forecasts.jsonl"), "")
	if err != nil || len(scores) != 1 || scores[0].N == 0 {
		t.Fatalf("%v %+v", err, scores)
	}
	var oe *OptionError
	for _, bad := range []Forecasts{{Format: "xml"}, {Format: "arrow"}, {Score: true}} {
		if _, err := r.Forecast(ctx, Trace{Path: "-"}, bad); !errors.As(err, &oe) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	page := filepath.Join(dir, "sub", "report.html")
	if err := r.WriteReport(ctx, Trace{Path: ring}, "auto", []string{"1ms"}, ReportPower{}, page); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(page); !strings.Contains(string(b), "<html") {
		t.Errorf("report: %.100q", b)
	}
	if err := r.WriteReport(ctx, Trace{Path: ring}, "auto", []string{"1"}, ReportPower{}, page); !errors.As(err, &oe) || !strings.HasPrefix(err.Error(), "--horizon: ") {
		t.Errorf("horizon without unit: %v", err)
	}
}

func TestForecastReport(t *testing.T) {
	scores := []fc.Score{{Query: "idle>=25%", Horizon: 0.01, N: 3}}
	for _, tc := range []struct {
		name     string
		run      ForecastRun
		out, err string
	}{
		{"records written", ForecastRun{}, "", ""},
		{"summary", ForecastRun{Keep: true, Scored: true, Scores: scores, RunID: "r", Method: "auto"}, "0 forecasts of run r (method auto), scored", ""},
		{"summary from standard input", ForecastRun{Keep: true, RunID: "stdin", Method: "auto"}, "score them with: tracecast verify", ""},
		{"verify", ForecastRun{Score: true, Scored: true, Scores: scores}, "", "idle>=25%"},
	} {
		var out, errw strings.Builder
		if err := tc.run.Report(&out, &errw); err != nil {
			t.Fatal(err)
		}
		if (tc.out == "") != (out.Len() == 0) || !strings.Contains(out.String(), tc.out) || (tc.err == "") != (errw.Len() == 0) || !strings.Contains(errw.String(), tc.err) {
			t.Errorf("%s: out %q, err %q", tc.name, out.String(), errw.String())
		}
	}
}

func TestOutputOptions(t *testing.T) {
	var oe *OptionError
	for _, out := range []string{"", "s.txt"} {
		if err := r.SignalFile(ctx, Trace{Path: ring}, sig, out); !errors.As(err, &oe) {
			t.Errorf("signal -o %q: %v", out, err)
		}
	}
	if err := r.WriteReport(ctx, Trace{Path: ring}, "auto", nil, ReportPower{}, ""); !errors.As(err, &oe) {
		t.Errorf("report without -o: %v", err)
	}
}

// states --format parquet: DuckDB's GROUP BY of the state durations equals
// the sums over the same run's JSON lines.
func TestStatesParquet(t *testing.T) {
	dir := t.TempDir()
	pq, jl := filepath.Join(dir, "e.parquet"), filepath.Join(dir, "e.jsonl")
	for _, o := range []States{{Trace: starpu, Format: "parquet", Out: pq}, {Trace: starpu, Format: "jsonl", Out: jl}} {
		o.Parser = paje.DefaultParserConfig()
		if _, err := r.States(ctx, o); err != nil {
			t.Fatal(o.Format, err)
		}
	}
	if _, err := r.States(ctx, States{Trace: starpu, Format: "parquet", Out: "-", Parser: paje.DefaultParserConfig()}); err == nil {
		t.Error("parquet on standard output accepted")
	}
	want := map[string]float64{}
	data, err := os.ReadFile(jl)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Nature, Type, Value string
			Duration            float64
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if e.Nature == "State" && e.Type == "Worker State" {
			want[e.Value] += e.Duration
		}
	}
	res := duckdbtest.Query(t, "SELECT value, sum(duration) FROM "+duckdbtest.Quote(pq)+
		" WHERE nature = 'State' AND type = 'Worker State' GROUP BY value ORDER BY value")
	if len(res[0].Rows) != len(want) || len(want) == 0 {
		t.Fatalf("%d state values from DuckDB, %d from the JSON lines", len(res[0].Rows), len(want))
	}
	for _, row := range res[0].Rows {
		v, _ := row[0].(string)
		got, _ := duckdbtest.Float(row[1])
		if w := want[v]; math.Abs(got-w) > 1e-9*math.Max(1, w) {
			t.Errorf("%s: DuckDB %v, JSON lines %v", v, got, w)
		}
	}
}

// Forecasts of a class other than idle are scored against that class's
// step function (they were scored against idle's: a compute>=1 persistence
// forecast on a StarPU run had MSE 0.95 while the persistence baseline at
// the same times had 0.01). A persistence forecast is the persistence
// baseline: their MSEs are equal.
func TestScoresOfTheQueriedClass(t *testing.T) {
	for _, tr := range []string{starpu, ring} {
		for _, q := range []string{"compute>=1", "comm>=1", "idle>=50%"} {
			dir := t.TempDir()
			o := Forecasts{Rules: "auto", Queries: []string{q}, Horizons: []string{"10ms"}, Method: "persistence", Coverage: 0.9, Out: dir, Score: true}
			run, err := r.Forecast(ctx, Trace{Path: tr}, o)
			if err != nil {
				t.Fatal(err)
			}
			scores, err := r.Verify(ctx, Trace{Path: tr}, "auto", 0, filepath.Join(dir, "forecasts.jsonl"), "")
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range [][]fc.Score{run.Scores, scores} {
				if len(s) != 1 || s[0].N == 0 || math.Abs(s[0].MSEP-s[0].MSEPersistence) > 1e-12 {
					t.Errorf("%s %s: persistence forecasts scored %+v, want MSE = the persistence baseline's", tr, q, s)
				}
			}
		}
	}
}

// A horizon longer than the run leaves nothing to score: a warning says so
// (the score table was empty, without a word).
func TestWarnsWhenNothingScored(t *testing.T) {
	var log strings.Builder
	// The pipeline logs from several goroutines.
	rl := Runner{Log: zerolog.New(zerolog.SyncWriter(&log))}
	dir := t.TempDir()
	o := Forecasts{Rules: "auto", Queries: []string{"idle>=25%"}, Horizons: []string{"1h", "10ms"}, Method: "persistence", Coverage: 0.9, Out: dir, Score: true}
	run, err := rl.Forecast(ctx, Trace{Path: ring}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Scores) != 1 || strings.Count(log.String(), "no forecast scored") != 1 || !strings.Contains(log.String(), `"horizon":"3600s"`) {
		t.Errorf("%d scores, log %s", len(run.Scores), log.String())
	}
	log.Reset()
	if _, err := rl.Verify(ctx, Trace{Path: ring}, "auto", 0, filepath.Join(dir, "forecasts.jsonl"), ""); err != nil || strings.Count(log.String(), "no forecast scored") != 1 {
		t.Errorf("verify: %v, log %s", err, log.String())
	}
}
