package pipelines

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/ipc"
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
			for _, c := range cfg.Components() {
				if c.Kind == KindSink {
					if p, ok := c.Option("path"); ok && p != "-" {
						c.SetOption("path", filepath.Join(out, c.ID+filepath.Ext(p)))
					}
				}
			}
			if err := Run(t.Context(), cfg, RunOptions{}); err != nil {
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
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var n int64
	for i := range r.NumRecords() {
		rec, err := r.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		n += rec.NumRows()
	}
	return n
}
