// Package reader runs the states command: a trace read by the file source
// and the Paje parser into a file sink, through the pipelines runtime,
// with only the components that takes (Registry). It is apart from
// app/specs, which links every command's components, so that a binary of
// the reading commands links what they use (docs/performance.md).
package reader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/rs/zerolog"
	"gopkg.in/yaml.v3"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin/files"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/internal/lineerr"
	"github.com/tracecast/tracecast/internal/memlimit"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/internal/paths"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/component"
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
	// Registry makes the registry of the component types a spec may use
	// (nil: this package's Registry).
	Registry func() *component.Registry
}

// Registry returns a new registry of the states command's components with
// its text formats (app/builtin/files): the front binary's. A Runner of
// --format arrow or parquet needs Registry set to one with the columnar
// sinks (app/builtin).
func Registry() *component.Registry {
	r := component.NewRegistry()
	files.Register(r)
	return r
}

// OptionError is an invalid option of a command's pipeline: the user's
// flag, not a configuration file's. Its message is the components' own
// ("class: unknown class ..."), without the generated file's lines.
type OptionError struct{ Msgs []string }

func (e *OptionError) Error() string { return strings.Join(e.Msgs, "; ") }

// Run runs spec until its input ends or ctx is cancelled (SIGINT and
// SIGTERM stop it gracefully, then at once), with sinks registered as sink
// types under their names. An invalid option is an *OptionError; a
// component's failure is its own error (FILE:LINE: reason from a parser, a
// file that cannot be opened), without the runtime's labels, which name a
// pipeline the user never wrote.
func (r Runner) Run(ctx context.Context, spec pipelines.Spec, sinks map[string]tracecast.Sink) error {
	newRegistry := r.Registry
	if newRegistry == nil {
		newRegistry = Registry
	}
	reg := newRegistry()
	for name, s := range sinks {
		component.RegisterSinkValue(reg, name, s)
	}
	settings := map[string]any{"status_interval": "0s"}
	for k, v := range spec.Settings { // the command's own
		settings[k] = v
	}
	spec.Settings = settings
	cfg, err := spec.Config()
	if err == nil {
		err = pipelines.Check(reg, cfg)
	}
	var ce *pipelines.ConfigError
	if errors.As(err, &ce) {
		oe := &OptionError{}
		for _, p := range ce.Problems {
			oe.Msgs = append(oe.Msgs, p.Msg)
		}
		return oe
	} else if err != nil {
		return err
	}
	ctx, hard, stop := pipelines.WithSignals(ctx, r.Log)
	defer stop()
	err = pipelines.Run(ctx, cfg, pipelines.RunOptions{Registry: reg, Logger: r.Log, HardStop: hard, Embedded: true, Report: r.Report})
	var le *lineerr.Error
	var oe *output.Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &le):
		return le
	case errors.As(err, &oe):
		return oe // "out.csv: no space left on device (...)"
	case errors.As(err, &pe):
		return pe
	}
	return err
}

// RunStates is the states command: a soft memory limit derived from the
// reader's limits (the reader's live heap is bounded by them; the limit
// keeps the collector from letting the process grow to twice that between
// collections; MemLimit or GOMEMLIMIT override it), the outputs checked,
// then States.
func (r Runner) RunStates(ctx context.Context, o States) error {
	if _, err := memlimit.Set(o.MemLimit, o.Parser.HeapBound()); err != nil {
		return cliflags.Usage(err)
	}
	if err := cliflags.Usage(paths.CheckOutputs([]string{o.Trace}, o.Out, o.Out+".tmp")); err != nil {
		return err
	}
	_, err := r.States(ctx, o)
	return err
}

// States are the states command's options: a trace read by the paje
// parser into a pjdump, csv, jsonl or arrow output.
type States struct {
	Trace  string
	Format string `flag:"format" help:"output format: pjdump, csv, jsonl, arrow, parquet (needs -o)"`
	Out    string `flag:"output,o" help:"output file (- for standard output)"`
	// AllEntities: with the pjdump format, every entity, not pj_dump's
	// window.
	AllEntities bool `flag:"all-entities" help:"with --format pjdump: print every entity and end the trace at its latest time, instead of reproducing pj_dump's window"`
	// MemLimit is the soft memory limit RunStates sets ("": derived from
	// the parser's limits).
	MemLimit string `flag:"memory-limit" help:"soft memory limit (512MiB, 2GiB, off; default: derived from the reader's limits; GOMEMLIMIT also works)"`
	Parser   paje.ParserConfig
	// Skipped, when set, gets the counts of bad lines skipped (lenient).
	Skipped io.Writer
}

// States resolves a trace into its entities, and returns the parser's
// statistics (also after a failure: what was read until then), which it
// logs: a warning when the pj_dump output may differ near the end, the
// lines and entities at debug level.
func (r Runner) States(ctx context.Context, o States) (paje.Stats, error) {
	var stats paje.Stats
	unit := o.Parser.TimeUnit
	if _, ok := tracecast.UnitsPerSecond(unit); !ok && unit != "auto" {
		return stats, &OptionError{Msgs: []string{fmt.Sprintf("unknown --time-unit %q", unit)}}
	}
	sink := pipelines.Node{ID: "out", Type: o.Format, Inputs: []string{"trace"}, Options: map[string]any{"path": o.Out}}
	switch o.Format {
	case "pjdump":
		o.Parser.PjdumpQuirks = !o.AllEntities
	case "csv", "jsonl":
	case "arrow":
		sink.Options["format"] = "file"
		if o.Out == "-" {
			sink.Options["format"] = "stream"
		}
		if unit != "auto" { // else the unit the parser detects
			sink.Options["time_unit"] = unit
		}
	case "parquet":
		if o.Out == "-" {
			return stats, &OptionError{Msgs: []string{"--format parquet needs -o FILE: a Parquet file ends with its footer, it cannot stream"}}
		}
		if unit != "auto" {
			sink.Options["time_unit"] = unit
		}
	default:
		return stats, &OptionError{Msgs: []string{fmt.Sprintf("unknown --format %q (pjdump, csv, jsonl, arrow or parquet)", o.Format)}}
	}
	// The file source hands the parser lines far longer than its own
	// limit, so that it judges them (FILE:LINE, or skipped).
	parser, err := optionsOf(o.Parser)
	if err != nil {
		return stats, err
	}
	src := pipelines.Node{ID: "trace", Type: "file", Options: map[string]any{"path": o.Trace, "max_line_bytes": max(64<<20, o.Parser.MaxLineBytes+1)},
		Parser: &pipelines.Node{Type: "paje", Options: parser}}
	r.Report = func(_, _ string, rep any) { stats, _ = rep.(paje.Stats) }
	// Four batches on each edge keep the sink busy; more only hold
	// memory: 2048 entities (400 KiB) a batch.
	settings := map[string]any{"edge_capacity": statesEdgeCapacity}
	err = r.Run(ctx, pipelines.Spec{Name: "states", Settings: settings, Sources: []pipelines.Node{src}, Sinks: []pipelines.Node{sink}}, nil)
	if stats.QuirksInexact {
		r.Log.Warn().Msg(paje.QuirksInexactMessage)
	}
	if o.Skipped != nil {
		writeSkipped(o.Skipped, TraceName(o.Trace), stats)
	}
	r.Log.Debug().Int64("lines", stats.Lines).Int64("entities", stats.Entities).Int64("late", stats.Late).
		Int("max_buffered", stats.MaxBuffered).Msg("trace read")
	return stats, err
}

// statesEdgeCapacity is the capacity of the edges of the states command's
// pipeline.
const statesEdgeCapacity = 4

// optionsOf is a component's config struct as the keys of a pipeline
// file, through its YAML tags.
func optionsOf(cfg any) (map[string]any, error) {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, yaml.Unmarshal(b, &m)
}

// writeSkipped writes the counts of skipped bad lines by reason, after a
// line naming the trace, when there are any.
func writeSkipped(w io.Writer, name string, stats paje.Stats) {
	if n := stats.Skipped.Total(); n > 0 {
		fmt.Fprintf(w, "tracecast: %s: skipped %d bad lines:\n", name, n)
		for _, reason := range stats.Skipped.Reasons() {
			fmt.Fprintf(w, "  %8d  %s\n", stats.Skipped[reason], reason)
		}
	}
}

// TraceName names a trace in records and messages: its path, <stdin> for -.
func TraceName(path string) string {
	if path == "-" {
		return "<stdin>"
	}
	return path
}
