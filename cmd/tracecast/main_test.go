package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var binary string

// TestMain builds the tracecast binary once: these tests drive it the way a
// user does, through arguments, exit codes, stdout and stderr.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tracecast-cli")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "tracecast")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

func sortedLines(s string) []string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	sort.Strings(l)
	return l
}

func TestStatesMatchesGolden(t *testing.T) {
	for _, name := range []string{"ring-8", "farm-16", "stencil-16"} {
		trace := "../../testdata/smpi/" + name + ".trace"
		r := run(t, nil, "states", trace)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		golden, err := os.ReadFile("../../testdata/smpi/" + name + ".pjdump")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(sortedLines(r.stdout), "\n"), strings.Join(sortedLines(string(golden)), "\n"); got != want {
			t.Errorf("%s: output differs from pj_dump's", name)
		}
	}
}

func TestStatesStdinGzip(t *testing.T) {
	data, err := os.ReadFile("../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz")
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, data, "states", "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if n := strings.Count(r.stdout, "\n"); n != 41148 {
		t.Fatalf("%d lines, want pj_dump's 41148", n)
	}
}

func TestStatesFormats(t *testing.T) {
	trace := "../../testdata/smpi/ring-4.trace"
	r := run(t, nil, "states", "--format", "csv", trace)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "nature,container,type,start,end,duration,imbrication,value,") {
		t.Fatalf("csv: exit %d, %.100q", r.code, r.stdout)
	}
	r = run(t, nil, "states", "--format", "jsonl", trace)
	if r.code != 0 || !strings.HasPrefix(r.stdout, `{"record":"entity","nature":"State","container":"rank-0"`) {
		t.Fatalf("jsonl: exit %d, %.100q", r.code, r.stdout)
	}
	out := filepath.Join(t.TempDir(), "ring.arrow")
	r = run(t, nil, "states", "--format", "arrow", "-o", out, trace)
	if st, err := os.Stat(out); r.code != 0 || err != nil || st.Size() < 1000 {
		t.Fatalf("arrow: exit %d, %v: %s", r.code, err, r.stderr)
	}
	if r := run(t, nil, "states", "--format", "xml", trace); r.code != 2 {
		t.Fatalf("unknown format: exit %d, want 2", r.code)
	}
}

func TestStatesErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("../../testdata/smpi/ring-4.trace")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(good), "\n")
	bad := append(append([]string{}, lines[:200]...), "12 0.5 2 1") // a PushState with a field missing
	bad = append(bad, lines[200:]...)
	path := filepath.Join(dir, "bad.trace")
	os.WriteFile(path, []byte(strings.Join(bad, "\n")), 0o644)

	r := run(t, nil, "states", path)
	if r.code != 1 || !strings.Contains(r.stderr, path+":201: event 12 (PajePushState) has 3 fields") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, nil, "states", "--lenient", path)
	if r.code != 0 || !strings.Contains(r.stderr, "skipped 1 bad lines") || !strings.Contains(r.stderr, "field count") {
		t.Fatalf("lenient: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := run(t, nil, "states", filepath.Join(dir, "missing.trace")); r.code != 1 || !strings.Contains(r.stderr, "no such file") {
		t.Fatalf("missing file: exit %d, %q", r.code, r.stderr)
	}
	bin := filepath.Join(dir, "binary.trace")
	os.WriteFile(bin, []byte("\x7fELF\x02\x01\x01\x00\x00\x00garbage\n"), 0o644)
	if r := run(t, nil, "states", bin); r.code != 1 || !strings.Contains(r.stderr, bin+":1: binary data") {
		t.Fatalf("binary: exit %d, %q", r.code, r.stderr)
	}
}

func TestValidateAndRun(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nname: x\nsources:\n  a: {type: file, pth: x}\nsinks:\n  b: {type: jsonl, inputs: [a], path: \"-\"}\n"), 0o644)
	if r := run(t, nil, "validate", bad); r.code != 2 || !strings.Contains(r.stderr, bad+`:4: sources.a.pth: unknown key "pth"`) {
		t.Fatalf("validate: exit %d, %q", r.code, r.stderr)
	}
	out := filepath.Join(dir, "out.jsonl")
	r := run(t, nil, "run", "--no-progress", "--log-format", "json", "--set", "trace.path=../../testdata/smpi/farm-4.trace",
		"--set", "trace.parser.time_unit=s", "--set", "records.path="+out,
		"--set", "archive.path="+filepath.Join(dir, "a.arrow"), "--set", "live.path="+filepath.Join(dir, "a.arrows"), "replay-starpu")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	data, _ := os.ReadFile(out)
	if n := strings.Count(string(data), "\n"); n != 125 {
		t.Fatalf("run wrote %d records, want 125 (pj_dump's count)", n)
	}
}

func TestDemo(t *testing.T) {
	dir := t.TempDir()
	r := run(t, nil, "demo", "--out", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "2 workers") || !strings.Contains(r.stdout, "GEMM") {
		t.Fatalf("demo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The product first: the forecasts' skill against the three
	// baselines and the forecast policy's backfilling value; the KS
	// windows after them.
	for _, want := range []string{"vs KS windows", "vs persistence", "vs climatology", "the forecast policy 0.", "KS windows (Pallipuram et al. 2014):"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo summary lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Index(r.stdout, "vs persistence") > strings.Index(r.stdout, "KS windows (") {
		t.Errorf("the KS windows come before the forecasts:\n%s", r.stdout)
	}
	for _, f := range []string{"replay-starpu/entities.arrow", "replay-starpu/entities.arrows", "replay-starpu/entities.jsonl",
		"idle-starpu/windows.arrow", "idle-starpu/predictions.arrow", "idle-starpu/verdicts.arrow", "idle-starpu/alerts.arrow", "idle-starpu/records.jsonl",
		"backfill/values.jsonl", "backfill/decisions.jsonl"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Exit codes: a wrong number of arguments or an unknown command is a usage
// error (2), like a bad flag.
func TestUsageExitCodes(t *testing.T) {
	for _, args := range [][]string{{"predict"}, {"verify", "a"}, {"states", "a", "b"}, {"nosuchcommand"}, {"predict", "--nosuchflag", "x"}} {
		if r := run(t, nil, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
	}
}

// --version names the build: module version and VCS revision.
func TestVersion(t *testing.T) {
	r := run(t, nil, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "tracecast version ") || !strings.Contains(r.stdout, "go1.") {
		t.Fatalf("exit %d: %q", r.code, r.stdout)
	}
}

// demo writes the HTML report too, and says where.
func TestDemoWritesReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	r := run(t, nil, "demo", "--out", out, "--no-progress")
	page := filepath.Join(out, "report.html")
	if r.code != 0 || !strings.Contains(r.stdout, page) {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), `<canvas id="gantt"`) || !strings.Contains(string(b), "Forecast skill") {
		t.Fatalf("report: %v, %d bytes", err, len(b))
	}
}
