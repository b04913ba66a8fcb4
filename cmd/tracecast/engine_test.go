package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const demoTrace = "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"

func TestKSCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("0\n1\n1\n2\n2\n2\n"), 0o644)
	os.WriteFile(b, []byte("# comment\n5\n6\n5\n6\n5\n6\n"), 0o644)
	for _, m := range []string{"matlab", "scipy", "r"} {
		r := run(t, nil, "ks", "--method", m, a, b)
		var out struct {
			N1, N2 int
			D, P   float64
			Reject bool
			Method string
			DNum   int64 `json:"d_num"`
			DDen   int64 `json:"d_den"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
			t.Fatalf("%s: exit %d %q %q", m, r.code, r.stdout, r.stderr)
		}
		if out.N1 != 6 || out.N2 != 6 || out.D != 1 || out.DNum != 36 || !out.Reject || out.Method != m {
			t.Errorf("%s: %+v", m, out)
		}
	}
	os.WriteFile(b, []byte("1\nx\n"), 0o644)
	if r := run(t, nil, "ks", a, b); r.code != 1 || !strings.Contains(r.stderr, b+":2: want a non-negative integer") {
		t.Fatalf("bad sample: exit %d %q", r.code, r.stderr)
	}
}

func TestSignalCommand(t *testing.T) {
	r := run(t, nil, "signal", "--period", "1", "-o", "-", demoTrace)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || lines[0] != "k,t,x" || len(lines) != 6969 {
		t.Fatalf("exit %d, %d lines, first %q: %s", r.code, len(lines), lines[0], r.stderr)
	}
	if !strings.Contains(r.stderr, `"samples":6968`) {
		t.Errorf("the log does not say how many samples: %s", r.stderr)
	}
	out := filepath.Join(t.TempDir(), "s.arrow")
	if r := run(t, nil, "signal", "--class", "compute", "-o", out, "../../testdata/smpi/stencil-8.trace"); r.code != 0 {
		t.Fatalf("smpi: exit %d %s", r.code, r.stderr)
	}
	if r := run(t, nil, "signal", "--rules", "starpu", "-o", "-", "../../testdata/smpi/stencil-8.trace"); r.code != 1 ||
		!strings.Contains(r.stderr, `no "Worker State" states`) {
		t.Fatalf("wrong rules: exit %d %s", r.code, r.stderr)
	}
}

func TestHitrateCommand(t *testing.T) {
	// 5000 samples: one window of the 6968, nothing compared.
	r := run(t, nil, "hitrate", "--period", "1", "--windows", "100,500,5000", demoTrace)
	type row struct {
		Window, Samples, Compared, Hits int
		HitRate                         *float64 `json:"hit_rate"`
	}
	var rows []row
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	for _, l := range lines {
		var row row
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("%q: %v (%s)", l, err, r.stderr)
		}
		rows = append(rows, row)
	}
	if len(rows) != 3 || rows[0].Samples != 6968 || rows[0].Compared != 68 || rows[1].Compared != 12 || rows[2].Compared != 0 {
		t.Fatalf("%+v", rows)
	}
	for _, row := range rows[:2] {
		if row.HitRate == nil || *row.HitRate != float64(row.Hits)/float64(row.Compared) {
			t.Errorf("%+v", row)
		}
	}
	// A hit-rate over zero comparisons is null, not 0.
	if rows[2].HitRate != nil || !strings.Contains(lines[2], `"hit_rate":null`) {
		t.Errorf("nothing compared: %s", lines[2])
	}
}

// records reads JSON lines into maps.
func records(t *testing.T, path string) []map[string]any {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestPipelineMatchesCommand runs the shipped idle-starpu pipeline and the
// predict command with the same settings: same predictions, verdicts and
// alerts, same ids.
func TestPipelineMatchesCommand(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "records.jsonl")
	sets := []string{"--set", "trace.path=" + demoTrace, "--set", "records.path=" + jsonl}
	for _, s := range []string{"windows", "predictions", "verdicts", "alerts"} {
		sets = append(sets, "--set", s+".path="+filepath.Join(dir, s+".arrow"))
	}
	if r := run(t, nil, append([]string{"run", "--no-progress", "idle-starpu"}, sets...)...); r.code != 0 {
		t.Fatalf("run: exit %d %s", r.code, r.stderr)
	}
	cmdOut := filepath.Join(dir, "cmd")
	if r := run(t, nil, "predict", "--rules", "starpu", "--period", "1", "--window", "100", "--query", "idle>=50%",
		"--query", "idle>=100%", "--query", "compute>=100%", "-o", cmdOut, demoTrace); r.code != 0 {
		t.Fatalf("predict: exit %d %s", r.code, r.stderr)
	}
	ids := func(recs []map[string]any, field string) []string {
		var s []string
		for _, m := range recs {
			if id, ok := m["id"].(string); ok && m[field] != nil {
				s = append(s, id+" "+strings.TrimSpace(strings.ReplaceAll(func() string { b, _ := json.Marshal(m[field]); return string(b) }(), "\n", "")))
			}
		}
		sort.Strings(s)
		return s
	}
	pipe, cmd := records(t, jsonl), records(t, filepath.Join(cmdOut, "records.jsonl"))
	for _, field := range []string{"likelihood", "observed", "kind"} {
		a, b := ids(pipe, field), ids(cmd, field)
		if len(a) == 0 || strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("%s: pipeline has %d records, command %d; they differ", field, len(a), len(b))
		}
	}
}

// TestSignalStageMatchesCommand: the signal stage in a pipeline gives the
// samples of the signal command.
func TestSignalStageMatchesCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "samples.jsonl")
	yaml := filepath.Join(dir, "sig.yaml")
	os.WriteFile(yaml, []byte(`version: 1
name: sig
sources:
  trace: {type: file, path: ../../testdata/smpi/farm-8.trace, parser: {type: paje}}
stages:
  sig: {type: signal, inputs: [trace], rules: smpi, class: idle, period: 0.0001}
sinks:
  out: {type: jsonl, inputs: [sig], records: samples, path: `+out+`}
`), 0o644)
	if r := run(t, nil, "run", "--no-progress", yaml); r.code != 0 {
		t.Fatalf("run: exit %d %s", r.code, r.stderr)
	}
	r := run(t, nil, "signal", "--rules", "smpi", "--period", "0.0001", "-o", "-", "../../testdata/smpi/farm-8.trace")
	want := strings.Split(strings.TrimSpace(r.stdout), "\n")[1:]
	got := records(t, out)
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("stage: %d samples, command: %d", len(got), len(want))
	}
	for i, m := range got {
		if line := fmt.Sprintf("%v,%v,%v", m["k"], m["t"], m["x"]); line != want[i] {
			t.Fatalf("sample %d: stage %s, command %s", i, line, want[i])
		}
	}
}
