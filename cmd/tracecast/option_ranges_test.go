package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOptionRanges: options outside their range are usage errors (exit
// 2) that name the option and the range, before any work, never a silent
// default.
func TestOptionRanges(t *testing.T) {
	dir := t.TempDir()
	a, b := writeFile(t, dir, "a.txt", "0\n1\n0\n1\n"), writeFile(t, dir, "b.txt", "1\n1\n0\n0\n")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		// --alpha: 0 < alpha < 1.
		{[]string{"ks", "--alpha", "0", a, b}, "--alpha 0: a significance level must be in (0, 1)"},
		{[]string{"ks", "--alpha", "-1", a, b}, "--alpha -1: a significance level must be in (0, 1)"},
		{[]string{"ks", "--alpha", "1.5", a, b}, "--alpha 1.5: a significance level must be in (0, 1)"},
		{[]string{"ks", "--alpha", "NaN", a, b}, "--alpha NaN: a significance level must be in (0, 1)"},
		{[]string{"hitrate", "--alpha", "0", "--windows", "100", demoTrace}, "--alpha 0: a significance level must be in (0, 1)"},
		{[]string{"hitrate", "--alpha", "NaN", "--windows", "100", demoTrace}, "--alpha NaN: a significance level must be in (0, 1)"},
		// --windows: overflow-safe, at most 10 000 sizes.
		{[]string{"hitrate", "--windows", "1:1000000:1", demoTrace}, `--windows "1:1000000:1": 1000000 window sizes, more than the 10000 allowed`},
		{[]string{"hitrate", "--windows", "1:9223372036854775807:1", demoTrace}, "more than the 10000 allowed"},
		{[]string{"predict", "--window", "100", "--alpha", "0", demoTrace}, "alpha: 0: a significance level must be in (0, 1)"},
		{[]string{"predict", "--window", "100", "--alpha", "1.5", demoTrace}, "alpha: 1.5: a significance level must be in (0, 1)"},
		{[]string{"predict", "--window", "100", "--idle-threshold", "5", demoTrace}, "idle_threshold: 5: a likelihood must be in [0, 1]"},
		{[]string{"predict", "--window", "100", "--regime-misses", "-4", demoTrace}, "regime_misses: -4: must be positive"},
		// Periods: negative is an error, not "automatic"; messages give units.
		{[]string{"signal", "--period", "-1ms", demoTrace, "-o", "-"}, "period: -1ms: must be positive (0: automatic)"},
		{[]string{"signal", "--min-period", "-5", demoTrace, "-o", "-"}, "min_period: -5: must be positive (0: no floor)"},
		{[]string{"predict", "--window", "100", "--period", "-1", demoTrace}, "period: -1: must be positive (0: automatic)"},
		// --coverage: 0 is not the default (it read as 0.9).
		{[]string{"predict", "--coverage", "0", demoTrace}, "coverage: 0 must be in (0, 1)"},
		{[]string{"predict", "--coverage", "1", demoTrace}, "coverage: 1 must be in (0, 1)"},
		{[]string{"hitrate", "--period", "-1ms", "--windows", "100", demoTrace}, "period: -1ms: must be positive (0: automatic)"},
		// Parser options, as in a pipeline file.
		{[]string{"states", "--threads", "100000", demoTrace}, "threads: 100000 is more than 1024"},
		{[]string{"states", "--reorder-horizon", "-5", demoTrace}, "reorder_horizon: -5: must be positive, 0 (none, as pj_dump) or -1 (the default, 3 s)"},
		{[]string{"validate", writeFile(t, dir, "gaps.yaml", gapsYAML)}, "threads: 100000 is more than 1024"},
	} {
		r := run(t, nil, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want exit 2, %q", tc.args, r.code, r.stderr, tc.msg)
		}
	}
	// The pipeline file names every key out of range.
	r0 := run(t, nil, "validate", filepath.Join(dir, "gaps.yaml"))
	for _, key := range []string{"stages.idle: alpha: 5", "stages.idle: idle_threshold: 7", "stages.idle: regime_misses: -4", "stages.idle: period: -1:", "parser: threads: 100000"} {
		if !strings.Contains(r0.stderr, key) {
			t.Errorf("validate: %q does not name %q", r0.stderr, key)
		}
	}
	if strings.Contains(r0.stderr, "reorder_horizon") {
		t.Errorf("validate: reorder_horizon -1 (the default, 3 s) refused: %s", r0.stderr)
	}
	// A period too short for max-samples says its unit.
	if r := run(t, nil, "signal", "--period", "1ns", demoTrace, "-o", "-"); r.code == 0 || !strings.Contains(r.stderr, "period 1e-06 ms makes 6967647969 samples over the run's 6967.647968 ms") {
		t.Errorf("signal --period 1ns: exit %d, %s", r.code, r.stderr)
	}
	// Near MaxInt, a range of two sizes ends (it looped forever).
	r := run(t, nil, "hitrate", "--period", "1ms", "--windows", "9223372036854775806:9223372036854775807:1", demoTrace)
	if r.code != 0 || strings.Count(r.stdout, `"record":"hitrate"`) != 2 {
		t.Errorf("windows near MaxInt: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
}

func writeFile(t *testing.T, dir, name, s string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// gapsYAML is QA's pipeline file of options the commands refuse
// (reorder_horizon -1 is the default, 3 s: valid).
const gapsYAML = `version: 1
name: gaps
sources:
  trace: {type: file, path: ../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz, parser: {type: paje, reorder_horizon: -1, threads: 100000}}
stages:
  idle: {type: predict, inputs: [trace], window: 100, period: -1, alpha: 5, idle_threshold: 7, regime_misses: -4}
sinks:
  out: {type: jsonl, inputs: [idle], path: out16.jsonl}
`
