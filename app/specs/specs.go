// Package specs declares the pipelines tracecast's commands run: each
// command's analysis is a pipelines.Spec of the same components a pipeline
// file uses (so a command and a file give the same records), with the
// in-process sinks that collect what the command prints. Runner runs them
// with the built-in components; the commands only translate their flags
// into the options here and print the results.
package specs

import (
	"context"
	"io"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/app/reader"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines"
)

// Runner runs the commands' pipelines.
type Runner struct {
	Log zerolog.Logger
	// Report, when set, receives the components' end-of-stream reports (a
	// parser's statistics) instead of the log.
	Report func(id, stream string, report any)
	// NewLogger makes the logger of a pipeline run with a progress bar,
	// writing above the bar.
	NewLogger func(io.Writer) zerolog.Logger
}

// OptionError is an invalid option of a command's pipeline: the user's
// flag, not a configuration file's (reader.OptionError).
type OptionError = reader.OptionError

// reader is r as the reading commands' runner, with every built-in
// component.
func (r Runner) reader() reader.Runner {
	return reader.Runner{Log: r.Log, Report: r.Report, NewLogger: r.NewLogger, Registry: builtin.Registry}
}

// Run runs spec until its input ends or ctx is cancelled, with every
// built-in component (reader.Runner.Run).
func (r Runner) Run(ctx context.Context, spec pipelines.Spec, sinks map[string]tracecast.Sink) error {
	return r.reader().Run(ctx, spec, sinks)
}

// Trace is a trace read by a file source with the paje parser.
type Trace struct {
	Path string // "-": standard input; plain or gzip
	// The parser's lenient and no_strict.
	Lenient  bool `flag:"lenient" help:"skip bad trace lines instead of failing"`
	NoStrict bool `flag:"no-strict,n" help:"accept the deprecated field names of old traces (pj_dump -n)"`
	// The reader's limits, as the states command's (all zero: the
	// defaults).
	paje.Limits
}

// DefaultTrace is a trace with the reader's default limits (the commands'
// flag defaults).
func DefaultTrace() Trace { return Trace{Limits: paje.DefaultLimits()} }

// Source is the trace's source, with id "trace".
func (t Trace) Source() pipelines.Node {
	return pajeSource("trace", t.Path, t.Limits, map[string]any{"lenient": t.Lenient, "no_strict": t.NoStrict})
}

// pajeSource is a file source read by the paje parser with options and
// the limits (all zero: the defaults; one given as 0 or less is refused
// as in the states command). As there, the file source hands the parser
// lines far longer than its own limit, so that the parser judges them:
// FILE:LINE, or a counted skip with lenient.
func pajeSource(id, path string, l paje.Limits, options map[string]any) pipelines.Node {
	if l == (paje.Limits{}) {
		l = paje.DefaultLimits()
	}
	for k, v := range map[string]int{"max_line_bytes": l.MaxLineBytes, "max_containers": l.MaxContainers,
		"max_open_states": l.MaxOpenStates, "max_buffered": l.MaxBuffered, "max_types": l.MaxTypes} {
		options[k] = v
	}
	return pipelines.Node{ID: id, Type: "file", Options: map[string]any{"path": path, "max_line_bytes": max(64<<20, l.MaxLineBytes+1)},
		Parser: &pipelines.Node{Type: "paje", Options: options}}
}

// Name names the trace in records and messages: its path, <stdin> for -.
func (t Trace) Name() string { return reader.TraceName(t.Path) }

// Signal are the options of a signal (or predict) stage: how the trace's
// occurrence signal is sampled.
type Signal struct {
	Class      string              `flag:"class" help:"the class counted: idle, compute, comm, other"`
	Rules      string              `flag:"rules" help:"state classes: auto (starpu when there are StarPU worker states, else smpi), starpu, smpi"`
	Period     tracecast.TraceTime `flag:"period" help:"sampling period: a duration (1ms, 250us) or a number in the trace's time unit (ms for StarPU, s for SMPI); 0: automatic, from a first pass over the file (give it on standard input); negative: an error"`
	MinPeriod  tracecast.TraceTime `flag:"min-period" help:"floor for the automatic period: a duration or a number in the trace's time unit (negative: an error)"`
	MaxSamples int                 `flag:"max-samples" help:"the automatic period is raised so that the signal has at most this many samples; a given period making more is refused"`
}

// DefaultSignal counts idle containers, classified by the automatic rules,
// with at most maxSamples samples.
func DefaultSignal(maxSamples int) Signal {
	return Signal{Class: "idle", Rules: "auto", MaxSamples: maxSamples}
}

// Stage is a stage of type typ (signal or predict) reading "trace", with id
// typ.
func (s Signal) Stage(typ string) pipelines.Node {
	return pipelines.Node{ID: typ, Type: typ, Inputs: []string{"trace"}, Options: map[string]any{"rules": s.Rules, "class": s.Class,
		"period": s.Period, "min_period": s.MinPeriod, "max_samples": s.MaxSamples}}
}

// collect is a sink node of the command's own type id, reading inputs.
func collect(id string, inputs ...string) pipelines.Node {
	return pipelines.Node{ID: id, Type: id, Inputs: inputs}
}
