package main

import (
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/parsers/paje"
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
prints every container, state, variable, event and link it resolves: as
pajeng's pj_dump prints them (--format pjdump, in completion order: sort
both to compare), as CSV with a header row, JSON lines or an Arrow IPC file
(schemas in the README). It streams: memory is bounded by the live
containers, open states and pending links, not by the trace's length.
Variable samples up to --reorder-horizon late are put back in order, so raw
StarPU traces, which pj_dump rejects, are read as written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The reader's live heap is a few tens of MiB whatever the
			// trace's size; a soft limit keeps the garbage collector from
			// letting the process grow to twice that between collections.
			// GOMEMLIMIT wins.
			if os.Getenv("GOMEMLIMIT") == "" {
				debug.SetMemoryLimit(52 << 20)
			}
			if err := checkOutputs(args, out, out+".tmp"); err != nil {
				return err
			}
			stats, err := runner().States(cmd.Context(), specs.States{Trace: args[0], Format: format, Out: out, AllEntities: allEntities, Parser: parser})
			if stats.QuirksInexact {
				log.Warn().Msg(paje.QuirksInexactMessage)
			}
			specs.WriteSkipped(os.Stderr, specs.Trace{Path: args[0]}.Name(), stats)
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
