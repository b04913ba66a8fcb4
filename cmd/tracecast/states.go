package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/sinks/csv"
	"github.com/tracecast/tracecast/sinks/jsonl"
	"github.com/tracecast/tracecast/sinks/pjdump"
)

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

func newStatesCmd() *cobra.Command {
	opts := paje.DefaultOptions()
	var format, out string
	var allEntities bool
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
--reorder-horizon 0 is pj_dump's rule.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "pjdump" {
				opts.PjdumpQuirks = !allEntities
			}
			return runStates(args[0], format, out, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "pjdump", "output format: pjdump, csv, jsonl, arrow")
	f.StringVarP(&out, "output", "o", "-", "output file (- for standard output)")
	f.BoolVar(&opts.Lenient, "lenient", false, "count and skip bad lines instead of failing; print the counts by reason")
	f.BoolVarP(&opts.UserDefined, "user-defined", "u", false, "also output user-defined fields (pj_dump -u)")
	f.BoolVarP(&opts.NoStrict, "no-strict", "n", false, "accept the deprecated field names of old traces (pj_dump -n)")
	f.BoolVarP(&opts.IgnoreIncompleteLinks, "ignore-incomplete-links", "z", false, "drop links that never got both ends (pj_dump -z)")
	f.Float64Var(&opts.ReorderHorizon, "reorder-horizon", -1, "how late a variable sample may be, in trace time units, and still be put back in order (-1: 3 s worth of the time unit; 0: none, as pj_dump)")
	f.IntVar(&opts.MaxBuffered, "max-buffered", opts.MaxBuffered, "most variable samples held for reordering")
	f.IntVar(&opts.MaxLineBytes, "max-line-bytes", opts.MaxLineBytes, "longest accepted line, in bytes")
	f.IntVar(&opts.MaxContainers, "max-containers", opts.MaxContainers, "most live containers")
	f.IntVar(&opts.MaxOpenStates, "max-open-states", opts.MaxOpenStates, "most open states and pending links")
	f.BoolVar(&allEntities, "all-entities", false, "with --format pjdump: print every entity and end the trace at its latest time, instead of reproducing pj_dump's window")
	f.StringVar(&opts.TimeUnit, "time-unit", "auto", "unit of the trace's times: auto (ms for StarPU, s otherwise), s, ms, us, ns")
	return cmd
}

func runStates(path, format, out string, opts paje.Options) error {
	// The reader's live heap is a few tens of MiB whatever the trace's
	// size; a soft limit keeps the garbage collector from letting the
	// process grow to twice that between collections. GOMEMLIMIT wins.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(52 << 20)
	}
	switch opts.TimeUnit {
	case "auto", "s", "ms", "us", "ns":
	default:
		return usageErr(errorf("unknown --time-unit %q", opts.TimeUnit))
	}
	if err := opts.Validate(); err != nil {
		return usageErr(err)
	}
	if err := checkOutputs([]string{path}, out, out+".tmp"); err != nil {
		return err
	}
	var in io.Reader = os.Stdin
	opts.Name = path
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	} else {
		opts.Name = "<stdin>"
	}
	var w io.Writer = os.Stdout
	var file *os.File
	if out != "-" && format != "arrow" {
		var err error
		if file, err = os.Create(out); err != nil {
			return err
		}
		defer file.Close()
		w = file
	}
	write, finish, err := entityWriter(format, w, out, &opts)
	if err != nil {
		return err
	}
	send, wait := asyncWrite(write)
	stats, err := paje.Read(in, opts, send)
	if stats.QuirksInexact {
		log.Warn().Msg("the trace's last line is more than 0.1 s of trace time before its latest event: pj_dump would drop a few more entities near the end than this output does")
	}
	if werr := wait(); err == nil {
		err = werr
	}
	if ferr := finish(); err == nil {
		err = ferr
	}
	if opts.Lenient && stats.Skipped.Total() > 0 {
		fmt.Fprintf(os.Stderr, "tracecast: %s: skipped %d bad lines:\n", opts.Name, stats.Skipped.Total())
		for _, r := range stats.Skipped.Reasons() {
			fmt.Fprintf(os.Stderr, "  %8d  %s\n", stats.Skipped[r], r)
		}
	}
	log.Debug().Int64("lines", stats.Lines).Int64("entities", stats.Entities).Int64("late", stats.Late).
		Int("max_buffered", stats.MaxBuffered).Msg("trace read")
	return err
}

// entityWriter returns the writer for an output format and the function
// that completes the output.
func entityWriter(format string, w io.Writer, path string, opts *paje.Options) (func([]tracecast.Entity) error, func() error, error) {
	switch format {
	case "pjdump":
		pw := pjdump.NewWriter(w, opts.UserDefined)
		return pw.Write, pw.Flush, nil
	case "csv":
		cw := csv.NewWriter(w)
		return cw.Write, cw.Flush, nil
	case "jsonl":
		bw := bufio.NewWriterSize(w, 1<<16)
		var buf []byte
		return func(es []tracecast.Entity) error {
			for i := range es {
				buf = append(jsonl.AppendEntity(buf[:0], &es[i]), '\n')
				if _, err := bw.Write(buf); err != nil {
					return err
				}
			}
			return nil
		}, bw.Flush, nil
	case "arrow":
		// The Arrow schema records the time unit, known once the header is
		// read: open the sink then.
		var sink *arrow.Sink
		unit := "trace"
		opts.OnTimeUnit = func(u string) { unit = u }
		ao := arrow.Options{Path: path, Format: arrow.FormatFile}
		if path == "-" {
			ao.Format = arrow.FormatStream
			ao.Stdout = w
		}
		ctx := context.Background()
		open := func() error {
			if sink != nil {
				return nil
			}
			ao.Tables = []arrow.Table{arrow.EntityTable(unit)}
			var err error
			sink, err = arrow.New(ao)
			return err
		}
		return func(es []tracecast.Entity) error {
				if err := open(); err != nil {
					return err
				}
				return sink.Write(ctx, tracecast.Batch{Items: es})
			}, func() error {
				if err := open(); err != nil {
					return err
				}
				return sink.Close(ctx)
			}, nil
	}
	return nil, nil, usageErr(errorf("unknown --format %q (pjdump, csv, jsonl or arrow)", format))
}
