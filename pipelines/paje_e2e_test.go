package pipelines

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/parsers/paje"
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

// TestPjdumpPipeline: file source, paje parser with pj_dump's window and the
// pjdump sink (what `tracecast states` runs) print pj_dump's lines for
// every trace whose pj_dump output is in the repository, and the parser
// reports its statistics through RunOptions.Report instead of the log.
func TestPjdumpPipeline(t *testing.T) {
	traces, _ := filepath.Glob(filepath.Join("..", "testdata", "smpi", "*.trace"))
	traces = append(traces, filepath.Join("testdata", "starpu-cholesky-2cpu.trace.gz"))
	for _, trace := range traces {
		t.Run(filepath.Base(trace), func(t *testing.T) {
			golden := strings.TrimSuffix(strings.TrimSuffix(trace, ".gz"), ".trace") + ".pjdump"
			if strings.HasSuffix(trace, ".gz") {
				golden += ".gz"
			}
			want := gunzipLines(t, golden)
			out := filepath.Join(t.TempDir(), "out.pjdump")
			cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: states
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje, pjdump_quirks: true}}
sinks:
  out: {type: pjdump, inputs: [trace], path: %q}
`, trace, out), "states.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var reports []any
			report := func(id, stream string, r any) {
				if id != "trace" || stream != trace {
					t.Errorf("report from %q on stream %q", id, stream)
				}
				reports = append(reports, r)
			}
			if err := Run(t.Context(), cfg, RunOptions{Report: report}); err != nil {
				t.Fatal(err)
			}
			got := gunzipLines(t, out)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%d lines differ from pj_dump's %d", len(got), len(want))
			}
			if len(reports) != 1 {
				t.Fatalf("%d reports, want 1", len(reports))
			}
			if st, ok := reports[0].(paje.Stats); !ok || st.Entities != int64(len(want)) {
				t.Errorf("report %#v, want paje.Stats of %d entities", reports[0], len(want))
			}
		})
	}
}

// gunzipLines reads a file (gzip or not) into sorted lines.
func gunzipLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := input.Decompress(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	sort.Strings(lines)
	return lines
}
