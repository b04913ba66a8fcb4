package arrow

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tracecast/tracecast"
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

// needTool returns the path of a command, skipping the test when it is
// missing, except under CI, where a missing reader must not pass silently.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required under CI for the independent Arrow reader check: %v", name, err)
	}
	t.Skipf("skipping the independent Arrow reader check: %s not found (install Node.js; required when CI is set)", name)
	return ""
}

// arrowCheck runs the JavaScript reader on paths, installing its pinned
// dependencies first when node_modules is missing.
func arrowCheck(t *testing.T, paths ...string) []checkResult {
	t.Helper()
	node := needTool(t, "node")
	dir, err := filepath.Abs(filepath.Join("..", "..", "tools", "arrowcheck"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "apache-arrow")); errors.Is(err, os.ErrNotExist) {
		npm := needTool(t, "npm")
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--prefix", dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci --prefix %s: %v\n%s", dir, err, out)
		}
	}
	var stderr bytes.Buffer
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "check-arrow.mjs")}, paths...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check-arrow.mjs: %v\n%s", err, stderr.Bytes())
	}
	var res []checkResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r checkResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad line from check-arrow.mjs: %v: %s", err, sc.Bytes())
		}
		res = append(res, r)
	}
	if len(res) != len(paths) {
		t.Fatalf("check-arrow.mjs reported %d files, want %d:\n%s", len(res), len(paths), out)
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
		for i := 0; i < len(ents); i += 1024 {
			if err := s.Write(t.Context(), tracecast.Batch{Items: ents[i:min(i+1024, len(ents))]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
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
