package energy

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// TestStageTimeUnit: the stage reads the trace's times in its time_unit
// option, else in the unit the paje parser sent with the entities (given
// or detected from the header), else ms with the StarPU rules.
func TestStageTimeUnit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		option     string
		meta       map[string]string
		wantEndSec float64
	}{
		{"the parser's unit", "", map[string]string{"time_unit": "s"}, 2000},
		{"the parser's milliseconds", "", map[string]string{"time_unit": "ms"}, 2},
		{"the option over the parser's", "us", map[string]string{"time_unit": "s"}, 0.002},
		{"nothing said: ms for StarPU", "", nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultStageConfig()
			o.TimeUnit, o.Result = tc.option, true
			p, err := newStage(component.Env{Logger: zerolog.Nop()}, o)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			ents := []tracecast.Entity{
				{Nature: tracecast.NatureContainer, Container: "0", Type: "Worker", Value: "CPU0", End: 2000},
				{Nature: tracecast.NatureState, Container: "CPU0", Type: "Worker State", Start: 0, End: 2000, Value: "GEMM"},
			}
			if err := p.Process(ctx, tracecast.Batch{Stream: "t", Items: ents, Meta: tc.meta}, nil); err != nil {
				t.Fatal(err)
			}
			// Power over the run whatever the unit (without, the stage
			// fails: no energy integrated).
			ps := []tracecast.PowerSample{{T: 0, Node: DefaultNode, Watts: 1}, {T: 0.001, Node: DefaultNode, Watts: 1}, {T: 3000, Node: DefaultNode, Watts: 1}}
			if err := p.Process(ctx, tracecast.Batch{Stream: "p", Items: ps}, nil); err != nil {
				t.Fatal(err)
			}
			var res *Result
			if err := p.Flush(ctx, func(_ context.Context, b tracecast.Batch) error {
				if r, ok := b.Items.([]*Result); ok {
					res = r[0]
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			tl := res.Timelines[DefaultNode]
			if tl == nil || tl.End != tc.wantEndSec {
				t.Fatalf("timeline %+v, want the run to end at %g s", tl, tc.wantEndSec)
			}
		})
	}
}

func TestParseMap(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want map[string]string
		err  string
	}{
		{in: nil, want: map[string]string{}},
		{in: []string{"CPU0=n1", "CPU1=n2=x"}, want: map[string]string{"CPU0": "n1", "CPU1": "n2=x"}},
		{in: []string{"CPU0"}, err: `--map "CPU0": want CONTAINER=NODE`},
		{in: []string{"=n"}, err: `--map "=n": want CONTAINER=NODE`},
		{in: []string{"c="}, err: `--map "c=": want CONTAINER=NODE`},
	} {
		got, err := ParseMap(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: %v, want %q", tc.in, err, tc.err)
			}
		} else if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%v: %v %v", tc.in, got, err)
		}
	}
}

// TestStageAutoRules: with rules auto the stage takes StarPU's rules when
// the trace has worker states, else SMPI's (as the signal stage and the
// HTML report choose), and reads times in that rule set's default unit.
func TestStageAutoRules(t *testing.T) {
	starpu := []tracecast.Entity{
		{Nature: tracecast.NatureContainer, Container: "0", Type: "Worker", Value: "CPU0", End: 2000},
		{Nature: tracecast.NatureState, Container: "CPU0", Type: "Worker State", Start: 0, End: 2000, Value: "GEMM"},
	}
	smpi := []tracecast.Entity{
		{Nature: tracecast.NatureContainer, Container: "0", Type: "MPI", Value: "rank-0", End: 2},
		{Nature: tracecast.NatureState, Container: "rank-0", Type: "MPI_STATE", Start: 0, End: 1, Value: "MPI_Recv"},
		{Nature: tracecast.NatureState, Container: "rank-0", Type: "MPI_STATE", Start: 1, End: 2, Value: "computing"},
	}
	for _, tc := range []struct {
		name, rules string
		ents        []tracecast.Entity
		wantEnd     float64
		wantErr     bool
	}{
		{"auto on StarPU", "auto", starpu, 2, false},
		{"auto on SMPI", "auto", smpi, 2, false},
		{"starpu on SMPI", "starpu", smpi, 0, true},
		{"auto on neither", "auto", starpu[:1], 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultStageConfig()
			o.Rules, o.Result = tc.rules, true
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			p, err := newStage(component.Env{Logger: zerolog.Nop()}, o)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := p.Process(ctx, tracecast.Batch{Stream: "t", Items: tc.ents}, nil); err != nil {
				t.Fatal(err)
			}
			// Power over the whole run (2 s): the stage refuses 0 J.
			power := []tracecast.PowerSample{{T: 0, Node: DefaultNode, Watts: 100}, {T: 1, Node: DefaultNode, Watts: 100}, {T: 2, Node: DefaultNode, Watts: 100}}
			if err := p.Process(ctx, tracecast.Batch{Stream: "power", Items: power}, nil); err != nil {
				t.Fatal(err)
			}
			var res *Result
			err = p.Flush(ctx, func(_ context.Context, b tracecast.Batch) error {
				if r, ok := b.Items.([]*Result); ok {
					res = r[0]
				}
				return nil
			})
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error for a trace without the rules' states")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tl := res.Timelines[DefaultNode]; tl == nil || tl.End != tc.wantEnd {
				t.Fatalf("timeline %+v, want the run to end at %g s", tl, tc.wantEnd)
			}
		})
	}
	o := DefaultStageConfig()
	o.Rules = "paje"
	if o.Validate() == nil {
		t.Fatal("rules paje accepted")
	}
}

// TestStageMaxSamples: the samples held until the end of input are
// bounded; past max_samples the run fails saying so (a 3 GB Kwollect
// document was all held), and a stream within it is integrated whole.
func TestStageMaxSamples(t *testing.T) {
	o := DefaultStageConfig()
	o.MaxSamples = 10
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := newStage(component.Env{Logger: zerolog.Nop()}, o)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(n int) tracecast.Batch {
		ss := make([]tracecast.PowerSample, n)
		for i := range ss {
			ss[i] = tracecast.PowerSample{T: float64(i), Node: DefaultNode, Watts: 100}
		}
		return tracecast.Batch{Stream: "p", Items: ss}
	}
	ctx := context.Background()
	if err := p.Process(ctx, batch(6), nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Process(ctx, batch(4), nil); err != nil {
		t.Fatalf("10 samples of at most 10: %v", err)
	}
	if err := p.Process(ctx, batch(1), nil); err == nil || !strings.Contains(err.Error(), "more than 10 power samples (max_samples)") {
		t.Fatalf("the 11th sample: %v", err)
	}
	o.MaxSamples = 0
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "max_samples: must be positive") {
		t.Fatalf("max_samples 0: %v", err)
	}
}
