package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/iocall"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/stages/iotime"
)

// ioCommands are the I/O-call commands (iobench, iopredict, ...).
func ioCommands() []*cobra.Command {
	return []*cobra.Command{newIOCallsCmd(), newIOTimeCmd(), newIOBenchCmd(), newIOPredictCmd()}
}

// ioSourceMaxLine bounds the lines the file source hands over. It is far
// above the iocall parser's own limit (1 MiB) so that the parser judges a
// long line: an error in its FILE:LINE form, or a skipped line in lenient
// mode.
const ioSourceMaxLine = 64 << 20

// readProfile reads a profile through a pipeline — a file source ("-" is
// standard input), the iocall parser and, with breakdown, the iotime stage
// emitting its summary — whose sink hands every batch to fn.
func (f *ioInputFlags) readProfile(ctx context.Context, command, path string, breakdown bool, fn func(tracecast.Batch) error) error {
	format := f.format
	switch format {
	case "":
		format = string(iocall.FormatAuto)
	case "strace", "csv", "jsonl":
	default:
		return usageErr(fmt.Errorf("unknown --input-format %q (strace, csv or jsonl)", f.format))
	}
	spec := pipelines.Spec{Name: command,
		Sources: []pipelines.Node{{ID: "profile", Type: "file", Options: map[string]any{"path": path, "max_line_bytes": ioSourceMaxLine},
			Parser: &pipelines.Node{Type: "iocall", Options: map[string]any{"format": format, "lenient": f.lenient, "all": f.all,
				"max_pids": f.maxPIDs, "max_open_calls": f.maxOpen, "max_fds": f.maxFDs}}}},
	}
	in := "profile"
	if breakdown {
		spec.Stages = []pipelines.Node{{ID: "iotime", Type: "iotime", Inputs: []string{in}, Options: map[string]any{"buckets": f.buckets, "summary": true}}}
		in = "iotime"
	}
	spec.Sinks = []pipelines.Node{{ID: "collect", Type: "collect", Inputs: []string{in}}}
	return runSpec(ctx, spec, map[string]tracecast.Sink{"collect": pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error { return fn(b) })})
}

// readCalls reads a profile in any format, calling fn for each I/O call.
func (f *ioInputFlags) readCalls(ctx context.Context, command, path string, fn func(*tracecast.IOCall) error) error {
	return f.readProfile(ctx, command, path, false, func(b tracecast.Batch) error {
		calls, _ := b.Items.([]tracecast.IOCall)
		for i := range calls {
			if err := fn(&calls[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// summarize reads a profile into its category breakdown.
func (f *ioInputFlags) summarize(ctx context.Context, command, path string) (iotime.Summary, error) {
	if _, err := iotime.ParseBuckets(f.buckets); err != nil {
		return iotime.Summary{}, usageErr(err) // before anything is read
	}
	var s iotime.Summary
	err := f.readProfile(ctx, command, path, true, func(b tracecast.Batch) error {
		if ss, ok := b.Items.([]iotime.Summary); ok && len(ss) == 1 {
			s = ss[0]
		}
		return nil // the stage's states: the summary is what the commands print
	})
	return s, err
}
