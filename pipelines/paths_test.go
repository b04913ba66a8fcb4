package pipelines

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/app/builtin"
)

// TestOutputsNeverDestroyInputs: a sink writing one of the pipeline's
// input files, or the file of another sink, is refused before anything is
// opened — by Check (tracecast validate) and by Run. Before, the sink
// truncated the input and the run exited 0.
func TestOutputsNeverDestroyInputs(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../testdata/smpi/ring-8.trace")
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.trace")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.trace")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	src := "sources:\n  trace: {type: file, path: " + link + ", parser: {type: paje}}\n"
	tests := []struct {
		name, sinks, want string
	}{
		{"jsonl on the input", "  out: {type: jsonl, inputs: [trace], path: " + in + "}\n",
			`f.yaml:6: sinks.out: sink "out" writes ` + in + `, which source "trace" reads: it would destroy its input`},
		{"arrow stream on the input", "  out: {type: arrow, inputs: [trace], format: stream, path: " + dir + "/../" + filepath.Base(dir) + "/in.trace}\n",
			`which source "trace" reads`},
		{"two sinks", "  a: {type: jsonl, inputs: [trace], path: " + dir + "/o.jsonl}\n  b: {type: arrow, inputs: [trace], format: stream, path: " + dir + "/o.jsonl}\n",
			`f.yaml:6: sinks.a: sink "a" and sink "b" both write ` + dir + `/o.jsonl: each would overwrite the other`},
		{"arrow temporary file", "  a: {type: arrow, inputs: [trace], path: " + dir + "/o.arrow}\n  b: {type: jsonl, inputs: [trace], path: " + dir + "/o.arrow.tmp}\n",
			"both write " + dir + "/o.arrow.tmp"},
		{"tail position file", "  a: {type: jsonl, inputs: [t2], path: " + dir + "/pos}\n", `f.yaml:5: sources.t2: source "t2" and sink "a" both write`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := src
			if strings.Contains(tt.sinks, "t2") {
				s += "  t2: {type: tail, path: " + in + ", position_file: " + dir + "/pos}\n"
			}
			yaml := "version: 1\nname: p\n" + s + "sinks:\n" + tt.sinks
			cfg, err := Parse([]byte(yaml), "f.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = Check(builtin.Registry(), cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check: %v\nwant %s", err, tt.want)
			}
			if err := Run(t.Context(), cfg, RunOptions{}); !errors.As(err, &ce) {
				t.Fatalf("Run: %v", err)
			}
			if got, _ := os.ReadFile(in); string(got) != string(data) {
				t.Fatalf("the input was changed (%d bytes)", len(got))
			}
			for _, f := range []string{"o.jsonl", "o.arrow", "o.arrow.tmp", "pos"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s was created", f)
				}
			}
		})
	}
}

// The demo's power stream is the energy fixture of the demo trace, byte for
// byte: regenerating the fixtures (TestGenerateFixtures -update) must
// update the embedded copy too.
func TestDemoPowerIsTheFixture(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "testdata", "power", DemoPowerName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(DemoPower(), want) {
		t.Fatalf("pipelines/testdata/%s differs from testdata/power/%s: copy the fixture", DemoPowerName, DemoPowerName)
	}
}
