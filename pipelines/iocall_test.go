package pipelines

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/parsers/iocall"
	"github.com/tracecast/tracecast/stages/iotime"
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

// TestIOCallAutoSummary: format: auto reads a CSV profile from its first
// line (no extension), and the iotime stage's summary: true writes the
// breakdown the iotime command prints, as one more JSON line.
func TestIOCallAutoSummary(t *testing.T) {
	fixture := filepath.Join("..", "testdata", "iocall", "dd_tt_y.strace")
	calls, _, err := iocall.ReadFile(fixture, "", iocall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	agg := iotime.New(nil)
	var csv strings.Builder
	csv.WriteString(strings.Join(iocall.CSVHeader, ",") + "\n")
	for i := range calls {
		agg.Add(&calls[i])
		csv.WriteString(strings.Join(iocall.CSVRecord(&calls[i]), ",") + "\n")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "profile"), filepath.Join(dir, "io.jsonl")
	if err := os.WriteFile(in, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]byte(fmt.Sprintf(`version: 1
name: io
settings: {status_interval: 0s}
sources:
  io: {type: file, path: %q, parser: {type: iocall, format: auto}}
stages:
  busy: {type: iotime, inputs: [io], summary: true}
sinks:
  out: {type: jsonl, inputs: [busy], path: %q}
`, in, out)), "io.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(t.Context(), cfg, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	recs := readJSONL(t, out)
	want := agg.Summary()
	if int64(len(recs)) != want.Total.Calls+1 {
		t.Fatalf("%d records, want %d states and the summary", len(recs), want.Total.Calls)
	}
	got, _ := json.Marshal(recs[len(recs)-1])
	var norm map[string]any
	wantJSON, _ := json.Marshal(want)
	if err := json.Unmarshal(wantJSON, &norm); err != nil {
		t.Fatal(err)
	}
	if wantJSON, _ = json.Marshal(norm); string(got) != string(wantJSON) {
		t.Fatalf("summary\n%s\nwant\n%s", got, wantJSON)
	}
	bad, err := Parse([]byte("version: 1\nname: x\nsources:\n  io: {type: file, path: "+fixture+", parser: {type: iocall, format: xml}}\nsinks:\n  out: {type: jsonl, inputs: [io], path: '-'}\n"), "bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(builtin.Registry(), bad); err == nil || !strings.Contains(err.Error(), `"xml" is not auto, strace, csv or jsonl`) {
		t.Fatalf("format xml: %v", err)
	}
}
