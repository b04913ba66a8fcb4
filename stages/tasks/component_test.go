package tasks

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/energy"
)

// With energy, tasks that all lack energy because the power stream names
// another node or runs on another clock are an error saying why (tracecast
// tasks --power printed a table of tasks with no energy and exited 0).
func TestStageNoEnergy(t *testing.T) {
	f, err := os.Open(demoTrace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ents []tracecast.Entity
	o := paje.DefaultOptions()
	o.UserDefined = true
	if _, err := paje.Read(f, o, func(es []tracecast.Entity) error { ents = append(ents, es...); return nil }); err != nil {
		t.Fatal(err)
	}
	kw := readPower(t, "cholesky-2cpu.kwollect.json.gz") // epoch-stamped
	for _, c := range []struct {
		name    string
		node    string
		offset  float64
		samples []tracecast.PowerSample
		err     string
	}{
		{name: "kwollect with its offset", offset: 1753114530, samples: kw},
		{name: "kwollect without offset", samples: kw, err: "the clocks do not meet"},
		{name: "wrong node", node: "taurus-1", offset: 1753114530, samples: kw, err: `no power sample names node "taurus-1"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultStageConfig()
			o.Energy, o.Offset = true, tracecast.Seconds(c.offset)
			if c.node != "" {
				o.Node = c.node
			}
			p, err := newStage(component.Env{Logger: zerolog.Nop()}, o)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, items := range []any{ents, c.samples} {
				if err := p.Process(ctx, tracecast.Batch{Stream: "demo", Items: items}, nil); err != nil {
					t.Fatal(err)
				}
			}
			withEnergy := 0
			err = p.Flush(ctx, func(_ context.Context, b tracecast.Batch) error {
				for _, tk := range b.Items.([]tracecast.Task) {
					if tk.EnergyJ != nil {
						withEnergy++
					}
				}
				return nil
			})
			if c.err == "" {
				if err != nil || withEnergy != 1540 {
					t.Fatalf("%d tasks with energy, %v", withEnergy, err)
				}
				return
			}
			if !errors.Is(err, energy.ErrNoEnergy) || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err %v, want %q", err, c.err)
			}
		})
	}
}
