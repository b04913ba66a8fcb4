package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/models/iobench"
	"github.com/tracecast/tracecast/parsers/iocall"
	"github.com/tracecast/tracecast/stages/iotime"
)

// ioInputFlags are the flags of every command that reads an I/O-call profile.
type ioInputFlags struct {
	format                   string
	lenient                  bool
	all                      bool
	buckets                  string
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

func newIOCallsCmd() *cobra.Command {
	var f ioInputFlags
	var format, out string
	cmd := &cobra.Command{
		Use:   "iocalls [--format csv|jsonl] [-o FILE] PROFILE|-",
		Short: "Convert an strace log (or CSV/JSON lines) into the I/O-call CSV or JSON-lines schema",
		Long: `iocalls reads I/O calls — strace output recorded with strace -f -tt -T
(also -ttt, -y/-yy, with or without pid prefixes), or the CSV / JSON-lines
schema itself — and writes one record per completed I/O call:

  time,pid,op,path,fd,offset,requested,bytes,duration,err,flags

time and duration in seconds (time since midnight for -tt, since the epoch
for -ttt); offset is the file offset the data call started at (-1 unknown);
requested/bytes are what was asked and returned (-1: none or error);
flags are the open flags that change an open's cost (creat|trunc|append|direct).
The schema is documented in docs/io.md. Calls on sockets, pipes, ttys and
devices are dropped unless --all-fds.`,
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
				err = f.readCalls(cmd.Context(), "iocalls", args[0], iw.Write)
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
		Long: `iotime reads an I/O-call profile (strace, CSV or JSON lines) and prints, per
category — operation kind (read, write, copy, open, create = open with
O_CREAT/O_TRUNC, close, seek, sync, fdatasync, mmap, stat) × size bucket
(--buckets) × access pattern (seq when a data call starts where the
previous one on the same open file ended, rand otherwise) — the calls,
bytes, total and mean time per call, mean size and mean gap between calls;
with --per-process, per process and category too.

A table on a terminal, one JSON object (the iotime summary) otherwise.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.summarize(cmd.Context(), "iotime", args[0])
			if err != nil {
				return err
			}
			if isTerminal(os.Stdout) {
				rows := s.Categories
				if perProcess {
					rows = s.Processes
				}
				tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintf(tw, "pid\tcategory\tcalls\tbytes\ttime_s\tmean_s\tmean_size\tmean_gap_s\t\n")
				for _, r := range append(rows, s.Total) {
					fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.6f\t%.3g\t%.0f\t%.3g\t\n", r.PID, r.Key, r.Calls, r.Bytes, r.Time, r.Mean, r.MeanSize, r.MeanGap)
				}
				return tw.Flush()
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
	var out, fileSize string
	o := iobench.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "iobench --dir PATH --profile FILE -o BENCH.json [flags]",
		Short: "Replay each I/O-call category of a profile on a directory and time it",
		Long: `iobench is seed 002's configurable I/O benchmark. It reads an application's
I/O-call profile (strace, CSV or JSON lines), breaks it into categories
(operation × size bucket × access pattern, as iotime prints them) and, for
each category, replays its pattern with real system calls in a temporary
file under --dir: the category's mean request size, sequential or random
offsets, reads or writes, and the mean gap measured between the
application's calls (--gaps, capped by --max-gap). copy replays
copy_file_range to a second file. sync and fdatasync write as many bytes as
the application had dirty per sync, then time the sync alone; create times
an O_CREAT|O_TRUNC open of a file holding as many bytes as the
application's truncating opens freed; open, close, seek, stat and mmap are
replayed on the test file (at most max(--file-size, 1 GiB) large).

To defeat the page cache: --fsync (fsync after every write, timed with it),
--direct (O_DIRECT where the file system supports it: sizes and offsets
rounded up to 4 KiB, aligned buffers; tmpfs refuses it and the result says
so), --file-size (a test file larger than the page cache), --drop-cache
(posix_fadvise DONTNEED before each read category).

Each category runs --reps times with between --min-calls and --max-calls
calls; BENCH.json (schema "tracecast.iobench/v1") holds, per category, the
mean, median, min and total time per call. Give the same profile to iobench on the
reference and on the target, then run iopredict.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			profile, _ := cmd.Flags().GetString("profile")
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
			}
			if err != nil {
				return err
			}
			log.Info().Str("dir", o.Dir).Str("fs", r.FS).Int("categories", len(r.Categories)).Dur("took", time.Since(t0)).Msg("benchmark done")
			w, err := os.Create(out)
			if err != nil {
				return err
			}
			if err := iobench.WriteJSON(w, r); err != nil {
				w.Close()
				return err
			}
			return w.Close()
		},
	}
	f.register(cmd)
	cmd.Flags().String("profile", "", "the application's I/O-call profile (strace, CSV or JSON lines)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "BENCH.json to write")
	cmd.Flags().StringVar(&o.Dir, "dir", o.Dir, "directory on the file system under test")
	cmd.Flags().StringVar(&fileSize, "file-size", "", "least size of the test file (e.g. 8G: larger than the page cache)")
	cmd.Flags().BoolVar(&o.Fsync, "fsync", o.Fsync, "fsync after every replayed write (timed with it)")
	cmd.Flags().BoolVar(&o.Direct, "direct", o.Direct, "O_DIRECT for reads and writes where supported")
	cmd.Flags().BoolVar(&o.DropCache, "drop-cache", o.DropCache, "posix_fadvise DONTNEED before each read category")
	cmd.Flags().BoolVar(&o.Gaps, "gaps", o.Gaps, "replay the mean gap between the application's calls")
	cmd.Flags().DurationVar(&o.MaxGap, "max-gap", o.MaxGap, "longest gap replayed")
	cmd.Flags().IntVar(&o.MinCalls, "min-calls", o.MinCalls, "least calls replayed per category")
	cmd.Flags().IntVar(&o.MaxCalls, "max-calls", o.MaxCalls, "most calls replayed per category")
	cmd.Flags().IntVar(&o.Reps, "reps", o.Reps, "repetitions per category (the result is their mean)")
	cmd.Flags().Uint64Var(&o.Seed, "seed", o.Seed, "seed of the random offsets")
	return cmd
}

func newIOPredictCmd() *cobra.Command {
	var f ioInputFlags
	var profile, refPath, tgtPath, actualPath, stat, overhead string
	cmd := &cobra.Command{
		Use:   "iopredict --profile APP.strace --ref REF.json --target TARGET.json [--actual APP_ON_TARGET.strace]",
		Short: "Predict an application's I/O time on a target system from benchmark ratios (seed 002, eq. 1–3)",
		Long: `iopredict applies seed 002's method. For each category i of the application's
profile on the reference system:

  ratio_i     = T_bench,i(target) / T_bench,i(reference)            (eq. 1)
  predicted   = Σ_i ratio_i × T_app,i(reference)                    (eq. 2)
  error       = 100 × (predicted − actual) / actual                 (eq. 3)

T_bench are iobench's mean times per call (BENCH.json of the reference and of
the target, from the same profile); T_app,i the application's time in the
category. --stat median uses the benchmark's median instead of its mean;
--overhead δ (or auto) treats δ per call as the tracer's own cost, present
in the traced times on both systems: predicted_i = ratio_i·(T_i − n_i·δ) +
n_i·δ; --overhead calibrated estimates δ as the call-weighted median,
over the categories, of the traced mean time per call minus the reference
benchmark's (what tracing adds to every call). Categories missing from a benchmark keep ratio 1 (reported as
not benchmarked, with their share of the reference time). With --actual (a
profile of the application run on the target), the error per category and
in total.

A table on a terminal, one JSON object (schema "tracecast.iopredict/v1")
otherwise.`,
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
				return printPrediction(os.Stdout, p)
			}
			return iobench.WriteJSON(os.Stdout, p)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&profile, "profile", "", "the application's I/O-call profile on the reference")
	cmd.Flags().StringVar(&refPath, "ref", "", "BENCH.json measured on the reference")
	cmd.Flags().StringVar(&tgtPath, "target", "", "BENCH.json measured on the target")
	cmd.Flags().StringVar(&actualPath, "actual", "", "profile of the application run on the target (for eq. 3)")
	cmd.Flags().StringVar(&stat, "stat", "mean", "benchmark statistic in eq. 1: mean (the seed's) or median")
	cmd.Flags().StringVar(&overhead, "overhead", "0", "tracer cost per call taken out before scaling: 0 (the seed's eq. 2), auto (the shortest call in the profile), calibrated (the call-weighted median over categories of the traced mean minus the reference benchmark's) or a duration (2us)")
	return cmd
}

func printPrediction(w io.Writer, p iobench.Prediction) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "category\tcalls\tref_s\tratio\tpredicted_s\tactual_s\terror_%%\t\n")
	opt := func(v *float64, f string) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf(f, *v)
	}
	for _, c := range p.Categories {
		ratio := fmt.Sprintf("%.3f", c.Ratio)
		if !c.Benchmarked {
			ratio = "(1)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.6f\t%s\t%.6f\t%s\t%s\t\n", c.Category, c.Calls, c.RefTime, ratio, c.Predicted, opt(c.Actual, "%.6f"), opt(c.ErrorPct, "%+.1f"))
	}
	fmt.Fprintf(tw, "total (%s → %s)\t\t%.6f\t\t%.6f\t%s\t%s\t\n", p.Reference, p.Target, p.RefTotal, p.Predicted, opt(p.Actual, "%.6f"), opt(p.ErrorPct, "%+.1f"))
	if err := tw.Flush(); err != nil {
		return err
	}
	if p.Unbenchmarked > 0 {
		fmt.Fprintf(w, "%.1f%% of the reference I/O time is in categories not benchmarked (ratio 1)\n", 100*p.Unbenchmarked)
	}
	return nil
}
