package closedloop

import (
	"fmt"
	"strconv"

	bf "github.com/tracecast/tracecast/backfill"
	"github.com/tracecast/tracecast/study/synth"
)

// engineBackEnd puts a backfill.Engine behind the simulation: the
// workers' idle spells as the list scheduler sees them, the ready and
// submitted counts it knows, in time order, in seconds (the engine's unit:
// its grids and its 1 ns tolerance are in seconds); the engine's launches,
// as it runs them, back in the trace's milliseconds.
//
// The engine runs a launch lazily, when an event after it arrives;
// Advance(t) sends it a change that changes nothing (a worker "becoming"
// what it is) so that every launch before t has run: the simulation knows
// which workers are held before it gives out tasks at t, and writes the
// back-end tasks' lines in time order with the primary's.
type engineBackEnd struct {
	e        *bf.Engine
	names    []string
	index    map[string]int
	idle     []bool
	out      []synth.Launch
	res      *bf.Result
	max      int // Config.MaxLaunches
	launches int
	err      error
	// ready and submitted are the counts last given (−1: none yet).
	ready, submitted int
}

func newEngineBackEnd(cfg bf.Config, maxLaunches int) (*engineBackEnd, error) {
	b := &engineBackEnd{index: map[string]int{}, max: maxLaunches, ready: -1, submitted: -1}
	e, err := bf.New(cfg, bf.Sink{Launch: b.launch})
	if err != nil {
		return nil, err
	}
	b.e = e
	return b, nil
}

func (b *engineBackEnd) launch(l bf.Launch) {
	if b.launches++; b.launches > b.max {
		if b.err == nil {
			b.err = fmt.Errorf("more than %d back-end tasks (--max-launches): lengthen --task or raise the limit", b.max)
		}
		return
	}
	b.out = append(b.out, synth.Launch{Worker: b.index[l.Worker], Start: l.Start * 1e3, End: l.End * 1e3})
}

// Begin names the workers as tracecast states does (CPU0, CPU1, ...).
func (b *engineBackEnd) Begin(t float64, workers int) {
	b.names = make([]string, workers)
	b.idle = make([]bool, workers)
	for w := range b.names {
		b.names[w] = "CPU" + strconv.Itoa(w)
		b.index[b.names[w]] = w
		b.idle[w] = true
	}
	b.e.Begin(t/1e3, b.names, true)
}

func (b *engineBackEnd) Idle(t float64, w int, idle bool) {
	b.idle[w] = idle
	b.e.Change(t/1e3, b.names[w], idle)
}

// Counts passes the counts on when they change (each call makes the
// engine look at every idle worker's stratum again).
func (b *engineBackEnd) Counts(t float64, ready, submitted int) {
	if ready != b.ready {
		b.ready = ready
		b.e.Ready(t/1e3, ready)
	}
	if submitted != b.submitted {
		b.submitted = submitted
		b.e.Submitted(t/1e3, submitted)
	}
}

func (b *engineBackEnd) Advance(t float64) []synth.Launch {
	b.out = b.out[:0]
	if b.err == nil {
		b.e.Change(t/1e3, b.names[0], b.idle[0])
	}
	return b.out
}

func (b *engineBackEnd) Finish(t float64) []synth.Launch {
	b.out = b.out[:0]
	b.res = b.e.Finish(t / 1e3)
	return b.out
}

// row is the engine's table row for the policy run (first-order delay,
// launches).
func (b *engineBackEnd) row(policy string) (bf.Row, error) {
	if b.res != nil {
		for _, r := range b.res.Rows {
			if r.Policy == policy {
				return r, nil
			}
		}
	}
	return bf.Row{}, fmt.Errorf("closed loop: the engine has no row for %s", policy)
}
