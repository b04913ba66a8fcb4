package pipelines

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestStartMetrics(t *testing.T) {
	if m, err := StartMetrics("", zerolog.Nop()); m != nil || err != nil {
		t.Fatalf("no address: %v %v", m, err)
	}
	(*Metrics)(nil).Stop()
	(*Metrics)(nil).SetReady(true)
	if _, err := StartMetrics("0.0.0.0:0", zerolog.Nop()); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("0.0.0.0: %v", err)
	}
	m, err := StartMetrics("127.0.0.1:0", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	if m.Registry == nil || m.Health == nil || m.Health.Ready() {
		t.Fatalf("%+v", m)
	}
	if m.SetReady(true); !m.Health.Ready() {
		t.Fatal("not ready")
	}
}

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
	m, err := StartMetrics("127.0.0.1:0", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	if err := RunInteractive(context.Background(), cfg, Interactive{Logger: zerolog.Nop(), Bar: true, Metrics: m}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); strings.Count(string(b), "\n") < 10 {
		t.Fatalf("%d bytes written", len(b))
	}
	mfs, err := m.Registry.Gather()
	if err != nil || len(mfs) == 0 {
		t.Fatalf("%v, %d metric families", err, len(mfs))
	}
}
