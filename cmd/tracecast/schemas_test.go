package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/schematest"
)

// TestPredictOutputsMatchTheirSchemas: the JSON lines of tracecast predict
// (forecasts and seed 004's windows) are valid against docs/schemas/,
// "record" first, without HTML escaping.
func TestPredictOutputsMatchTheirSchemas(t *testing.T) {
	schemas := schematest.Load(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want []string // record types expected
	}{
		{"forecasts", []string{"predict", "--horizon", "100ms", "--query", "idle>=50%", demoTrace}, []string{"forecast", "outcome"}},
		{"windows", []string{"predict", "--window", "100", "--period", "1", "--query", "idle>=50%", "-o", dir, demoTrace}, []string{"window", "prediction", "verdict", "alert"}},
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
			if !strings.HasPrefix(first, `{"record":"`) || strings.Contains(out, `\u003e`) {
				t.Errorf("first line %.200s", first)
			}
		})
	}
}
