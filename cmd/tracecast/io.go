package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/app/specs"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/models/iobench"
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
	o := specs.IOBench{Profile: specs.DefaultProfile(), Options: iobench.DefaultOptions()}
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
		RunE: func(cmd *cobra.Command, args []string) error { return runner().RunIOBench(cmd.Context(), o) },
	}
	cliflags.Bind(cmd.Flags(), &o)
	return cmd
}

func newIOPredictCmd() *cobra.Command {
	o := specs.IOPredictCmd{Profile: specs.DefaultProfile(), Stat: "mean", Overhead: "0"}
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
			return runner().RunIOPredict(cmd.Context(), o, os.Stdout, isTerminal(os.Stdout))
		},
	}
	cliflags.Bind(cmd.Flags(), &o)
	return cmd
}
