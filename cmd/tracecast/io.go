package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models/iobench"
	"github.com/tracecast/tracecast/parsers/iocall"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/stages/iotime"
)

// ioCommands are the I/O-call commands.
func ioCommands() []*cobra.Command {
	return []*cobra.Command{newIOCallsCmd(), newIOTimeCmd(), newIOBenchCmd(), newIOPredictCmd()}
}

// ioInputFlags are the flags of every command that reads an I/O-call profile.
type ioInputFlags struct {
	format, buckets          string
	lenient, all             bool
	maxPIDs, maxOpen, maxFDs int
}

func (f *ioInputFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.format, "input-format", "", "profile format: strace, csv, jsonl (default: from the file name and first line)")
	cmd.Flags().BoolVar(&f.lenient, "lenient", false, "count and skip bad lines instead of stopping at the first")
	cmd.Flags().IntVar(&f.maxPIDs, "max-pids", iocall.DefaultMaxPIDs, "most processes tracked at once (strace; forgotten at their exit)")
	cmd.Flags().IntVar(&f.maxOpen, "max-open-calls", iocall.DefaultMaxOpenCalls, "most unfinished calls held at once (strace)")
	cmd.Flags().IntVar(&f.maxFDs, "max-fds", iocall.DefaultMaxFDs, "most file descriptors tracked over all processes (open files, for CSV and JSON lines)")
	cmd.Flags().BoolVar(&f.all, "all-fds", false, "keep calls on sockets, pipes, ttys and devices too")
	cmd.Flags().StringVar(&f.buckets, "buckets", "4K,64K,1M", "size bucket bounds (ascending; K, M, G suffixes)")
}

// read reads a profile through a pipeline — a file source ("-" is standard
// input, plain or gzip), the iocall parser and, with breakdown, the iotime
// stage emitting its summary — whose sink hands every batch to fn.
func (f *ioInputFlags) read(ctx context.Context, command, path string, breakdown bool, fn func(tracecast.Batch) error) error {
	format := f.format
	switch format {
	case "":
		format = string(iocall.FormatAuto)
	case "strace", "csv", "jsonl":
	default:
		return usageErr(fmt.Errorf("unknown --input-format %q (strace, csv or jsonl)", f.format))
	}
	// The source's line limit is far above the parser's (1 MiB), so that
	// the parser judges a long line (FILE:LINE, or skipped in lenient mode).
	spec := pipelines.Spec{Name: command,
		Sources: []pipelines.Node{{ID: "profile", Type: "file", Options: map[string]any{"path": path, "max_line_bytes": 64 << 20},
			Parser: &pipelines.Node{Type: "iocall", Options: map[string]any{"format": format, "lenient": f.lenient, "all": f.all,
				"max_pids": f.maxPIDs, "max_open_calls": f.maxOpen, "max_fds": f.maxFDs}}}},
		Sinks: []pipelines.Node{{ID: "collect", Type: "collect", Inputs: []string{"profile"}}}}
	if breakdown {
		spec.Stages = []pipelines.Node{{ID: "iotime", Type: "iotime", Inputs: []string{"profile"}, Options: map[string]any{"buckets": f.buckets, "summary": true}}}
		spec.Sinks[0].Inputs = []string{"iotime"}
	}
	return runSpec(ctx, spec, map[string]tracecast.Sink{"collect": pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error { return fn(b) })})
}

// summarize reads a profile into its category breakdown.
func (f *ioInputFlags) summarize(ctx context.Context, command, path string) (iotime.Summary, error) {
	if _, err := iotime.ParseBuckets(f.buckets); err != nil {
		return iotime.Summary{}, usageErr(err) // before anything is read
	}
	var s iotime.Summary
	err := f.read(ctx, command, path, true, func(b tracecast.Batch) error {
		if ss, ok := b.Items.([]iotime.Summary); ok && len(ss) == 1 {
			s = ss[0]
		}
		return nil
	})
	return s, err
}

func newIOCallsCmd() *cobra.Command {
	var f ioInputFlags
	var format, out string
	cmd := &cobra.Command{
		Use:   "iocalls [--format csv|jsonl] [-o FILE] PROFILE|-",
		Short: "Convert an strace log (or CSV/JSON lines) into the I/O-call CSV or JSON-lines schema",
		Long: `iocalls reads I/O calls — an strace log (strace -f -tt -T, also -ttt and
-y/-yy), or the CSV / JSON-lines schema itself, plain or gzip — and writes
one record per completed call:

  time,pid,op,path,fd,offset,requested,bytes,duration,err,flags

time and duration in seconds; offset -1 when unknown; requested and bytes
-1 for none or an error; flags the open flags that change its cost. The
schema: docs/io.md. Calls on sockets, pipes, ttys and devices are dropped
unless --all-fds.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var w io.Writer = os.Stdout
			if err := checkOutputs(args, out); err != nil {
				return err
			}
			if out != "" && out != "-" {
				fo, err := os.Create(out)
				if err != nil {
					return err
				}
				defer fo.Close()
				w = fo
			}
			if format != "csv" && format != "jsonl" {
				return usageErr(fmt.Errorf("unknown --format %q (csv or jsonl)", format))
			}
			iw, err := iocall.NewWriter(w, iocall.Format(format))
			if err == nil {
				err = f.read(cmd.Context(), "iocalls", args[0], false, func(b tracecast.Batch) error {
					calls, _ := b.Items.([]tracecast.IOCall)
					for i := range calls {
						if err := iw.Write(&calls[i]); err != nil {
							return err
						}
					}
					return nil
				})
			}
			if err != nil {
				return err // what is buffered is not flushed: a failed run's output stops early
			}
			return iw.Flush()
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&format, "format", "csv", "output format: csv or jsonl")
	cmd.Flags().StringVarP(&out, "output", "o", "-", "output file (- for standard output)")
	return cmd
}

func newIOTimeCmd() *cobra.Command {
	var f ioInputFlags
	var perProcess bool
	cmd := &cobra.Command{
		Use:   "iotime [--buckets 4K,64K,1M] [--per-process] PROFILE|-",
		Short: "Break an application's I/O time down by operation × size × access pattern",
		Long: `iotime reads an I/O-call profile (strace, CSV or JSON lines; plain or gzip)
and prints, per category — operation (read, write, copy, open, create,
close, seek, sync, fdatasync, mmap, stat) × size bucket (--buckets) ×
access pattern (seq when a call starts where the previous one on the file
ended, rand otherwise) — the calls, bytes, total and mean time per call,
mean size and mean gap between calls; with --per-process, per process too.
A table on a terminal, one JSON object otherwise.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.summarize(cmd.Context(), "iotime", args[0])
			if err != nil {
				return err
			}
			if isTerminal(os.Stdout) {
				return s.WriteTable(os.Stdout, perProcess)
			}
			if !perProcess {
				s.Processes = nil
			}
			return iobench.WriteJSON(os.Stdout, s)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&perProcess, "per-process", false, "break down per process too")
	return cmd
}

func newIOBenchCmd() *cobra.Command {
	var f ioInputFlags
	var profile, out, fileSize string
	o := iobench.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "iobench --dir PATH --profile FILE -o BENCH.json [flags]",
		Short: "Replay each I/O-call category of a profile on a directory and time it",
		Long: `iobench reads an application's I/O-call profile, breaks it into categories
(as iotime prints them) and replays each category's pattern with real
system calls on a test file under --dir: its mean request size, sequential
or random offsets, reads or writes, and (--gaps) the mean gap between the
application's calls. --fsync, --direct, --file-size and --drop-cache keep
the page cache from hiding the storage. Each category runs --reps times;
BENCH.json holds the mean, median, min and total time per call. Run it
with the same profile on the reference and on the target, then iopredict.
docs/io.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if profile == "" || out == "" {
				return usageErr(fmt.Errorf("--profile and -o are required"))
			}
			if fileSize != "" {
				v, err := iotime.ParseSize(fileSize)
				if err != nil {
					return usageErr(err)
				}
				o.FileSize = v
			}
			if err := iobench.CheckDir(o.Dir); err != nil {
				return usageErr(fmt.Errorf("--dir %w", err))
			}
			s, err := f.summarize(cmd.Context(), "iobench", profile)
			if err != nil {
				return err
			}
			t0 := time.Now()
			r, err := iobench.Run(cmd.Context(), s, o)
			if errors.Is(err, iobench.ErrEmptyProfile) {
				return fmt.Errorf("%s: %w", profile, err)
			} else if err != nil {
				return err
			}
			log.Info().Str("dir", o.Dir).Str("fs", r.FS).Int("categories", len(r.Categories)).Dur("took", time.Since(t0)).Msg("benchmark done")
			w, err := os.Create(out)
			if err != nil {
				return err
			}
			return errors.Join(iobench.WriteJSON(w, r), w.Close())
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&profile, "profile", "", "the application's I/O-call profile (strace, CSV or JSON lines)")
	fl.StringVarP(&out, "output", "o", "", "BENCH.json to write")
	fl.StringVar(&o.Dir, "dir", o.Dir, "directory on the file system under test")
	fl.StringVar(&fileSize, "file-size", "", "least size of the test file (e.g. 8G: larger than the page cache)")
	fl.BoolVar(&o.Fsync, "fsync", o.Fsync, "fsync after every replayed write (timed with it)")
	fl.BoolVar(&o.Direct, "direct", o.Direct, "O_DIRECT for reads and writes where supported")
	fl.BoolVar(&o.DropCache, "drop-cache", o.DropCache, "posix_fadvise DONTNEED before each read category")
	fl.BoolVar(&o.Gaps, "gaps", o.Gaps, "replay the mean gap between the application's calls")
	fl.DurationVar(&o.MaxGap, "max-gap", o.MaxGap, "longest gap replayed")
	fl.IntVar(&o.MinCalls, "min-calls", o.MinCalls, "least calls replayed per category")
	fl.IntVar(&o.MaxCalls, "max-calls", o.MaxCalls, "most calls replayed per category")
	fl.IntVar(&o.Reps, "reps", o.Reps, "repetitions per category (the result is their mean)")
	fl.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the random offsets")
	return cmd
}

func newIOPredictCmd() *cobra.Command {
	var f ioInputFlags
	var profile, refPath, tgtPath, actualPath, stat, overhead string
	cmd := &cobra.Command{
		Use:   "iopredict --profile APP.strace --ref REF.json --target TARGET.json [--actual APP_ON_TARGET.strace]",
		Short: "Predict an application's I/O time on a target system from benchmark ratios",
		Long: `iopredict predicts the I/O time of an application on a target system from its
profile on the reference and iobench's results on both: per category i,

  ratio_i   = bench_i(target) / bench_i(reference)
  predicted = Σ_i ratio_i × time_i(reference)
  error     = 100 × (predicted − actual) / actual     (with --actual)

--stat median uses the benchmark's medians; --overhead takes the tracer's
own cost per call out of the traced times before scaling. A category not
benchmarked keeps ratio 1 (its share is reported). A table on a terminal,
one JSON object otherwise. docs/io.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if profile == "" || refPath == "" || tgtPath == "" {
				return usageErr(fmt.Errorf("--profile, --ref and --target are required"))
			}
			var po iobench.PredictOptions
			if po.SetStat(stat) != nil {
				return usageErr(fmt.Errorf("unknown --stat %q (mean or median)", stat))
			}
			if po.SetOverhead(overhead) != nil {
				return usageErr(fmt.Errorf("bad --overhead %q (auto or a duration such as 2us)", overhead))
			}
			s, err := f.summarize(cmd.Context(), "iopredict", profile)
			if err != nil {
				return err
			}
			ref, err := iobench.ReadResult(refPath)
			if err != nil {
				return err
			}
			tgt, err := iobench.ReadResult(tgtPath)
			if err != nil {
				return err
			}
			var act *iotime.Summary
			if actualPath != "" {
				a, err := f.summarize(cmd.Context(), "iopredict", actualPath)
				if err != nil {
					return err
				}
				act = &a
			}
			p := iobench.Predict(s, ref, tgt, act, po)
			if isTerminal(os.Stdout) {
				return p.WriteTable(os.Stdout)
			}
			return iobench.WriteJSON(os.Stdout, p)
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&profile, "profile", "", "the application's I/O-call profile on the reference")
	fl.StringVar(&refPath, "ref", "", "BENCH.json measured on the reference")
	fl.StringVar(&tgtPath, "target", "", "BENCH.json measured on the target")
	fl.StringVar(&actualPath, "actual", "", "profile of the application run on the target (for the error)")
	fl.StringVar(&stat, "stat", "mean", "benchmark statistic: mean or median")
	fl.StringVar(&overhead, "overhead", "0", "tracer cost per call taken out before scaling: 0 (none), auto (the shortest call in the profile), calibrated (the call-weighted median over categories of the traced mean minus the reference benchmark's) or a duration (2us)")
	return cmd
}
