package pipelines

import (
	"math"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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

// TestScalarNode: the nodes scalarNode makes marshal to the text yaml's
// Node.Encode gives, for values that read as other types, need quoting
// or span lines; other values are left to Encode.
func TestScalarNode(t *testing.T) {
	values := []any{
		"", "plain", "true", "false", "yes", "no", "on", "off", "Y", "n", "ON", "True", "NULL", "null", "~", "1", "-1", "0x1F", "0o7", "1e3", ".inf", ".nan",
		"1:20", "12:30:45", "-", "- x", "a: b", "#c", "a #b", " lead", "trail ", "'q'", `"q"`, "x\ny", "x\n", "tab\tx",
		"é", "€ 5", "[a]", "{a: 1}", "&a", "*a", "!t", "%p", "@a", "`b", "?", "|", ">",
		true, false, 0, 1, -7, 1 << 40, 0.0, 1.0, -2.5, 0.1, 1e21, 1e-7, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64,
		[]string{}, []string{"a", "1", "true", "x y", ""},
	}
	for _, v := range values {
		got, ok := scalarNode(v)
		if !ok {
			if s, isStr := v.(string); !isStr || !strings.Contains(s, ":") && !yaml11Bool[strings.ToLower(s)] {
				t.Errorf("%#v: not taken", v)
			}
			continue
		}
		var want yaml.Node
		if err := want.Encode(v); err != nil {
			t.Fatal(err)
		}
		g, err := yaml.Marshal(map[string]*yaml.Node{"k": &got})
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		w, _ := yaml.Marshal(map[string]*yaml.Node{"k": &want})
		if string(g) != string(w) {
			t.Errorf("%#v: marshals to %q, Encode's node to %q", v, g, w)
		}
	}
	for _, v := range []any{math.Inf(1), math.NaN(), "\xff", []string{"\xff"}, int64(1), uint(2), map[string]any{}, []any{1}} {
		if _, ok := scalarNode(v); ok {
			t.Errorf("%#v: taken, want it left to Encode", v)
		}
	}
}
