package pipelines

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// Outside the repository (here: the package's directory), a shipped
// pipeline reads the demo trace built into the binary; an overridden path
// is left alone.
func TestUseDemoTrace(t *testing.T) {
	if _, err := os.Stat(DemoTracePath); err == nil {
		t.Skip("run from the repository's root")
	}
	for _, tc := range []struct {
		override string
		builtin  bool
	}{{"", true}, {"trace.path=run.trace", false}} {
		cfg, err := LoadNamed("replay-starpu")
		if err != nil {
			t.Fatal(err)
		}
		if tc.override != "" {
			cfg.Override(tc.override)
		}
		if err := UseDemoTrace(cfg); err != nil {
			t.Fatal(err)
		}
		path, _ := cfg.Lookup("trace").Option("path")
		if !tc.builtin {
			if path != "run.trace" || len(cfg.Warnings) != 0 {
				t.Errorf("%s: path %s, warnings %v", tc.override, path, cfg.Warnings)
			}
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(b, DemoTrace()) || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "built into the binary") {
			t.Errorf("path %s (%v), warnings %v", path, err, cfg.Warnings)
		}
		if again, err := DemoTraceFile(); err != nil || again != path {
			t.Errorf("written again: %s %v", again, err)
		}
	}
}
