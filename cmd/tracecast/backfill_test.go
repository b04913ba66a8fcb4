package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBackfillMatchesIndependentScorer runs `tracecast backfill` on a
// StarPU and an SMPI trace of the repository, in both modes, and has
// tools/backfill/score.py — written from the definitions alone — recompute
// U, W, D, S and V from the trace and every decision record: the table
// must agree to 1e-6, no decision may be invalid, every outcome the
// scorer's.
func TestBackfillMatchesIndependentScorer(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 absent: the independent scorer is a Python script (make test installs it)")
	}
	for _, tc := range []struct{ trace, mode string }{
		{"../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "wait --alpha 10"},
		{"../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "kill --overhead 500us --alpha 1"},
		{"../../testdata/smpi/dynfarm-16.trace.gz", "wait --alpha 10"},
		{"../../testdata/smpi/dynfarm-16.trace.gz", "kill --overhead 500us --alpha 1"},
		// Gangs of 4 of the 16 ranks: the aggregate's spells.
		{"../../testdata/smpi/dynfarm-16.trace.gz", "wait --gang 4 --policy greedy --policy timeout --policy online-timeout --policy residual --policy forecast --alpha 10"},
		{"../../testdata/smpi/dynfarm-16.trace.gz", "kill --gang 4 --policy greedy --policy timeout --policy online-timeout --policy residual --policy forecast --overhead 500us --alpha 1"},
	} {
		t.Run(filepath.Base(tc.trace)+" "+strings.Join(strings.Fields(tc.mode)[:2], " "), func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"backfill", tc.trace, "--task", "1ms", "--task", "10ms", "--timeout", "2ms", "--mode"}, strings.Fields(tc.mode)...)
			if r := run(t, nil, append(args, "-o", dir)...); r.code != 0 {
				t.Fatalf("backfill: exit %d: %s", r.code, r.stderr)
			}
			alpha := strings.Fields(tc.mode)[len(strings.Fields(tc.mode))-1]
			cmd := exec.Command("python3", "../../tools/backfill/score.py", tc.trace, "--decisions", filepath.Join(dir, "decisions.jsonl"),
				"--alpha", alpha, "--tracecast", binary, "--no-references", "--compare", filepath.Join(dir, "values.jsonl"), "--json", filepath.Join(dir, "scorer.json"))
			if strings.Contains(tc.mode, "--gang") {
				// A gang's references (oracle, hindsight) write no
				// decisions: the scorer computes its own.
				cmd.Args = slices.DeleteFunc(cmd.Args, func(a string) bool { return a == "--no-references" })
				cmd.Args = append(cmd.Args, "--gang", "4", "--d", "1ms", "--d", "10ms", "--mode", strings.Fields(tc.mode)[0])
				if strings.Contains(tc.mode, "--overhead") {
					cmd.Args = append(cmd.Args, "--overhead", "500us")
				}
			}
			out, err := cmd.CombinedOutput()
			// The product's table has a never row the scorer has no
			// decisions for; every other difference fails.
			var diffs []string
			for _, l := range strings.Split(string(out), "\n") {
				// With its own references, the scorer has two greedy
				// rows (its own and the decisions'): ambiguous to match.
				refs := !slices.Contains(cmd.Args, "--no-references")
				// "no such row here": a group that launched nothing has
				// no decision for the scorer (the engine's own tests check
				// that every launch has its record).
				if strings.HasPrefix(l, "DIFF") && !strings.Contains(l, "DIFF never ") && !strings.Contains(l, "no such row here") &&
					!(refs && (strings.Contains(l, "ambiguous") || strings.Contains(l, "DIFF greedy") && strings.Contains(l, "missing there"))) {
					diffs = append(diffs, l)
				}
				if strings.Contains(l, "invalid decisions") || strings.Contains(l, "outcomes differ") {
					diffs = append(diffs, l)
				}
			}
			if len(diffs) > 0 || (err != nil && !strings.Contains(string(out), "compare:")) {
				t.Fatalf("the scorer disagrees (%v):\n%s", err, strings.Join(diffs, "\n"))
			}
			// Every policy's row was scored.
			var rows []map[string]any
			b, _ := os.ReadFile(filepath.Join(dir, "scorer.json"))
			if err := json.Unmarshal(b, &rows); err != nil {
				t.Fatal(err)
			}
			f, _ := os.Open(filepath.Join(dir, "values.jsonl"))
			defer f.Close()
			n := 0
			for sc := bufio.NewScanner(f); sc.Scan(); n++ {
			}
			if len(rows) < n-2 { // never, at two task lengths
				t.Errorf("the scorer scored %d groups, the table has %d rows", len(rows), n)
			}
		})
	}
}

// TestPredictSpells: predict --spells writes the spell forecasts of every
// idle worker (p in [0, 1], q10 ≤ q50) and their scores, and no decision.
func TestPredictSpells(t *testing.T) {
	dir := t.TempDir()
	if r := run(t, nil, "predict", "../../testdata/smpi/jacobi-8.trace.gz", "--spells", "1ms", "--spells", "10ms", "-o", dir); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "decisions.jsonl")); !os.IsNotExist(err) {
		t.Errorf("predict --spells wrote decisions (%v)", err)
	}
	f, err := os.Open(filepath.Join(dir, "spells.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var rec struct {
			Record string   `json:"record"`
			P      float64  `json:"p"`
			Q10    *float64 `json:"q10"`
			Q50    *float64 `json:"q50"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Record != "spell" || rec.P < 0 || rec.P > 1 ||
			rec.Q10 != nil && rec.Q50 != nil && *rec.Q10 > *rec.Q50 {
			t.Fatalf("line %d: %s (%v)", n+1, sc.Text(), err)
		}
	}
	if n < 1000 {
		t.Errorf("%d spell forecasts", n)
	}
	b, err := os.ReadFile(filepath.Join(dir, "spell_scores.jsonl"))
	// One score per state (idle, busy) and length d.
	if err != nil || strings.Count(string(b), `"record":"spell_score"`) != 4 || strings.Count(string(b), `"state":"busy"`) != 2 {
		t.Errorf("spell_scores.jsonl: %s (%v)", b, err)
	}
}

// TestBackfillBadOptions: every bad option is an error that names it, never
// a crash.
func TestBackfillBadOptions(t *testing.T) {
	trace := "../../testdata/smpi/jacobi-8.trace.gz"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "ten"}, "--task"},
		{[]string{"--task", "1ms", "--overhead", "soon"}, "--overhead"},
		{[]string{"--task", "1ms", "--every", "-1ms"}, "--every"},
		{[]string{"--task", "-1ms"}, "--task"},
		{[]string{}, "no back-end task length"},
		{[]string{"--task", "1ms", "--mode", "both"}, "mode"},
		{[]string{"--task", "1ms", "--alpha", "0"}, "alpha"},
		{[]string{"--task", "1ms", "--policy", "magic"}, "magic"},
		{[]string{"--task", "1ms", "--gang", "-2"}, "gang"},
		{[]string{"--task", "1ms", "--format", "csv", "-o", "DIR"}, "csv"},
	} {
		args := append([]string{"backfill", trace}, tc.args...)
		for i, a := range args {
			if a == "DIR" {
				args[i] = t.TempDir()
			}
		}
		r := run(t, nil, args...)
		if r.code == 0 || r.code == 2 && strings.Contains(r.stderr, "panic") || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error naming %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
