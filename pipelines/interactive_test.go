package pipelines

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/internal/promexport"
)

// RunInteractive runs a pipeline (no terminal here: no bar) with its
// metrics registered.
func TestRunInteractive(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	cfg, err := Parse([]byte(`version: 1
name: t
sources:
  trace: {type: file, path: ../testdata/smpi/ring-4.trace, parser: {type: paje}}
sinks:
  out: {type: jsonl, inputs: [trace], path: `+out+`}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := promexport.NewRegistry()
	if err := RunInteractive(context.Background(), cfg, Interactive{Logger: zerolog.Nop(), Bar: true, Metrics: promexport.Registry{Registerer: reg}, Health: &Health{}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); strings.Count(string(b), "\n") < 10 {
		t.Fatalf("%d bytes written", len(b))
	}
	mfs, err := reg.Gather()
	if err != nil || len(mfs) == 0 {
		t.Fatalf("%v, %d metric families", err, len(mfs))
	}
}
