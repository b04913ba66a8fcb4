package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/pajetest"
)

// TestIOLimits: the strace reader's limits are flags; past one, a line is
// an error naming it (exit 1), or skipped and counted with --lenient.
func TestIOLimits(t *testing.T) {
	var b strings.Builder
	for pid := 1; pid <= 3; pid++ {
		fmt.Fprintf(&b, "[pid %d] 10:00:00.0 read(3</d/f>, \"x\", 1) = 1 <0.1>\n", pid)
	}
	log := filepath.Join(t.TempDir(), "pids.strace")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "iocalls", "--max-pids", "2", log)
	if r.code != 1 || !strings.Contains(r.stderr, log+":3: more than 2 processes (raise --max-pids)") {
		t.Errorf("strict: exit %d: %s", r.code, r.stderr)
	}
	r = run(t, nil, "iocalls", "--max-pids", "2", "--lenient", log)
	if r.code != 0 || strings.Count(r.stdout, "\n") != 3 || !strings.Contains(r.stderr, `"limit":1`) {
		t.Errorf("lenient: exit %d: %s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "iotime", "--max-open-calls", "1", log); r.code != 0 {
		t.Errorf("--max-open-calls 1: exit %d: %s", r.code, r.stderr)
	}
}

// TestLimitsMustBePositive: a limit of 0 or less is a usage error (exit
// 2) naming it, on every command and in pipeline files (also 2: bad
// configuration is a usage error; 78 before); before, it
// was silently replaced by its default, or meant no limit at all.
func TestLimitsMustBePositive(t *testing.T) {
	trace := "../../testdata/smpi/ring-8.trace"
	for _, args := range [][]string{
		{"states", "--max-line-bytes", "0", trace},
		{"states", "--max-containers", "-1", trace},
		{"states", "--max-open-states", "0", trace},
		{"states", "--max-buffered", "0", trace},
		{"states", "--max-types", "0", trace},
		{"signal", "--max-types", "0", trace, "-o", "-"},
		{"hitrate", "--max-line-bytes", "0", trace},
		{"predict", "--max-open-states", "-1", trace},
		{"tasks", "--max-containers", "0", trace},
		{"report", "--max-buffered", "0", trace, "-o", filepath.Join(t.TempDir(), "r.html")},
		{"signal", "--max-samples", "0", trace, "-o", "-"},
		{"hitrate", "--max-samples", "-5", trace},
		{"iocalls", "--max-pids", "0", ioFixture},
		{"iotime", "--max-open-calls", "-1", ioFixture},
		{"iocalls", "--max-fds", "0", ioFixture},
		{"energy", "--trace", "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "--power", "../../testdata/power/cholesky-2cpu.watts.csv.gz", "--max-gap", "0"},
	} {
		r := run(t, nil, args...)
		flag := strings.TrimPrefix(args[1], "--")
		if args[0] == "energy" {
			flag = "max-gap"
		}
		key := strings.ReplaceAll(flag, "-", "_")
		if r.code != 2 || !strings.Contains(r.stderr, flag) && !strings.Contains(r.stderr, key) {
			t.Errorf("%v: exit %d, want 2 naming %s: %s", args, r.code, flag, r.stderr)
		}
	}
	dir := t.TempDir()
	for _, opt := range []string{"max_containers: 0", "max_line_bytes: -1", "max_streams: 0"} {
		p := filepath.Join(dir, "p.yaml")
		yaml := "version: 1\nname: p\nsources:\n  trace:\n    type: file\n    path: " + trace + "\n    parser: {type: paje, " + opt + "}\n" +
			"sinks:\n  out: {type: jsonl, inputs: [trace], path: " + filepath.Join(dir, "o.jsonl") + "}\n"
		if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		key, _, _ := strings.Cut(opt, ":")
		if r := run(t, nil, "validate", p); r.code != 2 || !strings.Contains(r.stderr, key+": must be positive") {
			t.Errorf("validate %s: exit %d: %s", opt, r.code, r.stderr)
		}
	}
}

// TestBOMAndOverflow: a BOM at the start of a trace or log is skipped; a
// variable of 1e39 (beyond a C float, as pj_dump reads it) is an error
// naming its line, or a counted skip with --lenient — never a null in the
// output.
func TestBOMAndOverflow(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../testdata/smpi/ring-8.trace")
	if err != nil {
		t.Fatal(err)
	}
	bom := filepath.Join(dir, "bom.trace")
	os.WriteFile(bom, append([]byte("\ufeff"), data...), 0o644)
	want := run(t, nil, "states", "../../testdata/smpi/ring-8.trace")
	if r := run(t, nil, "states", bom); r.code != 0 || r.stdout != want.stdout {
		t.Errorf("states with a BOM: exit %d: %s", r.code, r.stderr)
	}
	if r := run(t, nil, "signal", bom, "-o", "-"); r.code != 0 {
		t.Errorf("signal with a BOM: exit %d: %s", r.code, r.stderr)
	}
	log, err := os.ReadFile(ioFixture)
	if err != nil {
		t.Fatal(err)
	}
	bomLog := filepath.Join(dir, "bom.strace")
	os.WriteFile(bomLog, append([]byte("\ufeff"), log...), 0o644)
	if r, want := run(t, nil, "iocalls", bomLog), run(t, nil, "iocalls", ioFixture); r.code != 0 || r.stdout != want.stdout {
		t.Errorf("iocalls with a BOM: exit %d: %s", r.code, r.stderr)
	}

	trace := pajetest.Header(pajetest.ContainerType(0), pajetest.VariableType(1), pajetest.CreateContainer(2), pajetest.SetVariable(3).ContainerFirst()) + `0 N 0 Node
1 V N Power
2 0 n N 0 n0
3 1 n V 100
3 2 n V 1e39
3 3 n V 120
`
	p := filepath.Join(dir, "var.trace")
	os.WriteFile(p, []byte(trace), 0o644)
	r := run(t, nil, "states", "--format", "jsonl", p)
	if r.code != 1 || !strings.Contains(r.stderr, p+":28: variable value '1e39' out of range") {
		t.Errorf("strict: exit %d: %s", r.code, r.stderr)
	}
	r = run(t, nil, "states", "--format", "jsonl", "--lenient", p)
	if r.code != 0 || !strings.Contains(r.stderr, "1  bad number") || !strings.Contains(r.stdout, `"number":120`) {
		t.Errorf("lenient: exit %d: %s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, `"nature":"Variable"`) && strings.Contains(l, `"number":null`) {
			t.Errorf("a null variable: %s", l)
		}
	}
}

// TestOutputsNeverDestroyInputs: an output that is an input (by its real
// path) or another output is refused before anything is opened: exit 2
// for a command's -o and for a pipeline file, by validate too. Before,
// the input was truncated and the run exited 0.
func TestOutputsNeverDestroyInputs(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../testdata/smpi/ring-8.trace")
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.trace")
	csv := filepath.Join(dir, "in.csv")
	log := filepath.Join(dir, "in.strace")
	logData, _ := os.ReadFile(ioFixture)
	for p, d := range map[string][]byte{in: data, csv: data, log: logData} {
		if err := os.WriteFile(p, d, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(in, filepath.Join(dir, "link.trace"))
	for _, args := range [][]string{
		{"states", "-o", in, filepath.Join(dir, "link.trace")},
		{"states", "--format", "csv", "-o", filepath.Join(dir, "x", "..", "in.trace"), in},
		{"signal", csv, "-o", csv},
		{"iocalls", "-o", log, log},
	} {
		r := run(t, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "it would destroy its input") {
			t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	for p, d := range map[string][]byte{in: data, csv: data, log: logData} {
		if got, _ := os.ReadFile(p); string(got) != string(d) {
			t.Errorf("%s was changed", p)
		}
	}
	yaml := filepath.Join(dir, "p.yaml")
	os.WriteFile(yaml, []byte("version: 1\nname: p\nsources:\n  trace: {type: file, path: "+in+", parser: {type: paje}}\n"+
		"sinks:\n  a: {type: jsonl, inputs: [trace], path: "+dir+"/o.jsonl}\n  b: {type: jsonl, inputs: [trace], path: "+dir+"/./o.jsonl}\n"), 0o644)
	for _, cmd := range []string{"validate", "run"} {
		if r := run(t, nil, cmd, yaml); r.code != 2 || !strings.Contains(r.stderr, "would overwrite the other") {
			t.Errorf("%s: exit %d: %s", cmd, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "o.jsonl")); err == nil {
		t.Error("o.jsonl was created")
	}
}

// TestEveryOutputFlagSparesInputs: every command with -o refuses, before
// anything is opened (exit 2, the input intact), an output that is one of
// its inputs by real path — a file, or a file it writes in its -o DIR.
// report T -o T and iobench --profile P -o P overwrote their input and
// exited 0.
func TestEveryOutputFlagSparesInputs(t *testing.T) {
	dir := t.TempDir()
	copyTo := func(src, dst string) string {
		t.Helper()
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	trace := copyTo("../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", filepath.Join(dir, "t.trace.gz"))
	pw := copyTo("../../testdata/power/cholesky-2cpu.rapl.csv.gz", filepath.Join(dir, "p.csv.gz"))
	prof := copyTo(ioFixture, filepath.Join(dir, "app.strace"))
	out := filepath.Join(dir, "out")
	// Inputs where a -o DIR command writes its files.
	pwInOut := copyTo(pw, filepath.Join(out, "power.svg"))
	traceInOut := copyTo(trace, filepath.Join(out, "forecasts.jsonl"))
	winInOut := copyTo(trace, filepath.Join(out, "predictions.arrow"))
	samples := filepath.Join(dir, "samples.csv")
	if err := os.WriteFile(samples, []byte("cpu,f,watts\n0,1,50\n1,1,90\n0,2,60\n1,2,120\n0.5,1.5,80\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := []string{trace, pw, prof, pwInOut, traceInOut, winInOut, samples}
	before := map[string][]byte{}
	for _, p := range inputs {
		before[p], _ = os.ReadFile(p)
	}
	os.Symlink(trace, filepath.Join(dir, "link.trace.gz"))
	for _, args := range [][]string{
		{"report", trace, "-o", trace},
		{"report", trace, "-o", filepath.Join(dir, "link.trace.gz")},
		{"report", trace, "--power", pw, "-o", pw},
		{"iobench", "--dir", dir, "--profile", prof, "-o", prof},
		{"energy", "--trace", trace, "--power", pwInOut, "--power-format", "rapl", "-o", out},
		{"energy", "--trace", trace, "--power", pw, "-o", trace},
		{"predict", traceInOut, "-o", out},
		{"predict", "--window", "50", "--period", "2", winInOut, "-o", out},
		{"powermodel", "fit", "--samples", samples, "-o", samples},
	} {
		r := run(t, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "it would destroy its input") {
			t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	for _, p := range inputs {
		if got, _ := os.ReadFile(p); string(got) != string(before[p]) {
			t.Errorf("%s was changed", p)
		}
	}
	// Outputs that collide with each other.
	for _, args := range [][]string{
		{"synth", "--tasks", "20", "--workers", "2", "-o", filepath.Join(dir, "s.trace"), "--meta", filepath.Join(dir, "s.trace")},
	} {
		if r := run(t, nil, args...); r.code != 2 || !strings.Contains(r.stderr, "would overwrite the other") {
			t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	// Elsewhere they run.
	if r := run(t, nil, "report", trace, "-o", filepath.Join(dir, "r.html")); r.code != 0 {
		t.Errorf("report: exit %d: %s", r.code, r.stderr)
	}
}

// TestReaderLimitsOnEveryCommand: the commands that read a trace take the
// reader's limits and --lenient as states does. A 2 MB line: states
// --lenient skipped it, but signal, hitrate, predict, tasks and report
// failed in the file source (exit 1) and had no --max-line-bytes.
func TestReaderLimitsOnEveryCommand(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "long.trace")
	var b strings.Builder
	b.WriteString(pajetest.Header(pajetest.ContainerType(0), pajetest.StateType(1), pajetest.CreateContainer(2), pajetest.SetState(4)) + `0 P 0 "Program"
0 W P "Worker"
1 WS W "Worker State"
2 0 p P 0 "prog"
2 0 w0 W p "w0"
2 0 w1 W p "w1"
4 0 WS w0 Idle
4 0 WS w1 GEMM
`)
	fmt.Fprintf(&b, "4 1 WS w0 %s\n", strings.Repeat("x", 2<<20))
	b.WriteString("4 2 WS w0 GEMM\n4 3 WS w1 Idle\n4 4 WS w0 Idle\n")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(dir, "r.html")
	for _, args := range [][]string{
		{"signal", "--period", "0.5", "-o", "-"},
		{"hitrate", "--period", "0.5"},
		{"predict", "--every", "1ms"},
		{"tasks"},
		{"report", "-o", html},
	} {
		r := run(t, nil, append(append([]string{}, args...), trace)...)
		if r.code != 1 || !strings.Contains(r.stderr, "long.trace:32: line longer than 1048576 bytes (raise --max-line-bytes)") {
			t.Errorf("%v: exit %d, want 1 naming line 32: %s", args, r.code, r.stderr)
		}
		r = run(t, nil, append(append([]string{args[0], "--lenient"}, args[1:]...), trace)...)
		if r.code != 0 || !strings.Contains(r.stderr, `"line too long":1`) {
			t.Errorf("%v --lenient: exit %d, want 0 with the line skipped: %s", args, r.code, r.stderr)
		}
		if args[0] == "signal" {
			r = run(t, nil, "signal", "--max-line-bytes", "4000000", "--period", "0.5", "-o", "-", trace)
			if r.code != 0 || !strings.Contains(r.stdout, "k,t,x") {
				t.Errorf("signal --max-line-bytes 4000000: exit %d: %s", r.code, r.stderr)
			}
		}
	}
}
