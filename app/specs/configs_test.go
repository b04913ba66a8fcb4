package specs

import (
	"errors"
	"testing"
)

// TestSetRunOptions: run's --memory-limit and --speed reach the pipeline
// (every file source's pace), and bad values are option errors naming the
// flag or the option.
func TestSetRunOptions(t *testing.T) {
	cfg, err := LoadPipeline("replay-starpu", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := SetRunOptions(cfg, "512MiB", "10x"); err != nil {
		t.Fatal(err)
	}
	if cfg.Settings.MemoryLimit != "512MiB" {
		t.Errorf("memory limit %q", cfg.Settings.MemoryLimit)
	}
	n := 0
	for _, c := range cfg.Sources {
		if c.Type == "file" {
			n++
			if v, _ := c.Option("speed"); v != "10x" {
				t.Errorf("source %s: speed %v", c.ID, v)
			}
		}
	}
	if n == 0 {
		t.Fatal("replay-starpu has no file source")
	}
	var oe *OptionError
	if err := SetRunOptions(cfg, "12x", ""); !errors.As(err, &oe) {
		t.Errorf("--memory-limit 12x: %v", err)
	}
	if err := SetRunOptions(cfg, "", "fast"); err == nil {
		t.Error("--speed fast: no error")
	}
}
