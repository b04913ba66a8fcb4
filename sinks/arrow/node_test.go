package arrow

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracecast/tracecast/internal/nodetest"
	"github.com/tracecast/tracecast/internal/sinktest"
)

// checkResult is one line of tools/arrowcheck/check-arrow.mjs output.
type checkResult struct {
	Path     string            `json:"path"`
	Format   string            `json:"format"`
	Rows     int               `json:"rows"`
	Batches  int               `json:"batches"`
	Columns  []string          `json:"columns"`
	Nulls    []int             `json:"nulls"`
	Metadata map[string]string `json:"metadata"`
	First    map[string]any    `json:"first"`
}

// arrowCheck runs the JavaScript reader on paths.
func arrowCheck(t *testing.T, paths ...string) []checkResult {
	t.Helper()
	res := nodetest.Run[checkResult](t, nodetest.Script{Tool: "arrowcheck", File: "check-arrow.mjs", Package: "apache-arrow",
		What: "the independent Arrow reader check", Install: "Node.js"}, paths...)
	if len(res) != len(paths) {
		t.Fatalf("check-arrow.mjs reported %d files, want %d: %v", len(res), len(paths), res)
	}
	return res
}

func TestIndependentReader(t *testing.T) {
	dir := t.TempDir()
	ents := sampleEntities(2500)
	paths := map[Format]string{
		FormatFile:   filepath.Join(dir, "entities.arrow"),
		FormatStream: filepath.Join(dir, "entities.arrows"),
	}
	for format, path := range paths {
		s, err := New(Options{Path: path, Format: format, Tables: []Table{EntityTable("s")}})
		if err != nil {
			t.Fatal(err)
		}
		sinktest.WriteAll(t, s, slices.Collect(slices.Chunk(ents, 1024))...)
	}
	res := arrowCheck(t, paths[FormatFile], paths[FormatStream])
	var wantCols []string
	for _, f := range EntitySchema("").Fields() {
		wantCols = append(wantCols, f.Name)
	}
	for i, format := range []Format{FormatFile, FormatStream} {
		r := res[i]
		if r.Format != string(format) {
			t.Errorf("%s: read as %q", r.Path, r.Format)
		}
		if r.Rows != len(ents) || r.Batches != 3 {
			t.Errorf("%s: %d rows in %d batches, want %d in 3", r.Path, r.Rows, r.Batches, len(ents))
		}
		if fmt.Sprint(r.Columns) != fmt.Sprint(wantCols) {
			t.Errorf("%s: columns %v, want %v", r.Path, r.Columns, wantCols)
		}
		// number is null except for variables (1 in 5); link columns
		// except for links (1 in 5); extra except for states (1 in 5).
		if want := len(ents) * 4 / 5; r.Nulls[8] != want || r.Nulls[9] != want || r.Nulls[12] != want {
			t.Errorf("%s: null counts %v, want %d in number, start_container and extra", r.Path, r.Nulls, want)
		}
		if r.Metadata["time_unit"] != "s" || r.Metadata["tracecast.schema"] != EntitySchemaName {
			t.Errorf("%s: metadata %v", r.Path, r.Metadata)
		}
		if r.First["nature"] != "Container" || r.First["end"] != 0.5 || r.First["value"] != "v0" || r.First["number"] != nil {
			t.Errorf("%s: first row %v", r.Path, r.First)
		}
	}
}
