package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/schematest"
)

// TestCommandOutputsMatchTheirSchemas: the JSON lines of the commands —
// predict (forecasts and KS windows), iocalls --format jsonl, hitrate, ks —
// are valid against docs/schemas/, "record" first, without HTML escaping.
func TestCommandOutputsMatchTheirSchemas(t *testing.T) {
	schemas := schematest.Load(t)
	dir := t.TempDir()
	// An strace log whose paths HTML escaping would mangle.
	strace := filepath.Join(dir, "amp.strace")
	if err := os.WriteFile(strace, []byte(`7 10:00:00.000001 openat(AT_FDCWD, "/tmp/a&b>c", O_RDONLY) = 3</tmp/a&b>c> <0.000010>
7 10:00:00.000020 read(3</tmp/a&b>c>, "xy", 4096) = 2 <0.000002>
7 10:00:00.000030 close(3</tmp/a&b>c>) = 0 <0.000001>
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A trace whose name HTML escaping would mangle.
	amp := filepath.Join(dir, "run&1.trace.gz")
	if data, err := os.ReadFile(demoTrace); err != nil || os.WriteFile(amp, data, 0o644) != nil {
		t.Fatal(err)
	}
	ksA, ksB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for f, data := range map[string]string{ksA: "0\n1\n1\n2\n", ksB: "5\n6\n5\n"} {
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // record types expected
	}{
		{"forecasts", []string{"predict", "--horizon", "100ms", "--query", "idle>=50%", demoTrace}, []string{"forecast", "outcome"}},
		{"windows", []string{"predict", "--window", "100", "--period", "1", "--query", "idle>=50%", "-o", dir, demoTrace}, []string{"window", "prediction", "verdict", "alert"}},
		{"iocalls", []string{"iocalls", "--format", "jsonl", strace}, []string{"iocall"}},
		// 5000 samples: nothing compared, a null hit_rate.
		{"hitrate", []string{"hitrate", "--period", "1", "--windows", "100,5000", amp}, []string{"hitrate"}},
		{"ks", []string{"ks", ksA, ksB}, []string{"kstest"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, nil, tc.args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			out := r.stdout
			if tc.name == "windows" {
				data, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				out = string(data)
			}
			path := filepath.Join(t.TempDir(), "out.jsonl")
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			counts := schemas.ValidateFile(t, path)
			for _, w := range tc.want {
				if counts[w] == 0 {
					t.Errorf("no %s record: %v", w, counts)
				}
			}
			first, _, _ := strings.Cut(out, "\n")
			if !strings.HasPrefix(first, `{"record":"`) || strings.Contains(out, `\u00`) {
				t.Errorf("first line %.200s", first)
			}
		})
	}
}
