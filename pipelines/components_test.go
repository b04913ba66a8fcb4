package pipelines

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/ipc"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/pipelines/component"
)

// samples are the sample pipelines besides the shipped ones.
func samples(t *testing.T) []string {
	files, err := filepath.Glob("../examples/pipelines/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample pipelines: %v", err)
	}
	return files
}

// TestEveryComponentHasASample: each registered type is used by a shipped
// or sample pipeline, so each has a config a user can start from and a
// test runs (shipped_test.go runs the shipped ones).
func TestEveryComponentHasASample(t *testing.T) {
	used := map[string]bool{}
	add := func(cfg *Config) {
		for _, c := range cfg.Components() {
			used[string(c.Kind)+" "+c.Type] = true
			if c.Parser != nil {
				used["parser "+c.Parser.Type] = true
			}
		}
	}
	for _, name := range Shipped() {
		data, err := ShippedFile(name)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := Parse(data, name)
		if err != nil {
			t.Fatal(err)
		}
		add(cfg)
	}
	for _, f := range samples(t) {
		cfg, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		add(cfg)
	}
	for _, d := range builtin.Registry().Describe() {
		if !used[string(d.Kind)+" "+d.Name] {
			t.Errorf("%s %q has no sample pipeline (pipelines/*.yaml or examples/pipelines/)", d.Kind, d.Name)
		}
		if d.Doc == "" {
			t.Errorf("%s %q has no description", d.Kind, d.Name)
		}
	}
}

// TestSamplePipelinesRun runs every sample pipeline on the repository's
// test data, writing into a temporary directory.
func TestSamplePipelinesRun(t *testing.T) {
	for _, f := range samples(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for _, s := range cfg.Sources {
				p, _ := s.Option("path")
				s.SetOption("path", filepath.Join("..", p))
			}
			for _, s := range cfg.Stages {
				if p, ok := s.Option("model"); ok {
					s.SetOption("model", filepath.Join("..", p))
				}
			}
			var outs []string
			for _, s := range cfg.Sinks {
				p, _ := s.Option("path")
				out := filepath.Join(dir, filepath.Base(p))
				s.SetOption("path", out)
				outs = append(outs, out)
			}
			if err := Run(context.Background(), cfg, RunOptions{Logger: zerolog.Nop()}); err != nil {
				t.Fatal(err)
			}
			for _, out := range outs {
				if st, err := os.Stat(out); err != nil || st.Size() < 100 {
					t.Errorf("%s: %v, %v", out, st, err)
				}
			}
			if filepath.Base(f) == "signal-smpi.yaml" {
				// The signal stage's Batch.Meta reaches the Arrow schema.
				fh, err := os.Open(outs[0])
				if err != nil {
					t.Fatal(err)
				}
				defer fh.Close()
				r, err := ipc.NewFileReader(fh)
				if err != nil {
					t.Fatal(err)
				}
				md := r.Schema().Metadata()
				for k, want := range map[string]string{"tracecast.schema": "tracecast.signal/1", "period": "0.0001", "r": "8", "class": "idle", "rules": "smpi", "time_unit": "s"} {
					if i := md.FindKey(k); i < 0 || md.Values()[i] != want {
						t.Errorf("metadata %s: want %q in %v", k, want, md)
					}
				}
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	var file *component.Description
	for _, d := range builtin.Registry().Describe() {
		if d.Kind == component.KindSource && d.Name == "file" {
			file = &d
		}
	}
	if file == nil {
		t.Fatal("no file source")
	}
	i := slices.IndexFunc(file.Options, func(o component.OptionDescription) bool { return o.Key == "speed" })
	if i < 0 || file.Options[i].Default != "max" || file.Options[i].Type != "string" {
		t.Fatalf("file source options: %+v", file.Options)
	}
	// A mapping option names its keys (the kafka components' tls and sasl).
	for _, d := range builtin.Registry().Describe() {
		if d.Name != "kafka" {
			continue
		}
		i := slices.IndexFunc(d.Options, func(o component.OptionDescription) bool { return o.Key == "sasl" })
		if i < 0 || d.Options[i].Type != "mapping {mechanism, user, password_env, password_file}" {
			t.Errorf("%s kafka options: %+v", d.Kind, d.Options)
		}
	}
}
