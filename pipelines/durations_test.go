package pipelines

import (
	"errors"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/tasks"
)

// TestDurationOptions: the energy and tasks stages' lengths of time
// (window, max_gap, lateness, offset, io_offset) take a duration with a
// unit in a pipeline file, or a plain number of seconds as before; what is
// neither is a problem naming the key.
func TestDurationOptions(t *testing.T) {
	for _, tc := range []struct {
		name, opts string
		// want: the energy stage's window, max_gap, lateness, offset,
		// io_offset in seconds, or the problem.
		want    [5]float64
		problem string
	}{
		{name: "units", opts: "window: 500ms, max_gap: 2s, lateness: 100ms, offset: -1.5s, io_offset: 250us", want: [5]float64{0.5, 2, 0.1, -1.5, 250e-6}},
		{name: "plain seconds", opts: "window: 0.5, max_gap: 2, lateness: 0.1, offset: -1.5, io_offset: 3", want: [5]float64{0.5, 2, 0.1, -1.5, 3}},
		{name: "compound and quoted", opts: `window: 1m30s, max_gap: "5", lateness: 0, offset: 1h`, want: [5]float64{90, 5, 0, 3600, 0}},
		{name: "defaults", opts: "", want: [5]float64{1, 5, 0, 0, 0}},
		{name: "not a duration", opts: "window: fast", problem: `stages.e: "fast" is not a duration`},
		{name: "negative window", opts: "window: -1s", problem: "window, lateness: must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := `version: 1
name: d
sources:
  trace: {type: file, path: a.trace, parser: {type: paje}}
  power: {type: file, path: p.csv, parser: {type: power, format: csv}}
stages:
  e: {type: energy, inputs: [trace, power], ` + tc.opts + `}
  k: {type: tasks, inputs: [trace, power], energy: true, max_gap: 1m, lateness: 10ms, offset: 3}
sinks:
  out: {type: jsonl, inputs: [e, k], path: out.jsonl}
`
			cfg, err := Parse([]byte(yaml), "d.yaml")
			if err != nil {
				t.Fatal(err)
			}
			p, err := makePlan(builtin.Registry(), cfg)
			var ce *ConfigError
			if tc.problem != "" {
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("error %v, want a problem with %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var e *energy.StageConfig
			var k *tasks.StageConfig
			for c, o := range p.opts {
				switch c.ID {
				case "e":
					e = o.(*energy.StageConfig)
				case "k":
					k = o.(*tasks.StageConfig)
				}
			}
			got := [5]float64{float64(e.Window), float64(e.MaxGap), float64(e.Lateness), float64(e.Offset), float64(e.IOOffset)}
			if got != tc.want {
				t.Errorf("energy: %v, want %v", got, tc.want)
			}
			if k.MaxGap != 60 || k.Lateness != 0.01 || k.Offset != 3 {
				t.Errorf("tasks: max_gap %v, lateness %v, offset %v", k.MaxGap, k.Lateness, k.Offset)
			}
		})
	}
}
