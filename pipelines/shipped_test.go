package pipelines

import (
	"context"
	"os"
	"time"

	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/internal/arrowtest"
	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/pipelines/component"
)

// TestShippedPipelines validates and runs every pipelines/*.yaml from the
// repository root, with its outputs redirected to a temporary directory.
func TestShippedPipelines(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	if len(files) == 0 {
		t.Fatal("no shipped pipelines")
	}
	if len(files) != len(Shipped()) {
		t.Fatalf("%d pipeline files, %d embedded", len(files), len(Shipped()))
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			path, _ := filepath.Abs(f)
			t.Chdir(root)
			cfg, err := Validate(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			ctx := t.Context()
			var broker string
			for _, c := range cfg.Components() {
				switch {
				case c.Type == "kafka":
					// A real broker, in-process.
					if broker == "" {
						broker = kafkatest.Start(t, 4, "tracecast.traces", "tracecast.predictions", "tracecast.forecasts", "tracecast.alerts")
					}
					c.SetOption("brokers", "["+broker+"]")
					if c.Kind == component.KindSource {
						// Live: the demo trace is published, then the
						// pipeline is stopped gracefully.
						publishTraces(t, broker, "tracecast.traces", map[string][]byte{"demo": gziptest.ReadFile(t, DemoTracePath)})
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, 4*time.Second)
						defer cancel()
					}
				case c.Kind == component.KindSink:
					if p, ok := c.Option("path"); ok && p != "-" {
						c.SetOption("path", filepath.Join(out, c.ID+filepath.Ext(p)))
					}
				case c.Kind == component.KindSource && c.Type == "tail":
					// A live pipeline never ends: follow a complete copy of
					// the demo trace, then stop it gracefully.
					plain := filepath.Join(out, "trace")
					if err := os.WriteFile(plain, gziptest.ReadFile(t, DemoTracePath), 0o644); err != nil {
						t.Fatal(err)
					}
					c.SetOption("path", plain)
					c.SetOption("position_file", filepath.Join(out, "position.json"))
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 2*time.Second)
					defer cancel()
				}
			}
			if err := Check(builtin.Registry(), cfg); err != nil {
				t.Fatal(err)
			}
			if err := Run(ctx, cfg, RunOptions{}); err != nil {
				t.Fatal(err)
			}
			arrows, _ := filepath.Glob(filepath.Join(out, "*.arrow"))
			for _, a := range arrows {
				if n := arrowRows(t, a); n == 0 {
					t.Errorf("%s: no rows", a)
				}
			}
			jsonls, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
			for _, j := range jsonls {
				b, _ := os.ReadFile(j)
				if strings.Count(string(b), "\n") == 0 {
					t.Errorf("%s: empty", j)
				}
			}
		})
	}
}

func arrowRows(t *testing.T, path string) int64 {
	t.Helper()
	_, recs := arrowtest.ReadIPC(t, path)
	return arrowtest.NumRows(recs)
}
