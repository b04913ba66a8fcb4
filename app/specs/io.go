package specs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/models/iobench"
	"github.com/tracecast/tracecast/parsers/iocall"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/stages/iotime"
)

// Profile is an I/O-call profile and the iocall parser's options.
type Profile struct {
	Path         string // "-": standard input; plain or gzip
	Format       string `flag:"input-format" help:"profile format: strace, csv, jsonl (default: from the file name and first line)"`
	Lenient      bool   `flag:"lenient" help:"count and skip bad lines instead of stopping at the first"`
	MaxPIDs      int    `flag:"max-pids" help:"most processes tracked at once (strace; forgotten at their exit)"`
	MaxOpenCalls int    `flag:"max-open-calls" help:"most unfinished calls held at once (strace)"`
	MaxFDs       int    `flag:"max-fds" help:"most file descriptors tracked over all processes (open files, for CSV and JSON lines)"`
	All          bool   `flag:"all-fds" help:"keep calls on sockets, pipes, ttys and devices too"`
	Buckets      string `flag:"buckets" help:"size bucket bounds (ascending; K, M, G suffixes)"`
}

// DefaultProfile are the iocall parser's limits and the default buckets.
func DefaultProfile() Profile {
	return Profile{MaxPIDs: iocall.DefaultMaxPIDs, MaxOpenCalls: iocall.DefaultMaxOpenCalls, MaxFDs: iocall.DefaultMaxFDs, Buckets: "4K,64K,1M"}
}

// read reads a profile through a pipeline — a file source, the iocall
// parser and, with breakdown, the iotime stage emitting its summary —
// whose sink hands every batch to fn. command names the pipeline in logs.
func (r Runner) read(ctx context.Context, command string, p Profile, breakdown bool, fn func(tracecast.Batch) error) error {
	format := p.Format
	switch format {
	case "":
		format = string(iocall.FormatAuto)
	case "strace", "csv", "jsonl":
	default:
		return &OptionError{Msgs: []string{`unknown --input-format "` + p.Format + `" (strace, csv or jsonl)`}}
	}
	// The source's line limit is far above the parser's (1 MiB), so that
	// the parser judges a long line (FILE:LINE, or skipped in lenient mode).
	spec := pipelines.Spec{Name: command,
		Sources: []pipelines.Node{{ID: "profile", Type: "file", Options: map[string]any{"path": p.Path, "max_line_bytes": 64 << 20},
			Parser: &pipelines.Node{Type: "iocall", Options: map[string]any{"format": format, "lenient": p.Lenient, "all": p.All,
				"max_pids": p.MaxPIDs, "max_open_calls": p.MaxOpenCalls, "max_fds": p.MaxFDs}}}},
		Sinks: []pipelines.Node{collect("collect", "profile")}}
	if breakdown {
		spec.Stages = []pipelines.Node{{ID: "iotime", Type: "iotime", Inputs: []string{"profile"}, Options: map[string]any{"buckets": p.Buckets, "summary": true}}}
		spec.Sinks[0].Inputs = []string{"iotime"}
	}
	return r.Run(ctx, spec, map[string]tracecast.Sink{"collect": pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error { return fn(b) })})
}

// Calls reads a profile, handing every I/O call to fn.
func (r Runner) Calls(ctx context.Context, command string, p Profile, fn func(*tracecast.IOCall) error) error {
	return r.read(ctx, command, p, false, func(b tracecast.Batch) error {
		calls, _ := b.Items.([]tracecast.IOCall)
		for i := range calls {
			if err := fn(&calls[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Summary reads a profile into its category breakdown.
func (r Runner) Summary(ctx context.Context, command string, p Profile) (iotime.Summary, error) {
	if _, err := iotime.ParseBuckets(p.Buckets); err != nil {
		return iotime.Summary{}, &OptionError{Msgs: []string{err.Error()}} // before anything is read
	}
	var s iotime.Summary
	err := r.read(ctx, command, p, true, func(b tracecast.Batch) error {
		if ss, ok := b.Items.([]iotime.Summary); ok && len(ss) == 1 {
			s = ss[0]
		}
		return nil
	})
	return s, err
}

// WriteCalls converts a profile into the I/O-call schema, csv or jsonl, on
// out ("-": standard output). What a failed run buffered is not flushed:
// its output stops early.
func (r Runner) WriteCalls(ctx context.Context, p Profile, format, out string) error {
	if format != "csv" && format != "jsonl" {
		return &OptionError{Msgs: []string{fmt.Sprintf("unknown --format %q (csv or jsonl)", format)}}
	}
	if out == "" {
		out = "-"
	}
	// A file is OUT.tmp until complete (internal/output).
	f, err := output.Open(out, output.Options{Logger: r.Log})
	if err != nil {
		return err
	}
	iw, err := iocall.NewWriter(f, iocall.Format(format))
	if err == nil {
		err = r.Calls(ctx, "iocalls", p, iw.Write)
	}
	if err == nil {
		err = iw.Flush()
	}
	if err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// Bench replays the categories of a profile on o.Dir (iobench.Run) and
// writes the result to out.
func (r Runner) Bench(ctx context.Context, p Profile, o iobench.Options, out string) error {
	if err := iobench.CheckDir(o.Dir); err != nil {
		return &OptionError{Msgs: []string{fmt.Sprintf("--dir %v", err)}}
	}
	s, err := r.Summary(ctx, "iobench", p)
	if err != nil {
		return err
	}
	t0 := time.Now()
	res, err := iobench.Run(ctx, s, o)
	if errors.Is(err, iobench.ErrEmptyProfile) {
		return fmt.Errorf("%s: %w", p.Path, err)
	} else if err != nil {
		return err
	}
	r.Log.Info().Str("dir", o.Dir).Str("fs", res.FS).Int("categories", len(res.Categories)).Dur("took", time.Since(t0)).Msg("benchmark done")
	return output.WriteFile(out, func(w io.Writer) error { return iobench.WriteJSON(w, res) })
}

// IOPredict predicts the I/O time of the profile p on a target from
// iobench's results on the reference (ref) and on the target (tgt); actual,
// when set, is a profile of the application on the target.
func (r Runner) IOPredict(ctx context.Context, p Profile, ref, tgt, actual string, o iobench.PredictOptions) (iobench.Prediction, error) {
	s, err := r.Summary(ctx, "iopredict", p)
	if err != nil {
		return iobench.Prediction{}, err
	}
	rb, err := iobench.ReadResult(ref)
	if err != nil {
		return iobench.Prediction{}, err
	}
	tb, err := iobench.ReadResult(tgt)
	if err != nil {
		return iobench.Prediction{}, err
	}
	var act *iotime.Summary
	if actual != "" {
		p.Path = actual
		a, err := r.Summary(ctx, "iopredict", p)
		if err != nil {
			return iobench.Prediction{}, err
		}
		act = &a
	}
	return iobench.Predict(s, rb, tb, act, o), nil
}
