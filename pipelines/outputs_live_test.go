package pipelines

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/pipelines/component"
)

// peekSource emits one batch of lines, then looks at what its pipeline's
// jsonl sink wrote so far: PATH itself (in place) or only PATH.tmp.
type peekSource struct {
	follows bool
	path    string
	seen    string
}

func (p *peekSource) Follows() bool { return p.follows }

func (p *peekSource) Run(ctx context.Context, emit tracecast.Emit) error {
	if err := emit(ctx, tracecast.Batch{Items: []tracecast.Line{{Data: []byte("a")}}}); err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(p.path); err == nil && fi.Size() > 0 {
			p.seen = "path"
			return nil
		}
		if fi, err := os.Stat(p.path + ".tmp"); err == nil && fi.Size() > 0 {
			p.seen = "tmp"
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// TestLiveSinksWriteInPlace: a file sink of a pipeline whose source
// follows its input (component.Follower: kafka, tail) writes its path in
// place, read while written; in a replay it writes PATH.tmp, renamed at
// the end.
func TestLiveSinksWriteInPlace(t *testing.T) {
	for _, follows := range []bool{true, false} {
		t.Run(fmt.Sprint("follows ", follows), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.jsonl")
			src := &peekSource{follows: follows, path: path}
			reg := builtin.Registry()
			component.RegisterSource(reg, "peek", "", nil, func(component.Env, struct{}) (tracecast.Source, error) { return src, nil })
			cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: p
settings: {status_interval: 0s}
sources:
  s: {type: peek}
sinks:
  out: {type: jsonl, inputs: [s], path: %q}
`, path), "test.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := Run(t.Context(), cfg, RunOptions{Registry: reg}); err != nil {
				t.Fatal(err)
			}
			want := map[bool]string{true: "path", false: "tmp"}[follows]
			if src.seen != want {
				t.Errorf("while running, the output was at %q, want %q", src.seen, want)
			}
			if b, err := os.ReadFile(path); err != nil || len(b) == 0 {
				t.Errorf("after the run: %q, %v", b, err)
			}
			if _, err := os.Stat(path + ".tmp"); err == nil {
				t.Error("PATH.tmp left")
			}
		})
	}
}
