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
	} {
		r := run(t, nil, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want exit 2, %q", tc.args, r.code, r.stderr, tc.msg)
		}
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
