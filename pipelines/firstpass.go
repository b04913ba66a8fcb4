package pipelines

import (
	"context"
	"errors"
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// errStoppedEarly: a graceful stop came during the first pass; the
// pipeline does not run (Run returns nil, as after any graceful stop).
var errStoppedEarly = errors.New("stopped during the first pass")

// firstPass runs the first pass of the stages of g that ask for one
// (component.FirstPasser): the sources upstream of them read again, their
// parsers and the stages between, in a graph of their own that feeds the
// stages' first-pass processors and has no sinks. It returns once that
// graph has drained; a stage that needs a first pass it cannot have
// (standard input) fails here, before anything runs.
func firstPass(ctx context.Context, p *plan, g *graph, opts RunOptions) error {
	cfg := p.cfg
	stages := map[string]*Component{}
	for _, c := range cfg.Stages {
		stages[c.ID] = c
	}
	sources := map[string]sourceInfo{}
	for _, s := range g.sources {
		sources[s.id] = s
	}
	// upstream collects the ids of the components c reads from, transitively.
	var upstream func(c *Component, seen map[string]bool)
	upstream = func(c *Component, seen map[string]bool) {
		for _, in := range c.Inputs {
			if seen[in] {
				continue
			}
			seen[in] = true
			if s := stages[in]; s != nil {
				upstream(s, seen)
			}
		}
	}
	rereads := map[string]tracecast.Source{}
	reread := func(id string) bool {
		if src, ok := rereads[id]; ok {
			return src != nil
		}
		var again tracecast.Source
		if r, ok := sources[id].src.src.(component.Rereadable); ok {
			if s, ok := r.Reread(); ok {
				again = s
			}
		}
		rereads[id] = again
		return again != nil
	}
	procs := map[string]tracecast.Processor{} // stage id → its first-pass processor
	need := map[string]bool{}                 // components of the first-pass graph
	for _, n := range g.nodes {
		fp, ok := n.proc.(component.FirstPasser)
		if !ok || n.kind != component.KindStage {
			continue
		}
		seen := map[string]bool{}
		upstream(stages[n.id], seen)
		rereadable := true
		for id := range seen {
			if _, isSource := sources[id]; isSource && !reread(id) {
				rereadable = false
			}
		}
		proc, err := fp.FirstPass(rereadable)
		if err != nil {
			return fmt.Errorf("%s: %w", n.label(), err)
		}
		if proc == nil {
			continue
		}
		procs[n.id] = proc
		need[n.id] = true
		for id := range seen {
			need[id] = true
		}
	}
	if len(procs) == 0 {
		return nil
	}
	sub := *cfg
	sub.Sources, sub.Stages, sub.Sinks = nil, nil, nil
	for _, c := range cfg.Sources {
		if need[c.ID] {
			sub.Sources = append(sub.Sources, c)
		}
	}
	for _, c := range cfg.Stages {
		if need[c.ID] {
			sub.Stages = append(sub.Stages, c)
		}
	}
	fo := RunOptions{Registry: opts.Registry, Logger: opts.Logger.With().Str("pass", "first").Logger(), HardStop: opts.HardStop,
		Embedded: opts.Embedded, Report: func(string, string, any) {}} // the main pass reports
	first, err := build(&plan{cfg: &sub, entries: p.entries, opts: p.opts}, fo)
	if err != nil {
		return err
	}
	for i := range first.sources {
		s := &first.sources[i]
		s.src.src = rereads[s.id]
		s.progress, _ = s.src.src.(component.ProgressReporter)
	}
	for _, n := range first.nodes {
		if proc := procs[n.id]; proc != nil && n.kind == component.KindStage {
			n.proc = proc
		}
	}
	if err := first.run(ctx, fo); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errStoppedEarly
	}
	return nil
}
