package energy

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/signal"
)

// busy is a node of two computing workers over [0, 4] s.
func busy(node string) *Timeline {
	return &Timeline{Node: node, R: 2, T0: 0, End: 4, Steps: []signal.Step{{T: 0, Count: [NumClasses]int32{0, 2, 0, 0}}}}
}

// samples are 10 W every 0.1 s over [from, from+5] s of power time.
func samples(node string, from float64) []tracecast.PowerSample {
	var ss []tracecast.PowerSample
	for k := 0; k <= 50; k++ {
		ss = append(ss, tracecast.PowerSample{T: from + float64(k)*0.1, Node: node, Watts: 10})
	}
	return ss
}

// 0 J is never a result: when no node's run is covered, Check fails and
// says why (a wrong node, clocks that do not meet, no sample, gaps); a
// node without energy beside nodes with energy, and samples of nodes with
// no states, are warnings with their reason.
func TestCheckExplainsNoEnergy(t *testing.T) {
	const epoch = 1753114530.0
	for _, c := range []struct {
		name     string
		nodes    []string
		samples  []tracecast.PowerSample
		opts     Options
		err      string // "" when some energy was integrated
		warnings []string
	}{
		{name: "covered", nodes: []string{"n"}, samples: samples("n", -0.5)},
		{name: "wrong node", nodes: []string{"n"}, samples: samples("node0", -0.5),
			err: `no power sample names node "n", where the trace's workers are (the samples name "node0" (51)): put the workers on the power stream's nodes`},
		{name: "epoch-stamped stream without offset", nodes: []string{"n"}, samples: samples("n", epoch),
			err: `node "n"'s 51 power samples span 1753114530.000000–1753114535.000000 s but its run is 0.000000–4.000000 s in power time (trace time + an offset of 0 s): the clocks do not meet; the offset (--offset, offset) is power time minus trace time, 1753114530.000000 would put the first sample at the run's start`},
		{name: "epoch-stamped stream with its offset", nodes: []string{"n"}, samples: samples("n", epoch-0.5), opts: Options{Offset: epoch}},
		{name: "no sample", nodes: []string{"n"}, err: "no power sample arrived"},
		{name: "every interval a gap", nodes: []string{"n"},
			samples: []tracecast.PowerSample{{T: -1, Node: "n", Watts: 10}, {T: 5, Node: "n", Watts: 10}}, opts: Options{MaxGap: 1},
			err: `node "n"'s 2 power samples (-1.000000–5.000000 s) integrate none of its run 0.000000–4.000000 s in power time: fewer than two samples fall in it, or every interval between them is longer than the largest integrated gap (1 s)`},
		{name: "one node of two without power", nodes: []string{"a", "b"}, samples: samples("a", -0.5),
			warnings: []string{`no energy for node "b": no power sample names node "b"`}},
		{name: "samples of unknown nodes beside", nodes: []string{"n"}, samples: append(samples("n", -0.5), samples("x", -0.5)...),
			warnings: []string{`power samples of nodes with no states are not used: "x" (51); the trace's workers are on "n"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tls := map[string]*Timeline{}
			for _, n := range c.nodes {
				tls[n] = busy(n)
			}
			j := NewJoiner(tls, c.opts)
			j.Add(c.samples)
			res := j.Finish()
			err := res.Check()
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if !errors.Is(err, ErrNoEnergy) || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err %v\nwant %q", err, c.err)
			}
			if len(res.Warnings) != len(c.warnings) {
				t.Fatalf("warnings %q, want %q", res.Warnings, c.warnings)
			}
			for i, w := range c.warnings {
				if !strings.Contains(res.Warnings[i], w) {
					t.Errorf("warning %q, want %q", res.Warnings[i], w)
				}
			}
		})
	}
}

// I/O calls that all fall outside the run (strace -tt's seconds since
// midnight, without an I/O offset) add no storage: a warning says so and
// which offset would align them; so do calls on a node with no worker.
func TestIOWarnings(t *testing.T) {
	rules := signal.StarPU()
	if err := rules.Compile(); err != nil {
		t.Fatal(err)
	}
	st := func(w string, a, b float64) tracecast.Entity {
		return tracecast.Entity{Nature: tracecast.NatureState, Container: w, Type: "Worker State", Start: a, End: b, Value: "GEMM"}
	}
	io := []tracecast.Entity{{Nature: tracecast.NatureState, Container: "pid 7", Type: "IO State", Start: 22207.5, End: 22207.6, Value: "write"}}
	for _, c := range []struct {
		name    string
		mapping map[string]string
		offset  float64
		want    string // "" for no warning
	}{
		{name: "no offset", offset: 0, want: "none of the 1 I/O calls falls in the run, so storage is 0: they span 22207.500000–22207.600000 s on the I/O stream's clock, " +
			"the run 1.000000–3.000000 s of trace time, with an I/O offset of 0 s; the offset is the I/O stream's time minus trace time " +
			"(strace -tt prints seconds since midnight), and 22206.500000 would put the first call at the run's start"},
		{name: "the right offset", offset: 22206},
		{name: "a node with no worker", mapping: map[string]string{"pid 7": "elsewhere"}, offset: 22206, want: "1 of 1 I/O calls are on nodes with no worker"},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := NewCollector(rules, c.mapping, "")
			col.Add([]tracecast.Entity{st("CPU0", 1000, 3000)})
			col.AddIO(io, c.offset)
			if _, err := col.Build(1000); err != nil {
				t.Fatal(err)
			}
			ws := col.IOWarnings()
			if c.want == "" {
				if len(ws) != 0 {
					t.Fatalf("warnings %q", ws)
				}
				return
			}
			if len(ws) != 1 || ws[0] != c.want && !strings.Contains(ws[0], c.want) {
				t.Fatalf("warnings %q\nwant %q", ws, c.want)
			}
		})
	}
}

// The stage (tracecast energy, the energy component of a pipeline) fails
// rather than emit rows of 0 J, and logs its warnings.
func TestStageNoEnergy(t *testing.T) {
	ents := []tracecast.Entity{
		{Nature: tracecast.NatureContainer, Container: "0", Type: "Worker", Value: "CPU0", End: 2000},
		{Nature: tracecast.NatureState, Container: "CPU0", Type: "Worker State", Start: 0, End: 2000, Value: "GEMM"},
	}
	io := []tracecast.IOCall{{PID: 7, Op: "write", Time: 50000, Dur: 0.01}}
	for _, c := range []struct {
		name    string
		samples []tracecast.PowerSample
		err     string
		warn    string
	}{
		{name: "wrong node", samples: samples("taurus-1", -0.5), err: `no power sample names node "node0"`},
		{name: "no offset", samples: samples(DefaultNode, 1753114530), err: "the clocks do not meet"},
		{name: "I/O without its offset", samples: samples(DefaultNode, -0.5), warn: "none of the 1 I/O calls falls in the run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			o := DefaultStageConfig()
			o.Result = true
			p, err := newStage(component.Env{Logger: zerolog.New(&logs)}, o)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, items := range []any{ents, c.samples, io} {
				if err := p.Process(ctx, tracecast.Batch{Stream: "t", Items: items}, nil); err != nil {
					t.Fatal(err)
				}
			}
			var rows int
			var res *Result
			err = p.Flush(ctx, func(_ context.Context, b tracecast.Batch) error {
				switch items := b.Items.(type) {
				case []tracecast.EnergyRow:
					rows += len(items)
				case []*Result:
					res = items[0]
				}
				return nil
			})
			if c.err != "" {
				if !errors.Is(err, ErrNoEnergy) || !strings.Contains(err.Error(), c.err) || rows != 0 {
					t.Fatalf("err %v, %d rows; want %q and no row", err, rows, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), `"level":"warn"`) || !strings.Contains(logs.String(), c.warn) {
				t.Errorf("log lacks the warning %q:\n%s", c.warn, logs.String())
			}
			if res == nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], c.warn) {
				t.Errorf("result warnings %v", res)
			}
		})
	}
}
