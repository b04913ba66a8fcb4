package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ioFixture = "../../testdata/iocall/dd_tt_y.strace"

func TestIOCallsFormats(t *testing.T) {
	r := run(t, nil, "iocalls", ioFixture)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "time,pid,op,path,fd,offset,requested,bytes,duration,err,flags\n") {
		t.Fatalf("csv: %d %s %s", r.code, r.stderr, r.stdout[:min(200, len(r.stdout))])
	}
	csvPath := filepath.Join(t.TempDir(), "calls.csv")
	if err := os.WriteFile(csvPath, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	j := run(t, nil, "iocalls", "--format", "jsonl", csvPath)
	lines := strings.Split(strings.TrimSpace(j.stdout), "\n")
	if j.code != 0 || len(lines) != strings.Count(r.stdout, "\n")-1 {
		t.Fatalf("jsonl from csv: %d %s, %d lines", j.code, j.stderr, len(lines))
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first["op"] != "openat" {
		t.Fatalf("%v %v", err, first)
	}
	// the iotime breakdown is the same from strace and from its CSV
	a := run(t, nil, "iotime", ioFixture)
	b := run(t, nil, "iotime", csvPath)
	if a.code != 0 || a.stdout != b.stdout || !strings.Contains(a.stdout, `"read/4K-64K/seq"`) {
		t.Fatalf("iotime: %d %s\n%s\n%s", a.code, a.stderr, a.stdout, b.stdout)
	}
}

// TestIOCallsJSONL: iocalls --format jsonl writes the tracecast.iocall/1
// records — "record" first, null for what is unknown or does not apply,
// paths as they are — which read back as input into the same CSV.
func TestIOCallsJSONL(t *testing.T) {
	dir := t.TempDir()
	strace := filepath.Join(dir, "amp.strace")
	if err := os.WriteFile(strace, []byte(`7 10:00:00.000001 openat(AT_FDCWD, "/tmp/a&b>c", O_RDONLY) = 3</tmp/a&b>c> <0.000010>
7 10:00:00.000030 close(3</tmp/a&b>c>) = 0 <0.000001>
`), 0o644); err != nil {
		t.Fatal(err)
	}
	j := run(t, nil, "iocalls", "--format", "jsonl", strace)
	want := `{"record":"iocall","time":36000.000001,"pid":7,"op":"openat","path":"/tmp/a&b>c","fd":3,"offset":null,"requested":null,"bytes":null,"duration":0.00001,"err":null,"flags":null}
{"record":"iocall","time":36000.00003,"pid":7,"op":"close","path":"/tmp/a&b>c","fd":3,"offset":null,"requested":null,"bytes":null,"duration":0.000001,"err":null,"flags":null}
`
	if j.code != 0 || j.stdout != want {
		t.Fatalf("exit %d %s\n%s\nwant\n%s", j.code, j.stderr, j.stdout, want)
	}
	// Read back: the same calls as from the strace log.
	for _, in := range []string{ioFixture, strace} {
		c := run(t, nil, "iocalls", in)
		jsonl := filepath.Join(dir, "calls.jsonl")
		if err := os.WriteFile(jsonl, []byte(run(t, nil, "iocalls", "--format", "jsonl", in).stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		back := run(t, nil, "iocalls", jsonl)
		if c.code != 0 || back.code != 0 || back.stdout != c.stdout {
			t.Errorf("%s: CSV from the JSON lines differs (exit %d, %s)", in, back.code, back.stderr)
		}
	}
}

func TestIOErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.strace")
	os.WriteFile(bad, []byte("1 10:00:00.0 close(3) = 0 <0.1>\nnot strace\n"), 0o644)
	r := run(t, nil, "iotime", bad)
	if r.code != 1 || !strings.Contains(r.stderr, bad+":2: not a system call line") {
		t.Fatalf("strict: %d %s", r.code, r.stderr)
	}
	r = run(t, nil, "iotime", "--lenient", bad)
	if r.code != 0 {
		t.Fatalf("lenient: %d %s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"iocalls", "--format", "xml", ioFixture},
		{"iotime", "--buckets", "64K,4K", ioFixture},
		{"iobench", "--dir", t.TempDir()},
		{"iobench", "--dir", "/nonexistent", "--profile", ioFixture, "-o", "x.json"},
		{"iopredict", "--profile", ioFixture},
		{"iopredict", "--profile", ioFixture, "--ref", "a", "--target", "b", "--stat", "mode"},
	} {
		if r := run(t, nil, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
}

// TestIOBenchPredict runs iobench twice on the fixture's profile (two
// directories) and iopredict with --actual, as a user would.
func TestIOBenchPredict(t *testing.T) {
	dir := t.TempDir()
	ref, tgt := filepath.Join(dir, "ref.json"), filepath.Join(dir, "tgt.json")
	for _, out := range []string{ref, tgt} {
		r := run(t, nil, "iobench", "--dir", t.TempDir(), "--profile", ioFixture, "-o", out, "--min-calls", "4", "--max-calls", "16", "--reps", "1", "--max-gap", "100us")
		if r.code != 0 {
			t.Fatalf("iobench: %d %s", r.code, r.stderr)
		}
	}
	var bench map[string]any
	data, _ := os.ReadFile(ref)
	if err := json.Unmarshal(data, &bench); err != nil || bench["schema"] != "tracecast.iobench/v1" {
		t.Fatalf("%v %s", err, data)
	}
	for _, ov := range []string{"0", "auto", "calibrated", "3us"} {
		r := run(t, nil, "iopredict", "--profile", ioFixture, "--ref", ref, "--target", tgt, "--actual", ioFixture, "--overhead", ov)
		var p struct {
			Schema    string   `json:"schema"`
			RefTotal  float64  `json:"ref_total_s"`
			Predicted float64  `json:"predicted_total_s"`
			Actual    *float64 `json:"actual_total_s"`
			ErrorPct  *float64 `json:"error_pct"`
		}
		if r.code != 0 {
			t.Fatalf("iopredict: %d %s", r.code, r.stderr)
		}
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || p.Schema != "tracecast.iopredict/v1" || p.Actual == nil || p.ErrorPct == nil || p.Predicted <= 0 {
			t.Fatalf("%v %s", err, r.stdout)
		}
		if *p.Actual != p.RefTotal {
			t.Fatalf("actual = profile: %v vs %v", *p.Actual, p.RefTotal)
		}
	}
}

// TestIOCommandsQuiet: the pipeline a command reads its profile with says
// nothing of itself: no lifecycle lines on a clean run, the parser's
// warning alone in lenient mode, and a failure printed once, as the
// parser words it.
func TestIOCommandsQuiet(t *testing.T) {
	clean := run(t, nil, "iotime", ioFixture)
	if clean.code != 0 || clean.stderr != "" {
		t.Fatalf("clean run: %d %q", clean.code, clean.stderr)
	}
	data, err := os.ReadFile(ioFixture)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, append([]byte("not strace\n"), data...), "iotime", "--lenient", "-")
	if r.code != 0 || r.stdout != clean.stdout || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, `"message":"skipped bad lines"`) || !strings.Contains(r.stderr, `"file":"stdin"`) {
		t.Fatalf("lenient from stdin: %d %q", r.code, r.stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.strace")
	os.WriteFile(bad, []byte("1 10:00:00.0 close(3) = 0 <0.1>\nnot strace\n"), 0o644)
	if r := run(t, nil, "iocalls", bad); r.code != 1 || r.stderr != "tracecast: "+bad+":2: not a system call line: \"not strace\"\n" {
		t.Fatalf("strict: %d %q", r.code, r.stderr)
	}
}
