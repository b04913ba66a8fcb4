package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/app/specs"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/models/iobench"
	"github.com/tracecast/tracecast/stages/iotime"
)

func newIOCallsCmd() *cobra.Command {
	f := specs.DefaultProfile()
	var format, out string
	cmd := &cobra.Command{
		Use:   "iocalls [--format csv|jsonl] [-o FILE] PROFILE|-",
		Short: "Convert an strace log (or CSV/JSON lines) into the I/O-call CSV or JSON-lines schema",
		Long: `iocalls reads I/O calls — an strace log (strace -f -tt -T, also -ttt, -y), or
the CSV or JSON-lines schema itself, plain or gzip — and writes one record
per completed call: time,pid,op,path,fd,offset,requested,bytes,duration,
err,flags (times in seconds; docs/io.md). Calls on sockets, pipes, ttys and
devices are dropped unless --all-fds.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputs(args, out); err != nil {
				return err
			}
			f.Path = args[0]
			return runner().WriteCalls(cmd.Context(), f, format, out)
		},
	}
	cliflags.Bind(cmd.Flags(), &f)
	cmd.Flags().StringVar(&format, "format", "csv", "output format: csv or jsonl")
	cmd.Flags().StringVarP(&out, "output", "o", "-", "output file (- for standard output)")
	return cmd
}

func newIOTimeCmd() *cobra.Command {
	f := specs.DefaultProfile()
	var perProcess bool
	cmd := &cobra.Command{
		Use:   "iotime [--buckets 4K,64K,1M] [--per-process] PROFILE|-",
		Short: "Break an application's I/O time down by operation × size × access pattern",
		Long: `iotime reads an I/O-call profile (strace, CSV or JSON lines; plain or gzip)
and prints, per category — operation × size bucket (--buckets) × access
pattern (seq or rand) — the calls, bytes, total and mean time per call,
mean size and mean gap between calls (--per-process: per process too). A
table on a terminal, one JSON object otherwise.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.Path = args[0]
			s, err := runner().Summary(cmd.Context(), "iotime", f)
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
	cliflags.Bind(cmd.Flags(), &f)
	cmd.Flags().BoolVar(&perProcess, "per-process", false, "break down per process too")
	return cmd
}

func newIOBenchCmd() *cobra.Command {
	f := specs.DefaultProfile()
	var out, fileSize string
	o := iobench.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "iobench --dir PATH --profile FILE -o BENCH.json [flags]",
		Short: "Replay each I/O-call category of a profile on a directory and time it",
		Long: `iobench replays each category of an application's I/O-call profile (as
iotime prints them) with real system calls on a test file under --dir —
mean request size, sequential or random offsets, and with --gaps the mean
gap between calls — and writes the mean, median, min and total time per
call to BENCH.json. --fsync, --direct, --file-size and --drop-cache keep the
page cache out of it. Run it on the reference and the target, then
iopredict. docs/io.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.Path == "" || out == "" {
				return usageErr(fmt.Errorf("--profile and -o are required"))
			}
			if err := checkOutputs([]string{f.Path}, out); err != nil {
				return err
			}
			if fileSize != "" {
				v, err := iotime.ParseSize(fileSize)
				if err != nil {
					return usageErr(err)
				}
				o.FileSize = v
			}
			return runner().Bench(cmd.Context(), f, o, out)
		},
	}
	cliflags.Bind(cmd.Flags(), &f)
	fl := cmd.Flags()
	fl.StringVar(&f.Path, "profile", "", "the application's I/O-call profile (strace, CSV or JSON lines)")
	fl.StringVarP(&out, "output", "o", "", "BENCH.json to write")
	fl.StringVar(&fileSize, "file-size", "", "least size of the test file (e.g. 8G: larger than the page cache)")
	cliflags.Bind(fl, &o)
	return cmd
}

func newIOPredictCmd() *cobra.Command {
	f := specs.DefaultProfile()
	var refPath, tgtPath, actualPath, stat, overhead string
	cmd := &cobra.Command{
		Use:   "iopredict --profile APP.strace --ref REF.json --target TARGET.json [--actual APP_ON_TARGET.strace]",
		Short: "Predict an application's I/O time on a target system from benchmark ratios",
		Long: `iopredict predicts an application's I/O time on a target system from its
profile on the reference and iobench's results on both: each category's
time on the reference scaled by bench(target)/bench(reference), summed;
with --actual (its profile on the target), the error in percent. A
category not benchmarked keeps ratio 1. A table on a terminal, one JSON
object otherwise. docs/io.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.Path == "" || refPath == "" || tgtPath == "" {
				return usageErr(fmt.Errorf("--profile, --ref and --target are required"))
			}
			var po iobench.PredictOptions
			if po.SetStat(stat) != nil {
				return usageErr(fmt.Errorf("unknown --stat %q (mean or median)", stat))
			}
			if po.SetOverhead(overhead) != nil {
				return usageErr(fmt.Errorf("bad --overhead %q (auto or a duration such as 2us)", overhead))
			}
			p, err := runner().IOPredict(cmd.Context(), f, refPath, tgtPath, actualPath, po)
			if err != nil {
				return err
			}
			if isTerminal(os.Stdout) {
				return p.WriteTable(os.Stdout)
			}
			return iobench.WriteJSON(os.Stdout, p)
		},
	}
	cliflags.Bind(cmd.Flags(), &f)
	fl := cmd.Flags()
	fl.StringVar(&f.Path, "profile", "", "the application's I/O-call profile on the reference")
	fl.StringVar(&refPath, "ref", "", "BENCH.json measured on the reference")
	fl.StringVar(&tgtPath, "target", "", "BENCH.json measured on the target")
	fl.StringVar(&actualPath, "actual", "", "profile of the application run on the target (for the error)")
	fl.StringVar(&stat, "stat", "mean", "benchmark statistic: mean or median")
	fl.StringVar(&overhead, "overhead", "0", "tracer cost per call taken out before scaling: 0 (none), auto (the shortest call in the profile), calibrated (the call-weighted median over categories of the traced mean minus the reference benchmark's) or a duration (2us)")
	return cmd
}
