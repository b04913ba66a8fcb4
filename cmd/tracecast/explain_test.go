package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictExplain: predict --explain prints, after the scores, what
// carried the forecasts of each query and horizon, writes explain.jsonl
// with -o, and changes no record: the files of predict without it are
// the same bytes.
func TestPredictExplain(t *testing.T) {
	dir := t.TempDir()
	args := []string{"predict", demoTrace, "--horizon", "10ms", "--horizon", "100ms", "--query", "idle>=25%", "--verify"}
	with := run(t, nil, append(args, "--explain", "-o", filepath.Join(dir, "with"))...)
	without := run(t, nil, append(args, "-o", filepath.Join(dir, "without"))...)
	if with.code != 0 || without.code != 0 {
		t.Fatalf("exit %d, %d: %s%s", with.code, without.code, with.stderr, without.stderr)
	}
	for _, f := range []string{"forecasts.jsonl", "outcomes.jsonl", "episodes.jsonl", "skills.jsonl", "scores.jsonl"} {
		a, errA := os.ReadFile(filepath.Join(dir, "with", f))
		b, errB := os.ReadFile(filepath.Join(dir, "without", f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s: %d bytes with --explain, %d without (%v, %v)", f, len(a), len(b), errA, errB)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "without", "explain.jsonl")); err == nil {
		t.Errorf("explain.jsonl written without --explain")
	}
	// The table: per horizon, the experts and the features, the most
	// important first; on this StarPU trace every feature is present.
	for _, h := range []string{"10ms", "100ms"} {
		head := "why the forecasts of idle>=25% over " + h + " are what they are"
		i := strings.Index(with.stderr, head)
		if i < 0 {
			t.Fatalf("no %q in:\n%s", head, with.stderr)
		}
		table := with.stderr[i:]
		if j := strings.Index(table[1:], "why the forecasts"); j > 0 {
			table = table[:j+1]
		}
		for _, expert := range []string{"learner", "prior", "ks-paper", "persistence", "climatology", "queue"} {
			if !strings.Contains(table, "\n  "+expert+" ") {
				t.Errorf("%s: no expert %s in\n%s", h, expert, table)
			}
		}
		lines := strings.Split(table, "\n")
		for k, l := range lines {
			if strings.HasPrefix(l, "  feature ") {
				// The occupancy's state and last H carry these runs (the
				// persistence and ks-paper features).
				if top := strings.Fields(lines[k+1])[0]; top != "now" && top != "occupancy_H" {
					t.Errorf("%s: top feature %s:\n%s", h, top, table)
				}
			}
		}
		if strings.Contains(table, "absent") {
			t.Errorf("%s: a feature absent on a StarPU trace with task counts:\n%s", h, table)
		}
	}
	// verify --explain prints the same table from explain.jsonl beside
	// the forecasts; without explanation records, it says how to get them.
	v := run(t, nil, "verify", "--explain", demoTrace, filepath.Join(dir, "with", "forecasts.jsonl"))
	if i := strings.Index(with.stderr, "why the forecasts"); v.code != 0 || i < 0 || !strings.HasSuffix(v.stdout, with.stderr[i:]) {
		t.Errorf("verify --explain: exit %d: %s%s", v.code, v.stdout, v.stderr)
	}
	if v := run(t, nil, "verify", "--explain", demoTrace, filepath.Join(dir, "without", "forecasts.jsonl")); v.code != 1 || !strings.Contains(v.stderr, "predict --explain") {
		t.Errorf("verify --explain without records: exit %d: %s", v.code, v.stderr)
	}
	// explain.jsonl: the records, one forecast, six experts and the
	// features per group, the forecast's MSE the score's.
	f, err := os.Open(filepath.Join(dir, "with", "explain.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			Record, Kind string
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Record != "explanation" {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		kinds[rec.Kind]++
	}
	if kinds["forecast"] != 2 || kinds["expert"] != 12 || kinds["feature"] != 2*19 {
		t.Errorf("records by kind %v", kinds)
	}
}

// On a SimGrid trace (no task counts) the features read from them are
// absent, not of no importance; --explain is for auto only.
func TestPredictExplainAbsent(t *testing.T) {
	r := run(t, nil, "predict", "../../testdata/smpi/jacobi-8.trace.gz", "--horizon", "10ms", "--explain", "-o", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, name := range []string{"ready_tasks", "waiting_tasks", "no_task_waiting", "end_phase"} {
		if !strings.Contains(r.stderr, "\n  "+name) || !strings.Contains(r.stderr, name+" ") {
			t.Errorf("no row %s in\n%s", name, r.stderr)
		}
		for _, l := range strings.Split(r.stderr, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[0] == name && f[1] != "absent" {
				t.Errorf("%s: %q, want absent", name, l)
			}
		}
	}
	if !strings.Contains(r.stderr, "absent (no task counts read)") {
		t.Errorf("the queue expert not absent:\n%s", r.stderr)
	}
	if r := run(t, nil, "predict", demoTrace, "--method", "ks-paper", "--explain", "-o", t.TempDir()); r.code != 2 || !strings.Contains(r.stderr, "--explain") {
		t.Errorf("--explain with ks-paper: exit %d: %s", r.code, r.stderr)
	}
}
