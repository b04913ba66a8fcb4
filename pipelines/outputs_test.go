package pipelines

import (
	"path/filepath"
	"testing"
)

func TestMoveOutputs(t *testing.T) {
	cfg, err := LoadNamed("replay-starpu")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := cfg.MoveOutputs(dir)
	want := map[string]string{"archive": "entities.arrow", "live": "entities.arrows", "records": "entities.jsonl"}
	if len(out) != len(want) {
		t.Fatalf("%v", out)
	}
	for id, base := range want {
		got, _ := cfg.Lookup(id).Option("path")
		if out[id] != filepath.Join(dir, base) || got != out[id] {
			t.Errorf("%s: %s, option %s", id, out[id], got)
		}
	}
}
