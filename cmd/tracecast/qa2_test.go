package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictWindowStdoutMatchesRecords: predict --window prints on
// standard output the records -o DIR writes to records.jsonl, windows
// included (QA: stdout left the window records out).
func TestPredictWindowStdoutMatchesRecords(t *testing.T) {
	dir := t.TempDir()
	args := []string{"predict", "--window", "100", "--period", "1ms", demoTrace}
	r := run(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if w := run(t, nil, append(args, "-o", dir)...); w.code != 0 {
		t.Fatalf("-o: exit %d: %s", w.code, w.stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stripEmittedAt(r.stdout), stripEmittedAt(string(b)); got != want {
		t.Errorf("standard output (%d bytes) differs from records.jsonl (%d bytes)", len(got), len(want))
	}
	if n := countRecords(r.stdout, "window"); n == 0 {
		t.Errorf("no window record on standard output")
	}
}

// countRecords counts the JSON lines of s whose record is rec.
func countRecords(s, rec string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, `{"record":"`+rec+`"`) {
			n++
		}
	}
	return n
}

// TestForecastRunIDPipelineMatchesPredict: the forecast stage of a
// pipeline reading a file names the run as predict does on the same file
// (QA: "smpi/dynfarm-16.trace/…" against "smpi/dynfarm-16-<hash>/…").
func TestForecastRunIDPipelineMatchesPredict(t *testing.T) {
	dir := t.TempDir()
	trace := "../../testdata/smpi/ring-8.trace"
	yml := filepath.Join(dir, "f.yaml")
	pipeOut := filepath.Join(dir, "pipe.jsonl")
	os.WriteFile(yml, []byte(`version: 1
name: f
sources:
  trace: {type: file, path: `+trace+`, parser: {type: paje}}
stages:
  idle: {type: forecast, inputs: [trace], queries: ["idle>=25%"], horizons: [1ms], every: 1ms}
sinks:
  forecasts: {type: jsonl, inputs: [idle], records: forecasts, path: `+pipeOut+`}
`), 0o644)
	if r := run(t, nil, "run", "--no-progress", yml); r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	cli := filepath.Join(dir, "cli")
	if r := run(t, nil, "predict", trace, "--query", "idle>=25%", "--horizon", "1ms", "--every", "1ms", "-o", cli); r.code != 0 {
		t.Fatalf("predict: exit %d: %s", r.code, r.stderr)
	}
	a, _ := os.ReadFile(pipeOut)
	b, _ := os.ReadFile(filepath.Join(cli, "forecasts.jsonl"))
	ids := func(s []byte) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(string(s)), "\n") {
			var rec struct{ ID, Run string }
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			out = append(out, rec.Run+" "+rec.ID)
		}
		return out
	}
	pa, pb := ids(a), ids(b)
	if len(pa) == 0 || strings.Join(pa, "\n") != strings.Join(pb, "\n") {
		t.Fatalf("pipeline ids %d (first %q), predict ids %d (first %q)", len(pa), pa[0], len(pb), pb[0])
	}
	if !strings.HasPrefix(pa[0], "smpi/ring-8-") {
		t.Errorf("run id %q: want smpi/ring-8-HASH", pa[0])
	}
}

// TestPredictStdinMatchesFile: R is counted in a first pass over a file;
// on standard input it is --workers, required (QA: the first forecasts
// of standard input used R = 1, and auto learnt from them: 6755 of 6968
// forecasts differed). With it, standard input gives the file's records.
func TestPredictStdinMatchesFile(t *testing.T) {
	data, err := os.ReadFile(demoTrace)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"predict", "--horizon", "10ms", "--run-id", "r"}
	r := run(t, data, append(args, "-")...)
	if r.code != 2 || !strings.Contains(r.stderr, "--workers") {
		t.Errorf("standard input without --workers: exit %d, %s", r.code, r.stderr)
	}
	file := run(t, nil, append(args, demoTrace)...)
	stdin := run(t, data, append(args, "--workers", "2", "-")...)
	if file.code != 0 || stdin.code != 0 {
		t.Fatalf("exit %d, %d: %s %s", file.code, stdin.code, file.stderr, stdin.stderr)
	}
	if countRecords(file.stdout, "forecast") == 0 || file.stdout != stdin.stdout {
		t.Errorf("standard input with --workers 2 (%d forecasts) differs from the file (%d forecasts)",
			countRecords(stdin.stdout, "forecast"), countRecords(file.stdout, "forecast"))
	}
}

// TestPredictWorkersBelowCount: --workers below the containers a file
// selects cannot stay R (fractions would pass 1): R grows to the count,
// and the run says so rather than silently.
func TestPredictWorkersBelowCount(t *testing.T) {
	r := run(t, nil, "predict", "--horizon", "10ms", "--workers", "1", demoTrace)
	if r.code != 0 || !strings.Contains(r.stderr, "--workers 1, but the trace selects 2 containers: R grows to 2") ||
		!strings.Contains(r.stdout, `"workers":2,`) {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
	if r := run(t, nil, "predict", "--horizon", "10ms", "--workers", "2", demoTrace); r.code != 0 || strings.Contains(r.stderr, "selects") {
		t.Errorf("--workers 2 (the count): exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestVerifyRefusesGarbage: verify checks what it scores (QA: p = 7 gave
// mse_p 36, a negative horizon printed as -5e+09ns, a record with no field
// gave exit 0 and an empty table, forecasts of a StarPU trace were scored
// against an SMPI trace without a word).
func TestVerifyRefusesGarbage(t *testing.T) {
	dir := t.TempDir()
	if r := run(t, nil, "predict", demoTrace, "--horizon", "10ms", "-o", dir); r.code != 0 {
		t.Fatalf("predict: exit %d: %s", r.code, r.stderr)
	}
	fcs := filepath.Join(dir, "forecasts.jsonl")
	if r := run(t, nil, "verify", demoTrace, fcs); r.code != 0 || !strings.Contains(r.stdout, "idle>=25%") {
		t.Fatalf("verify its own forecasts: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(fcs)
	first := strings.SplitN(string(b), "\n", 2)[0]
	write := func(name, line string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(line+"\n"), 0o644)
		return p
	}
	for _, tc := range []struct{ name, line, want string }{
		{"p7.jsonl", strings.Replace(first, `"p":`, `"p":7,"x":`, 1), "p7.jsonl:1: p 7 is not in [0, 1]"},
		{"h.jsonl", strings.Replace(first, `"horizon":0.01`, `"horizon":-5`, 1), "h.jsonl:1: horizon -5 is not a positive number of seconds"},
		{"empty.jsonl", `{"record":"forecast"}`, "empty.jsonl:1: no id, run,"},
	} {
		if strings.Contains(tc.line, `"x":`) { // p replaced, the old value dropped
			i := strings.Index(tc.line, `"x":`)
			j := strings.Index(tc.line[i:], ",")
			tc.line = tc.line[:i-1] + tc.line[i+j:]
		}
		r := run(t, nil, "verify", demoTrace, write(tc.name, tc.line))
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %s; want %q", tc.name, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	// Another trace's forecasts are refused, naming both runs; --run
	// scores them anyway.
	ring := "../../testdata/smpi/ring-4.trace"
	r := run(t, nil, "verify", ring, fcs)
	if r.code != 1 || !strings.Contains(r.stderr, `forecasts of run "testdata/starpu-cholesky-2cpu-`) || !strings.Contains(r.stderr, "--run") || r.stdout != "" {
		t.Errorf("another trace's forecasts: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
	var rec struct{ Run string }
	json.Unmarshal([]byte(first), &rec)
	if r := run(t, nil, "verify", "--run", rec.Run, ring, fcs); r.code != 0 {
		t.Errorf("--run: exit %d, %s", r.code, r.stderr)
	}
	if r := run(t, nil, "verify", "--run", "nosuchrun", demoTrace, fcs); r.code != 1 || !strings.Contains(r.stderr, `no forecast of run "nosuchrun"`) {
		t.Errorf("--run nosuchrun: exit %d, %s", r.code, r.stderr)
	}
	// Forecasts of two runs in one file: one run at a time.
	two := write("two.jsonl", first+"\n"+strings.ReplaceAll(first, rec.Run, "other"))
	if r := run(t, nil, "verify", demoTrace, two); r.code != 1 || !strings.Contains(r.stderr, "forecasts of 2 runs") {
		t.Errorf("two runs: exit %d, %s", r.code, r.stderr)
	}
}

// TestReportNothingToCount: report on a trace with neither StarPU nor SMPI
// states says so as signal does (QA: it said "(rules starpu)" under
// --rules auto).
func TestReportNothingToCount(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.trace")
	os.WriteFile(empty, nil, 0o644)
	const want = `neither StarPU worker states ("Worker State" on "Worker" containers) nor SMPI rank states ("MPI_STATE" on "MPI" containers): nothing to count`
	sig := run(t, nil, "signal", empty, "-o", "-")
	rep := run(t, nil, "report", empty, "-o", filepath.Join(dir, "r.html"))
	for _, r := range []result{sig, rep} {
		if r.code != 1 || !strings.Contains(r.stderr, empty+": "+want) || strings.Contains(r.stderr, "rules starpu") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	}
}

// TestHelpAndRangeSlips: predict --help gives no --window default as
// --method's; the forecast example names itself; a clock offset out of
// range is a usage error, not a 300-digit time in a message.
func TestHelpAndRangeSlips(t *testing.T) {
	r := run(t, nil, "predict", "--help")
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "--method") && strings.Contains(l, `(default "matlab")`) {
			t.Errorf("predict --help: %s", strings.TrimSpace(l))
		}
	}
	b, err := os.ReadFile("../../examples/pipelines/forecast-smpi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "tracecast run examples/pipelines/forecast-smpi.yaml") {
		t.Errorf("forecast-smpi.yaml does not say how to run it")
	}
	power := "../../testdata/power/cholesky-2cpu.kwollect.json.gz"
	for _, args := range [][]string{
		{"tasks", "--power", power, "--offset", "1e300", demoTrace},
		{"tasks", "--power", power, "--offset", "-1e300", demoTrace},
		{"energy", "--trace", demoTrace, "--power", power, "--offset", "1e300"},
	} {
		r := run(t, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "offset") || strings.Contains(r.stderr, "000000000000000") {
			t.Errorf("%v: exit %d, %.300s", args, r.code, r.stderr)
		}
	}
}

// TestSynthConflictNamesFlags: two outputs of synth on one file are named
// by their flags (QA: "-o and -o both write z.trace" for -o z.trace --meta
// z.trace).
func TestSynthConflictNamesFlags(t *testing.T) {
	z := filepath.Join(t.TempDir(), "z.trace")
	for _, tc := range []struct {
		flag, want string
	}{{"--meta", "-o and --meta both write"}, {"--dot", "-o and --dot both write"}} {
		r := run(t, nil, "synth", "--tasks", "10", "--workers", "4", "-o", z, tc.flag, z)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, %s", tc.flag, r.code, r.stderr)
		}
	}
}
