package specs

import (
	"context"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines"
)

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
		return stats, &OptionError{[]string{fmt.Sprintf("unknown --time-unit %q", unit)}}
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
			return stats, &OptionError{[]string{"--format parquet needs -o FILE: a Parquet file ends with its footer, it cannot stream"}}
		}
		if unit != "auto" {
			sink.Options["time_unit"] = unit
		}
	default:
		return stats, &OptionError{[]string{fmt.Sprintf("unknown --format %q (pjdump, csv, jsonl, arrow or parquet)", o.Format)}}
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
		writeSkipped(o.Skipped, Trace{Path: o.Trace}.Name(), stats)
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
