package pipelines

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestPajeEndToEnd runs the built-in components on a real trace: file source,
// paje parser, Arrow and JSON-lines sinks, and checks both outputs hold the
// records pj_dump prints for it.
func TestPajeEndToEnd(t *testing.T) {
	trace := filepath.Join("..", "testdata", "smpi", "ring-4.trace")
	dir := t.TempDir()
	arrowPath, jsonlPath := filepath.Join(dir, "ring.arrow"), filepath.Join(dir, "ring.jsonl")
	yaml := fmt.Sprintf(`version: 1
name: ring
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje}}
sinks:
  archive: {type: arrow, inputs: [trace], path: %q, time_unit: s}
  dump: {type: jsonl, inputs: [trace], path: %q}
`, trace, arrowPath, jsonlPath)
	cfg, err := Parse([]byte(yaml), "ring.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(t.Context(), cfg, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(jsonlPath)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := os.ReadFile(filepath.Join("..", "testdata", "smpi", "ring-4.pjdump"))
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Count(ref, []byte("\n"))
	if lines, rows := bytes.Count(data, []byte("\n")), arrowRows(t, arrowPath); lines != want || rows != int64(want) {
		t.Errorf("jsonl has %d records, arrow %d rows; pj_dump prints %d", lines, rows, want)
	}
}
