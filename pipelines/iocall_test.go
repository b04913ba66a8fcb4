package pipelines

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestIOCallPipeline: an strace log through the iocall parser and the
// iotime stage gives one "IO State" record per categorised call.
func TestIOCallPipeline(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join("..", "testdata", "iocall", "*.strace"))
	if len(logs) == 0 {
		t.Fatal("no strace fixtures in testdata/iocall")
	}
	out := filepath.Join(t.TempDir(), "io.jsonl")
	cfg, err := Parse([]byte(fmt.Sprintf(`version: 1
name: io
settings: {status_interval: 0s}
sources:
  io: {type: file, path: %q, parser: {type: iocall, format: strace}}
stages:
  busy: {type: iotime, inputs: [io]}
sinks:
  out: {type: jsonl, inputs: [busy], records: entities, path: %q}
`, logs[0], out)), "io.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(t.Context(), cfg, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	recs := readJSONL(t, out)
	if len(recs) == 0 {
		t.Fatal("no I/O state")
	}
	for _, r := range recs {
		if r["type"] != "IO State" || r["nature"] != "State" {
			t.Fatalf("%v", r)
		}
	}
	t.Logf("%s: %d I/O states", filepath.Base(logs[0]), len(recs))
}
