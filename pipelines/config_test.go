package pipelines

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/ingest/file"
	"github.com/tracecast/tracecast/pipelines/component"
)

const validYAML = `version: 1
name: test
settings:
  edge_capacity: 4
  shutdown_timeout: 5s
  status_interval: 0s
sources:
  a:
    type: gen
    count: 10
    parser: {type: num}
  b: {type: gen}
stages:
  mid: {type: tag, inputs: [a, b]}
sinks:
  out: {type: capture, inputs: [mid]}
  raw: {type: capture, inputs: [a]}
`

func TestParseValid(t *testing.T) {
	cfg, err := Parse([]byte(validYAML), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "test" || cfg.Settings.EdgeCapacity != 4 || cfg.Settings.ShutdownTimeout != 5*time.Second ||
		cfg.Settings.StatusInterval != 0 {
		t.Errorf("config %+v", cfg)
	}
	if len(cfg.Sources) != 2 || cfg.Sources[0].Parser == nil || cfg.Sources[0].Parser.Type != "num" ||
		cfg.Sources[0].Parser.ID != "a" || cfg.Sources[1].Parser != nil {
		t.Errorf("sources %+v", cfg.Sources)
	}
	if mid := cfg.Lookup("mid"); mid == nil || strings.Join(mid.Inputs, ",") != "a,b" || mid.Line != 14 {
		t.Errorf("mid = %+v", mid)
	}
	if err := Check(testRegistry(newStore()), cfg); err != nil {
		t.Errorf("Check: %v", err)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings %v", cfg.Warnings)
	}
}

func TestParseDefaults(t *testing.T) {
	cfg, err := Parse([]byte("version: 1\nsources: {a: {type: gen}}\nsinks: {o: {type: capture, inputs: [a]}}\n"), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Settings != DefaultSettings() {
		t.Errorf("settings %+v, want defaults", cfg.Settings)
	}
}

func TestParseWarnsAboutUnreadOutputs(t *testing.T) {
	cfg, err := Parse([]byte("version: 1\nsources: {a: {type: gen}, b: {type: gen}}\nsinks: {o: {type: capture, inputs: [a]}}\n"), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], `sources.b: no stage or sink reads the output of "b"`) {
		t.Errorf("warnings %q", cfg.Warnings)
	}
}

func TestConfigErrors(t *testing.T) {
	base := "version: 1\nsources:\n  a: {type: gen}\nsinks:\n  o: {type: capture, inputs: [a]}\n"
	tests := []struct {
		name string
		yaml string
		want []string // each must appear in the error
	}{
		{"empty", "", []string{"f.yaml: empty pipeline file"}},
		{"syntax", "version: 1\nsources: [\n", []string{"f.yaml:2: did not find expected node content"}},
		{"not a mapping", "- a\n", []string{"f.yaml:1: a pipeline file is a mapping"}},
		{"two documents", base + "---\nversion: 1\n", []string{"one YAML document"}},
		{"unknown top-level key", base + "extra: 1\n",
			[]string{`f.yaml:6: extra: unknown key "extra" at the top level (known: name, settings, sinks, sources, stages, version)`}},
		{"unknown settings key", "settings:\n  edge_capcity: 3\n" + base,
			[]string{`f.yaml:2: settings.edge_capcity: unknown key "edge_capcity" (known: edge_capacity, memory_limit, shutdown_timeout, status_interval)`}},
		{"bad duration", "settings:\n  shutdown_timeout: soon\n" + base, []string{"f.yaml:2:", "soon"}},
		{"bad settings values", "settings: {edge_capacity: 0, shutdown_timeout: -1s}\n" + base,
			[]string{"settings.edge_capacity: must be at least 1", "settings.shutdown_timeout: must be positive"}},
		{"bad memory limit", "settings: {memory_limit: 0MiB}\n" + base, []string{"settings.memory_limit: must be positive"}},
		{"wrong version", strings.Replace(base, "version: 1", "version: 2", 1), []string{"f.yaml:1: version: must be 1 (got 2)"}},
		{"missing version", strings.Replace(base, "version: 1\n", "", 1), []string{"version: must be 1 (got 0)"}},
		{"missing type", "version: 1\nsources:\n  a: {path: x}\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{"f.yaml:3: sources.a: missing type"}},
		{"source with inputs", "version: 1\nsources:\n  a: {type: gen, inputs: [b]}\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{"f.yaml:3: sources.a.inputs: sources have no inputs"}},
		{"sink without inputs", "version: 1\nsources:\n  a: {type: gen}\nsinks:\n  o: {type: capture}\n",
			[]string{"f.yaml:5: sinks.o: missing inputs: a sink needs at least one input"}},
		{"empty inputs", "version: 1\nsources:\n  a: {type: gen}\nsinks:\n  o: {type: capture, inputs: []}\n",
			[]string{"sinks.o.inputs: must list at least one input"}},
		{"inputs not a list", "version: 1\nsources:\n  a: {type: gen}\nsinks:\n  o: {type: capture, inputs: a}\n",
			[]string{"sinks.o.inputs: must be a list of component ids, like [a, b]"}},
		{"unknown input", "version: 1\nsources:\n  a: {type: gen}\nsinks:\n  o: {type: capture, inputs: [a, nope]}\n",
			[]string{`f.yaml:5: sinks.o.inputs: unknown input "nope" (known: a)`}},
		{"input is a sink", base + "  p: {type: capture, inputs: [o]}\n",
			[]string{`sinks.p.inputs: input "o" is a sink, which produces nothing`}},
		{"input twice", "version: 1\nsources:\n  a: {type: gen}\nsinks:\n  o: {type: capture, inputs: [a, a]}\n",
			[]string{`input "a" is listed twice`}},
		{"duplicate id across kinds", base + "stages:\n  a: {type: tag, inputs: [a]}\n",
			[]string{`f.yaml:7: stages.a: id "a" is already used by sources.a (line 3)`}},
		{"duplicate id in a section", "version: 1\nsources:\n  a: {type: gen}\n  a: {type: gen}\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{"f.yaml:4: sources.a: duplicate id (first at line 3)"}},
		{"invalid id", "version: 1\nsources:\n  'a b': {type: gen}\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{`invalid id "a b"`}},
		{"cycle", base + "stages:\n  x: {type: tag, inputs: [a, z]}\n  y: {type: tag, inputs: [x]}\n  z: {type: tag, inputs: [y]}\n",
			[]string{"f.yaml:7: stages.x.inputs: cycle: x -> y -> z -> x"}},
		{"self input", base + "stages:\n  x: {type: tag, inputs: [x]}\n", []string{"stages.x.inputs: a stage cannot read its own output"}},
		{"no sources or sinks", "version: 1\n", []string{"sources: a pipeline needs at least one source", "sinks: a pipeline needs at least one sink"}},
		{"several problems at once", "version: 3\nsettings: {edge_capacity: 0}\nsources:\n  a: {type: gen}\nsinks:\n  o: {type: capture, inputs: [zz]}\n",
			[]string{"version: must be 1", "edge_capacity: must be at least 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "f.yaml")
			wantConfigError(t, err, tt.want)
		})
	}
}

// wantConfigError fails the test unless err is a *ConfigError whose
// message contains each of want.
func wantConfigError(t *testing.T, err error, want []string) {
	t.Helper()
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v (%T), want a *ConfigError", err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
		}
	}
}

func TestCheckErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"unknown source type", "version: 1\nsources:\n  a: {type: fiel, path: x}\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{`f.yaml:3: sources.a.type: unknown source type "fiel" (known: file, gen, kafka, tail)`}},
		{"unknown parser type", "version: 1\nsources:\n  a:\n    type: gen\n    parser: {type: pje}\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{`f.yaml:5: sources.a.parser.type: unknown parser type "pje" (known: iocall, num, paje, power)`}},
		{"unknown stage type", "version: 1\nsources:\n  a: {type: gen}\nstages:\n  s: {type: nope, inputs: [a]}\nsinks:\n  o: {type: capture, inputs: [s]}\n",
			[]string{`unknown stage type "nope" (known: backfill, energy, forecast, iotime, predict, signal, tag, taskmodel, tasks)`}},
		{"unknown sink type", "version: 1\nsources:\n  a: {type: gen}\nsinks:\n  o: {type: orc, inputs: [a]}\n",
			[]string{`unknown sink type "orc" (known: arrow, capture, csv, jsonl, kafka, parquet, pjdump)`}},
		{"unknown option", "version: 1\nsources:\n  a:\n    type: file\n    path: x\n    sped: 2x\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{`f.yaml:6: sources.a.sped: unknown key "sped" (known: batch_lines, max_line_bytes, path, speed, strict_eol, time_unit)`}},
		{"unknown parser option", "version: 1\nsources:\n  a:\n    type: file\n    path: x\n    parser:\n      type: paje\n      lenient: true\n      strict: 1\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{`f.yaml:9: sources.a.parser.strict: unknown key "strict"`}},
		{"inputs under a parser", "version: 1\nsources:\n  a:\n    type: gen\n    parser: {type: num, inputs: [a]}\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{`sources.a.parser.inputs: unknown key "inputs"`}},
		{"option type error", "version: 1\nsources:\n  a:\n    type: gen\n    count: lots\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{"f.yaml:5: sources.a.count: cannot unmarshal !!str `lots` into int"}},
		// In a flow mapping every value is on one line: the key is the one
		// whose value the error quotes (sources.a.type was named).
		{"option type error, flow", "version: 1\nsources:\n  a: {type: gen, batch: 2, count: 1e30}\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{"f.yaml:3: sources.a.count: cannot unmarshal !!float `1e30` into int"}},
		{"option type error, flow, long values", "version: 1\nsources:\n  a: {type: gen, batch: lotsandlots, count: lotsandlotsmore, fail_at: 1e30}\nsinks:\n  o: {type: capture, inputs: [a]}\n",
			[]string{"f.yaml:3: sources.a.batch: cannot unmarshal !!str `lotsand...` into int",
				"f.yaml:3: sources.a.count: cannot unmarshal !!str `lotsand...` into int",
				"f.yaml:3: sources.a.fail_at: cannot unmarshal !!float `1e30` into int"}},
		{"option validation", "version: 1\nsources:\n  a: {type: file, speed: warp}\nsinks:\n  o: {type: arrow, inputs: [a], path: '-', format: file}\n",
			[]string{"f.yaml:3: sources.a: path: required", `speed: invalid speed "warp"`,
				"f.yaml:5: sinks.o: path: standard output needs format: stream"}},
		{"arrow format", "version: 1\nsources:\n  a: {type: gen}\nsinks:\n  o: {type: arrow, inputs: [a], path: x, format: csv}\n",
			[]string{`format: unknown Arrow format "csv" (known: file, stream)`}},
		{"paje time unit", "version: 1\nsources:\n  a: {type: gen, parser: {type: paje, time_unit: fortnight}}\nsinks:\n  o: {type: jsonl, inputs: [a]}\n",
			[]string{`sources.a.parser: time_unit: "fortnight" is not one of auto, s, ms, us, ns`, "sinks.o: path: required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml), "f.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = Check(testRegistry(newStore()), cfg)
			wantConfigError(t, err, tt.want)
		})
	}
}

func TestValidateBuiltins(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "replay.yaml")
	yaml := `version: 1
name: replay
sources:
  trace:
    type: file
    path: trace.paje
    speed: 10x
    time_unit: ms
    parser:
      type: paje
      lenient: true
      user_defined: true
      reorder_horizon: 3000
      time_unit: ms
sinks:
  archive: {type: arrow, inputs: [trace], path: out.arrow, format: file, time_unit: ms}
  live: {type: arrow, inputs: [trace], path: out.arrows, format: stream}
  dump: {type: jsonl, inputs: [trace], path: "-"}
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Validate(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "replay" {
		t.Errorf("name %q", cfg.Name)
	}
	if _, err := Validate(filepath.Join(dir, "missing.yaml"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestKnownKeysAndDefaults(t *testing.T) {
	r := builtin.Registry()
	if got := strings.Join(r.Types(component.KindSink), ","); got != "arrow,csv,jsonl,kafka,parquet,pjdump" {
		t.Errorf("sink types %s", got)
	}
	opts, ok := r.DefaultOptions(component.KindSource, "file")
	if !ok {
		t.Fatal("no file source")
	}
	if o := opts.(*file.SourceConfig); o.Speed != "max" || o.MaxLineBytes != 1<<20 || o.BatchLines != 1024 {
		t.Errorf("file defaults %+v", o)
	}
	if got := strings.Join(KnownKeys(opts), ","); got != "batch_lines,max_line_bytes,path,speed,strict_eol,time_unit" {
		t.Errorf("known keys %s", got)
	}
}

func TestSetOption(t *testing.T) {
	cfg, err := Parse([]byte("version: 1\nsources:\n  a: {type: file, path: x, speed: max}\nsinks:\n  o: {type: jsonl, inputs: [a], path: '-'}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := builtin.Registry()
	a := cfg.Lookup("a")
	a.SetOption("speed", "10x")
	a.SetOption("batch_lines", "7")
	p, err := makePlan(r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if o := p.opts[a].(*file.SourceConfig); o.Speed != "10x" || o.BatchLines != 7 || o.Path != "x" {
		t.Errorf("options %+v", o)
	}
	a.SetOption("speed", "warp")
	a.SetOption("nope", "1")
	err = Check(r, cfg)
	if err == nil || !strings.Contains(err.Error(), `s.yaml:3: sources.a.nope: unknown key "nope"`) {
		t.Errorf("err = %v", err)
	}
}

func TestOverride(t *testing.T) {
	const file = `version: 1
name: o
sources:
  trace: {type: file, path: a.trace, parser: {type: paje}}
  raw: {type: file, path: b.trace}
sinks:
  out: {type: jsonl, inputs: [trace, raw], path: out.jsonl}
`
	for _, tc := range []struct {
		set     string
		id, key string // where the value must land ("trace.parser" for the parser)
		want    string
		wantErr string
	}{
		{set: "trace.path=run.trace.gz", id: "trace", key: "path", want: "run.trace.gz"},
		{set: "trace.parser.lenient=true", id: "trace.parser", key: "lenient", want: "true"},
		{set: "out.path=x=y.jsonl", id: "out", key: "path", want: "x=y.jsonl"},
		{set: "trace.path", wantErr: `"trace.path": want ID.KEY=VALUE`},
		{set: "path=x", wantErr: `"path=x": want ID.KEY=VALUE`},
		{set: "nope.path=x", wantErr: `"nope.path=x": no component "nope" in the pipeline`},
		{set: "raw.parser.lenient=true", wantErr: `"raw.parser.lenient=true": source "raw" has no parser`},
		{set: "trace.a.b=1", wantErr: `"trace.a.b=1": want ID.KEY=VALUE or ID.parser.KEY=VALUE`},
	} {
		t.Run(tc.set, func(t *testing.T) {
			cfg, err := Parse([]byte(file), "o.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Override(tc.set)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			id, parser := strings.CutSuffix(tc.id, ".parser")
			c := cfg.Lookup(id)
			if parser {
				c = c.Parser
			}
			if v, _ := c.Option(tc.key); v != tc.want {
				t.Errorf("%s.%s = %q, want %q", tc.id, tc.key, v, tc.want)
			}
		})
	}
}

func TestLoadNamed(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(file, []byte("version: 1\nname: mine\nsources:\n  a: {type: file, path: x}\nsinks:\n  b: {type: jsonl, inputs: [a], path: y}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg, name, file, wantErr string
	}{
		{arg: "replay-starpu", name: "replay-starpu", file: "replay-starpu.yaml (built in)"},
		{arg: file, name: "mine", file: file},
		{arg: "no-such-pipeline", wantErr: "no-such-pipeline: no such file, and no built-in pipeline of that name (built in: "},
		{arg: "no/such.yaml", wantErr: "no such file or directory"},
	} {
		cfg, err := LoadNamed(tc.arg)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", tc.arg, err, tc.wantErr)
			}
			if strings.Contains(tc.wantErr, "built-in") != errors.Is(err, ErrNoPipeline) {
				t.Errorf("%s: errors.Is(ErrNoPipeline) wrong: %v", tc.arg, err)
			}
			continue
		}
		if err != nil || cfg.Name != tc.name || cfg.File != tc.file {
			t.Errorf("%s: %+v, %v", tc.arg, cfg, err)
		}
	}
}
