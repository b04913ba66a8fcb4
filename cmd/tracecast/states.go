package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/specs"
)

func newStatesCmd() *cobra.Command {
	var format, out string
	var allEntities bool
	d := paje.DefaultParserConfig()
	parser := map[string]any{}
	cmd := &cobra.Command{
		Use:   "states [flags] TRACE|-",
		Short: "Resolve a Paje trace into containers, states, variables, events and links (a pj_dump replacement)",
		Long: `states reads a Paje trace (plain or gzip, a file or - for standard input) and
prints every container, state, variable, event and link it resolves.

--format pjdump prints exactly the lines of pajeng's pj_dump (Debian 1.3.6),
in completion order rather than pj_dump's container order (sort both to
compare). csv is RFC 4180 CSV with a header row; jsonl one JSON object per
record; arrow an Arrow IPC file (schema in the README).

Unlike pj_dump, states streams: memory is bounded by the live containers,
open states and pending links, not by the trace's length. Events are
processed in file order, like pj_dump, which requires time order only per
container and type. StarPU breaks that for one kind of event: it writes a
worker's GFlop/s sample when the task ends, stamped with the task's start.
Variable samples up to --reorder-horizon late (in trace time units; default
3 s worth, i.e. 3000 for StarPU's milliseconds) are put back in order, so
raw StarPU traces that pj_dump rejects are read as written.
--reorder-horizon 0 is pj_dump's rule.

The command is the pipeline file source → paje parser → pjdump, csv, jsonl
or arrow sink; the flags are the parser's options.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The reader's live heap is a few tens of MiB whatever the
			// trace's size; a soft limit keeps the garbage collector from
			// letting the process grow to twice that between collections.
			// GOMEMLIMIT wins.
			if os.Getenv("GOMEMLIMIT") == "" {
				debug.SetMemoryLimit(52 << 20)
			}
			unit := parser["time_unit"].(*string)
			switch *unit {
			case "auto", "s", "ms", "us", "ns":
			default:
				return usageErr(fmt.Errorf("unknown --time-unit %q", *unit))
			}
			if err := checkOutputs(args, out, out+".tmp"); err != nil {
				return err
			}
			sink := pipelines.Node{ID: "out", Type: format, Inputs: []string{"trace"}, Options: map[string]any{"path": out}}
			switch format {
			case "pjdump":
				parser["pjdump_quirks"] = !allEntities
			case "csv", "jsonl":
			case "arrow":
				sink.Options["format"] = "file"
				if out == "-" {
					sink.Options["format"] = "stream"
				}
				if *unit != "auto" { // else the unit the parser detects
					sink.Options["time_unit"] = *unit
				}
			default:
				return usageErr(fmt.Errorf("unknown --format %q (pjdump, csv, jsonl or arrow)", format))
			}
			// The file source hands the parser lines far longer than its
			// own limit, so that it judges them (FILE:LINE, or skipped).
			maxLine := *parser["max_line_bytes"].(*int)
			src := pipelines.Node{ID: "trace", Type: "file", Options: map[string]any{"path": args[0], "max_line_bytes": max(64<<20, maxLine+1)},
				Parser: &pipelines.Node{Type: "paje", Options: parser}}
			spec := pipelines.Spec{Name: "states", Sources: []pipelines.Node{src}, Sinks: []pipelines.Node{sink}}
			var stats paje.Stats
			err := specs.Runner{Log: log, Report: func(_, _ string, r any) { stats, _ = r.(paje.Stats) }}.Run(cmd.Context(), spec, nil)
			if stats.QuirksInexact {
				log.Warn().Msg(paje.QuirksInexactMessage)
			}
			if n := stats.Skipped.Total(); n > 0 {
				name := args[0]
				if name == "-" {
					name = "<stdin>"
				}
				fmt.Fprintf(os.Stderr, "tracecast: %s: skipped %d bad lines:\n", name, n)
				for _, r := range stats.Skipped.Reasons() {
					fmt.Fprintf(os.Stderr, "  %8d  %s\n", stats.Skipped[r], r)
				}
			}
			log.Debug().Int64("lines", stats.Lines).Int64("entities", stats.Entities).Int64("late", stats.Late).
				Int("max_buffered", stats.MaxBuffered).Msg("trace read")
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "pjdump", "output format: pjdump, csv, jsonl, arrow")
	f.StringVarP(&out, "output", "o", "-", "output file (- for standard output)")
	flag := func(key string, p any) { parser[key] = p }
	flag("lenient", f.Bool("lenient", false, "count and skip bad lines instead of failing; print the counts by reason"))
	flag("user_defined", f.BoolP("user-defined", "u", false, "also output user-defined fields (pj_dump -u)"))
	flag("no_strict", f.BoolP("no-strict", "n", false, "accept the deprecated field names of old traces (pj_dump -n)"))
	flag("ignore_incomplete_links", f.BoolP("ignore-incomplete-links", "z", false, "drop links that never got both ends (pj_dump -z)"))
	flag("reorder_horizon", f.Float64("reorder-horizon", -1, "how late a variable sample may be, in trace time units, and still be put back in order (-1: 3 s worth of the time unit; 0: none, as pj_dump)"))
	flag("max_buffered", f.Int("max-buffered", d.MaxBuffered, "most variable samples held for reordering"))
	flag("max_line_bytes", f.Int("max-line-bytes", d.MaxLineBytes, "longest accepted line, in bytes"))
	flag("max_containers", f.Int("max-containers", d.MaxContainers, "most live containers"))
	flag("max_open_states", f.Int("max-open-states", d.MaxOpenStates, "most open states and pending links"))
	f.BoolVar(&allEntities, "all-entities", false, "with --format pjdump: print every entity and end the trace at its latest time, instead of reproducing pj_dump's window")
	flag("time_unit", f.String("time-unit", "auto", "unit of the trace's times: auto (ms for StarPU, s otherwise), s, ms, us, ns"))
	return cmd
}
