package pipelines

import (
	"strings"
	"testing"
)

func TestSpecRendersAFile(t *testing.T) {
	s := Spec{Name: "signal",
		Sources: []Node{{ID: "trace", Type: "file", Options: map[string]any{"path": "run.trace", "batch_lines": 10},
			Parser: &Node{Type: "paje", Options: map[string]any{"lenient": true}}}},
		Stages: []Node{{ID: "sig", Type: "signal", Inputs: []string{"trace"}, Options: map[string]any{"class": "idle"}}},
		Sinks:  []Node{{ID: "out", Type: "jsonl", Inputs: []string{"sig"}, Options: map[string]any{"path": "-"}}},
	}
	data, err := s.YAML()
	if err != nil {
		t.Fatal(err)
	}
	want := `version: 1
name: signal
sources:
    trace:
        type: file
        batch_lines: 10
        path: run.trace
        parser:
            type: paje
            lenient: true
stages:
    sig:
        type: signal
        inputs:
            - trace
        class: idle
sinks:
    out:
        type: jsonl
        inputs:
            - sig
        path: '-'
`
	if string(data) != want {
		t.Fatalf("got\n%s\nwant\n%s", data, want)
	}
	cfg, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cfg.Sources[0].Parser.Option("lenient"); v != "true" || cfg.Sinks[0].Inputs[0] != "sig" {
		t.Fatalf("parsed %+v", cfg)
	}
	// A bad spec fails like a bad file, naming the command.
	s.Sinks[0].Inputs = []string{"nope"}
	if _, err := s.Config(); err == nil || !strings.Contains(err.Error(), "signal command") || !strings.Contains(err.Error(), `unknown input "nope"`) {
		t.Fatalf("err = %v", err)
	}
}
