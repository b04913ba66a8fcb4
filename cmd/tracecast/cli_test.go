package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/pajetest"
)

// gz writes data gzip-compressed to path.
func gz(t *testing.T, path string, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Durations take a unit wherever a command takes a length of time, and a
// plain number keeps the unit the flag always had (the trace's, seconds,
// milliseconds): both spellings give the same output.
func TestDurationsWithUnits(t *testing.T) {
	dir := t.TempDir()
	kw := "../../testdata/power/cholesky-2cpu.kwollect.json.gz"
	energy := []string{"energy", "--trace", demoTrace, "--power", kw}
	for _, tc := range []struct {
		name string
		args [][]string // the same command, spelled differently
	}{
		{"signal, StarPU (ms)", [][]string{
			{"signal", "--period", "1", demoTrace, "-o", "-"},
			{"signal", "--period", "1ms", demoTrace, "-o", "-"},
			{"signal", "--period", "0.001s", demoTrace, "-o", "-"}}},
		{"signal, SMPI (s)", [][]string{
			{"signal", "--period", "0.0001", "../../testdata/smpi/ring-8.trace", "-o", "-"},
			{"signal", "--period", "100us", "../../testdata/smpi/ring-8.trace", "-o", "-"}}},
		{"hitrate --min-period", [][]string{
			{"hitrate", "--min-period", "2", "--windows", "10,20", demoTrace},
			{"hitrate", "--min-period", "2ms", "--windows", "10,20", demoTrace}}},
		{"predict --window --period", [][]string{
			{"predict", "--window", "50", "--period", "2", demoTrace},
			{"predict", "--window", "50", "--period", "2000us", demoTrace}}},
		{"energy seconds", [][]string{
			append(energy, "--window", "0.1", "--max-gap", "0.1", "--offset", "1753114530"),
			append(energy, "--window", "100ms", "--max-gap", "100ms", "--offset", "1753114530s")}},
		{"synth milliseconds", [][]string{
			{"synth", "--tasks", "200", "--transfer-prob", "0.5", "--transfer-ms", "2", "--overhead-ms", "0.01", "-o", filepath.Join(dir, "a.trace")},
			{"synth", "--tasks", "200", "--transfer-prob", "0.5", "--transfer-ms", "2ms", "--overhead-ms", "10us", "-o", filepath.Join(dir, "b.trace")},
			{"synth", "--tasks", "200", "--transfer-prob", "0.5", "--transfer", "2ms", "--overhead", "10us", "-o", filepath.Join(dir, "c.trace")}}},
	} {
		var first string
		for i, args := range tc.args {
			r := run(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("%s %v: exit %d: %s", tc.name, args, r.code, r.stderr)
			}
			out := r.stdout
			if strings.HasPrefix(tc.name, "predict") {
				out = stripEmittedAt(out)
			}
			if i == 0 {
				first = out
			} else if out != first {
				t.Errorf("%s: %v prints something else than %v", tc.name, args, tc.args[0])
			}
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir, "a.trace"))
	b, _ := os.ReadFile(filepath.Join(dir, "b.trace"))
	c, _ := os.ReadFile(filepath.Join(dir, "c.trace"))
	if len(a) == 0 || !bytes.Equal(a, b) || !bytes.Equal(a, c) {
		t.Errorf("synth: --transfer-ms 2ms --overhead-ms 10us, or --transfer 2ms --overhead 10us, wrote another trace than 2 and 0.01")
	}
	// The reorder horizon: the trace with a sample 5 ms late is read with a
	// 10 ms horizon, refused with 1 ms, whatever the spelling.
	late := filepath.Join(dir, "late.trace")
	os.WriteFile(late, pajetest.LateSample(t, gziptest.ReadFile(t, demoTrace)), 0o644)
	for _, tc := range []struct {
		horizon string
		code    int
	}{{"10ms", 0}, {"10", 0}, {"0.01s", 0}, {"1ms", 1}, {"1", 1}, {"3s", 0}, {"later", 2}} {
		if r := run(t, nil, "states", "--reorder-horizon", tc.horizon, late); r.code != tc.code {
			t.Errorf("--reorder-horizon %s: exit %d, want %d: %.200s", tc.horizon, r.code, tc.code, r.stderr)
		}
	}
	// A length that is not one is a usage error naming the flag.
	for _, args := range [][]string{{"signal", "--period", "fast", demoTrace, "-o", "-"}, append(energy, "--window", "1 s")} {
		if r := run(t, nil, args...); r.code != 2 || !strings.Contains(r.stderr, "is not a duration") {
			t.Errorf("%v: exit %d, %s", args, r.code, r.stderr)
		}
	}
}

// TestDurationHelp: the help prints lengths of time with their unit — the
// defaults too ("default 5s", not "default 5") —; synth's renamed
// --transfer and --overhead keep their old -ms names as deprecated aliases.
func TestDurationHelp(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"energy", "--help"}, []string{"--max-gap duration", "(default 5s)", "--window duration", "(default 1s)"}, []string{"(default 5)", "(default 1)"}},
		{[]string{"tasks", "--help"}, []string{"(default 5s)"}, []string{"(default 5)"}},
		{[]string{"synth", "--help"}, []string{"--transfer duration", "(default 1ms)", "--overhead duration", "(default 1us)"}, []string{"transfer-ms", "overhead-ms"}},
		{[]string{"components", "energy"}, []string{"max_gap", "duration", "default 5s", "default 1s"}, []string{"number    default 5"}},
	} {
		r := run(t, nil, tc.args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, r.code, r.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: no %q in\n%s", tc.args, w, r.stdout)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(r.stdout, n) {
				t.Errorf("%v: %q in\n%s", tc.args, n, r.stdout)
			}
		}
	}
	r := run(t, nil, "synth", "--tasks", "20", "--transfer-ms", "2", "-o", filepath.Join(t.TempDir(), "x.trace"))
	if r.code != 0 || !strings.Contains(r.stderr, "--transfer-ms has been deprecated, use --transfer") {
		t.Errorf("deprecated alias: exit %d, %s", r.code, r.stderr)
	}
}

// stripEmittedAt drops the wall-clock time records carry.
func stripEmittedAt(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.Index(l, `"emitted_at":"`); i >= 0 {
			j := strings.Index(l[i+14:], `"`)
			l = l[:i] + l[i+14+j+1:]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// The signal of a 7 s StarPU run, without --period: at most 100 000
// samples (not 10 M, 280 MB of CSV), and the log says which period and why.
// A given period keeps the old ceiling.
func TestSignalDefaultPeriod(t *testing.T) {
	r := run(t, nil, "--log-format", "json", "signal", demoTrace, "-o", "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if n := strings.Count(r.stdout, "\n"); n < 90_000 || n > 100_001 {
		t.Errorf("%d lines of CSV, want at most 100 000 samples", n)
	}
	for _, want := range []string{`"message":"signal"`, `"samples":100000`, `"period":0.069`, `would make more than 100000 samples`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("log lacks %s:\n%s", want, r.stderr)
		}
	}
	out := filepath.Join(t.TempDir(), "s.arrow")
	if r := run(t, nil, "signal", "--period", "10us", demoTrace, "-o", out); r.code != 0 { // 697 k samples
		t.Errorf("--period 10us: exit %d: %s", r.code, r.stderr)
	}
	if r := run(t, nil, "signal", "--period", "10us", "--max-samples", "1000", demoTrace, "-o", out); r.code != 1 || !strings.Contains(r.stderr, "more than the 1000 allowed") {
		t.Errorf("--period 10us --max-samples 1000: exit %d: %s", r.code, r.stderr)
	}
}

// Every reader takes gzip input: the same command on a compressed copy
// of each input prints the same.
func TestGzipInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		return p
	}
	points := write("p.csv", "config,time,power\n1c,100,50\n2c,55,70\n4c,30,100\n")
	samples := write("s.csv", "cpu,f,watts\n0,1.86,55.75\n1,1.86,107.25\n0,2.79,56.28\n1,2.79,149.72\n0.5,2.79,100\n")
	params := write("p.yaml", "idle: 91.6\napp: 125.2\nstorage: 129.0\nnet: 127.7\n")
	model := filepath.Join(dir, "m.json")
	if r := run(t, nil, "powermodel", "fit", "--samples", samples, "-o", model); r.code != 0 {
		t.Fatal(r.stderr)
	}
	bench := filepath.Join(dir, "bench.json")
	if r := run(t, nil, "iobench", "--dir", dir, "--profile", ioFixture, "-o", bench, "--min-calls", "2", "--max-calls", "4", "--reps", "1", "--max-gap", "1us"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	train := filepath.Join(dir, "model")
	for i, n := range []string{"1000", "1200", "1400"} {
		run(t, nil, "synth", "--tasks", n, "--seed", n, "-o", filepath.Join(dir, "t"+strconv.Itoa(i)+".trace.gz"))
	}
	if r := run(t, nil, "train", "--meta-dir", dir, "-o", train, "--windows", "500:5000:500", "--max-samples", "100000", "--plots=false", "--degree", "2"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	wm := filepath.Join(train, "window-model.json")
	meta := filepath.Join(dir, "t0.meta.json")
	zipped := func(p string) string { // in dir, beside the other inputs
		b, _ := os.ReadFile(p)
		return gz(t, filepath.Join(dir, filepath.Base(p)+".gz"), b)
	}
	for _, tc := range []struct {
		name string
		args func(in string) []string
		in   string
	}{
		{"pareto", func(in string) []string { return []string{"pareto", in} }, points},
		{"powermodel fit --samples", func(in string) []string { return []string{"powermodel", "fit", "--samples", in} }, samples},
		{"powermodel predict --model", func(in string) []string {
			return []string{"powermodel", "predict", "--model", in, "--cpu", "0.5", "--freq", "2"}
		}, model},
		{"energy --params", func(in string) []string {
			return []string{"energy", "--trace", demoTrace, "--power", "../../testdata/power/cholesky-2cpu.rapl.csv.gz", "--params", in}
		}, params},
		{"iopredict --ref", func(in string) []string {
			return []string{"iopredict", "--profile", ioFixture, "--ref", in, "--target", bench}
		}, bench},
		{"iocalls", func(in string) []string { return []string{"iocalls", in} }, ioFixture},
		{"predict --model", func(in string) []string {
			return []string{"predict", "--model", in, "--max-samples", "100000", filepath.Join(dir, "t1.trace.gz")}
		}, wm},
		{"train META.json", func(in string) []string {
			return []string{"train", "-o", filepath.Join(dir, "m2"), "--windows", "500:5000:500", "--max-samples", "100000", "--plots=false", "--degree", "1", in}
		}, meta},
	} {
		plain := run(t, nil, tc.args(tc.in)...)
		zr := run(t, nil, tc.args(zipped(tc.in))...)
		if plain.code != 0 || zr.code != 0 || stripEmittedAt(plain.stdout) != stripEmittedAt(zr.stdout) {
			t.Errorf("%s: exit %d and %d (gzip): %s", tc.name, plain.code, zr.code, zr.stderr)
		}
	}
}

// The built-in pipelines run from any directory: the trace they read by
// default is the one built into the binary when the repository's copy is
// not there.
func TestBuiltinPipelineAnywhere(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"replay-starpu", "idle-starpu"} {
		cmd := exec.Command(binary, "run", "--no-progress", name)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s from %s: %v\n%s", name, dir, err, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "replay-starpu", "entities.jsonl"))
	if n := strings.Count(string(b), "\n"); err != nil || n != 41_156 {
		t.Errorf("replay-starpu wrote %d records (%v), want the demo trace's 41156", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "idle-starpu", "predictions.arrow")); err != nil {
		t.Error(err)
	}
	// A file of that name in the directory is read, as always.
	os.MkdirAll(filepath.Join(dir, "pipelines", "testdata"), 0o755)
	gz(t, filepath.Join(dir, "pipelines", "testdata", "starpu-cholesky-2cpu.trace.gz"), []byte("%EventDef PajeDefineContainerType 1\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"))
	cmd := exec.Command(binary, "run", "--no-progress", "replay-starpu")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out", "replay-starpu", "entities.jsonl")); strings.Count(string(b), "\n") != 1 {
		t.Errorf("the local trace was not read: %d records", strings.Count(string(b), "\n"))
	}
}

// --help says what a command does in plain words: no references to the
// papers' sections, equations or seeds.
func TestHelpInPlainWords(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		texts := []string{c.Short, c.Long}
		c.Flags().VisitAll(func(f *pflag.Flag) { texts = append(texts, f.Usage) })
		for _, s := range texts {
			for _, jargon := range []string{"seed 00", "§", "Table I", "eq. ", "Δ", "poly44"} {
				if strings.Contains(s, jargon) {
					t.Errorf("%s: %q in %q", c.CommandPath(), jargon, s)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}

// TestOutputInPlainWords: what the commands print — the components' list,
// energy's model line, errors — says what things do, without "seed 004";
// and help for a topic that does not exist is a usage error.
func TestOutputInPlainWords(t *testing.T) {
	trace := filepath.Join("..", "..", "pipelines", "testdata", "starpu-cholesky-2cpu.trace.gz")
	stdin := gziptest.ReadFile(t, trace)
	for _, tc := range []struct {
		args  []string
		stdin []byte
		code  int
	}{
		{[]string{"components"}, nil, 0},
		{[]string{"components", "predict"}, nil, 0},
		{[]string{"energy", "--trace", trace, "--power", filepath.Join("..", "..", "testdata", "power", "cholesky-2cpu.rapl.csv.gz")}, nil, 0},
		{[]string{"signal", "-", "-o", "-"}, stdin, 1},
		{[]string{"help", "nosuch"}, nil, 2},
	} {
		r := run(t, tc.stdin, tc.args...)
		if r.code != tc.code {
			t.Errorf("%v: exit %d, want %d: %.300s", tc.args, r.code, tc.code, r.stderr)
		}
		for _, out := range []string{r.stdout, r.stderr} {
			for _, jargon := range []string{"seed 00", "§", "Table I"} {
				if i := strings.Index(out, jargon); i >= 0 {
					t.Errorf("%v: %q in %q", tc.args, jargon, out[max(0, i-80):min(len(out), i+80)])
				}
			}
		}
	}
	if r := run(t, nil, "help", "nosuch"); !strings.Contains(r.stderr, "nosuch") {
		t.Errorf("help nosuch: %q", r.stderr)
	}
}

// run --memory-limit and energy --max-samples reach the runtime and the
// stage: a bad size is a usage error, too few samples a failure saying so.
func TestMemoryFlags(t *testing.T) {
	if r := run(t, nil, "run", "--memory-limit", "12x", "../../examples/pipelines/states-smpi.yaml"); r.code != 2 || !strings.Contains(r.stderr, "--memory-limit") {
		t.Errorf("run --memory-limit 12x: exit %d: %s", r.code, r.stderr)
	}
	r := run(t, nil, "energy", "--trace", "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "--power", "../../testdata/power/cholesky-2cpu.rapl.csv.gz", "--max-samples", "10")
	if r.code != 1 || !strings.Contains(r.stderr, "more than 10 power samples") {
		t.Errorf("energy --max-samples 10: exit %d: %s", r.code, r.stderr)
	}
}
