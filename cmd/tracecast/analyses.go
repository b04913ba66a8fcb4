package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tracecast/tracecast/internal/front"
	"github.com/tracecast/tracecast/internal/memlimit"
	"github.com/tracecast/tracecast/internal/paths"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/app/reader"
	"github.com/tracecast/tracecast/app/specs"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/models/modelio"
	"github.com/tracecast/tracecast/report"
)

// commandMemFloor is the soft memory limit predict and report keep at
// least (memlimit.FollowLive): below it the collector paces as usual.
const commandMemFloor = 96 << 20

// signalFlags are the flags of the commands that sample a signal;
// maxSamples is --max-samples' default.
func signalFlags(cmd *cobra.Command, t *specs.Trace, s *specs.Signal, maxSamples int) {
	cliflags.Bind(cmd.Flags(), t)
	*s = specs.DefaultSignal(maxSamples)
	cliflags.Bind(cmd.Flags(), s)
}

func newSignalCmd() *cobra.Command {
	t := specs.DefaultTrace()
	var s specs.Signal
	var out string
	cmd := &cobra.Command{
		Use:   "signal [flags] TRACE -o FILE",
		Short: "Sample how many workers are idle (computing, ...) over a trace",
		Long: `signal writes x_k, how many selected containers (--rules: StarPU workers or
SMPI ranks) are in --class at t_k = t_0 + k·period, as Arrow (FILE.arrow),
Parquet (FILE.parquet) or CSV (FILE.csv, or - for standard output), times in the trace's unit
(milliseconds for StarPU). The innermost state decides a container's
class. Without --period, the period is half the shortest time between two
changes of the signal, raised to --min-period and to the run's length /
--max-samples (100000 samples by default); a log line says which period
was chosen, why, and how many samples it makes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputs(args, out); err != nil {
				return err
			}
			if s.Period.Sign() > 0 && !cmd.Flags().Changed("max-samples") {
				s.MaxSamples = 10_000_000 // the automatic period's cap is not a given period's
			}
			t.Path = args[0]
			return runner().SignalFile(cmd.Context(), t, s, out)
		},
	}
	signalFlags(cmd, &t, &s, 100_000)
	cmd.Flags().Lookup("max-samples").Usage = "the automatic period is raised so that the signal has at most this many samples (a given --period may make up to 10000000, or this many when set)"
	cmd.Flags().StringVarP(&out, "output", "o", "", "output: FILE.arrow, FILE.parquet, FILE.csv or - (CSV)")
	return cmd
}

func newKSCmd() *cobra.Command {
	var method string
	var alpha float64
	cmd := &cobra.Command{
		Use:   "ks [--method matlab|scipy|r] [--alpha A] FILE1 FILE2",
		Short: "Two-sample Kolmogorov-Smirnov test on two samples of integers",
		Long: `ks reads two samples, one non-negative integer per line (plain or gzip), and
prints one JSON object, a tracecast.kstest/1 record (docs/schemas/kstest.json):
n1, n2, d (exact, from integer counts), d_num/d_den, p, alpha, reject
(p < alpha), hit (not rejected), method and whether p is exact.
p as MATLAB's kstest2 computes it (matlab, the default), as SciPy's
ks_2samp (scipy) or as R's ks.test (r).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return specs.KSFiles(os.Stdout, method, alpha, [2]string{args[0], args[1]})
		},
	}
	cmd.Flags().StringVar(&method, "method", "matlab", "p-value method: matlab, scipy, r")
	cmd.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level, in (0, 1): reject H0 (same distribution) when p < alpha")
	return cmd
}

func newHitrateCmd() *cobra.Command {
	t := specs.DefaultTrace()
	var s specs.Signal
	o := specs.Hitrate{Method: "matlab", Alpha: 0.05, Windows: "1000:50000:1000"}
	cmd := &cobra.Command{
		Use:   "hitrate [flags] TRACE",
		Short: "KS hit-rate of consecutive windows for many window sizes, in one pass",
		Long: `hitrate samples the trace's signal (see 'tracecast signal'), cuts it into
consecutive windows of w samples for every w of --windows, compares each
window with the previous one (two-sample KS test) and prints, per window
size: samples, compared (pairs of windows; a trailing partial window is not
compared), hits (same distribution not rejected at --alpha) and hit_rate
(null when nothing was compared). One JSON line per size, a
tracecast.hitrate/1 record (docs/schemas/hitrate.json); a table on a
terminal.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t.Path = args[0]
			return runner().RunHitrate(cmd.Context(), t, s, o, os.Stdout, isTerminal(os.Stdout))
		},
	}
	signalFlags(cmd, &t, &s, 10_000_000)
	cliflags.Bind(cmd.Flags(), &o)
	return cmd
}

func newPredictCmd() *cobra.Command {
	t := specs.DefaultTrace()
	w := specs.Windows{Queries: []string{"idle>=25%"}, Alpha: 0.05, IdleThreshold: 0.8, RegimeMisses: 3}
	f := specs.Forecasts{Coverage: 0.9, RegimeAlpha: 0.01}
	var out string
	var verify bool
	var spells []string
	cmd := &cobra.Command{
		Use:   "predict TRACE [--horizon D]... [--every D] [--query 'idle>=25%']... [--method M] [--format jsonl|arrow|parquet] [-o DIR]",
		Short: "Forecast idle capacity over a consumer's horizons (or over KS windows with --window)",
		Long: `predict forecasts, every --every of trace time t, for each --horizon H and
--query (idle>=25%: at least 25% of the selected containers idle): p, the
fraction of [t, t+H) during which the query will hold, with an interval
meant to hold it with probability --coverage, and the mean fraction idle,
from the trace up to t only, by --method: auto (default: a combination
learnt from the outcomes already known), ks-paper (the last H),
persistence, climatology or markov. Alert episodes: idle-opportunity (p
at or above --idle-threshold), regime-change. Records go to standard
output as JSON lines or to -o DIR; on a terminal a table of scores.
--verify scores them against what happened; --explain says what carried
them (auto's experts and the features' permutation importance). R, the
selected containers, is counted in a first pass over the file (or in the
one pass, where the file's beginning and end say it: docs/forecasts.md):
TRACE - (standard input, read once) needs --workers R.

With --window W (or --model), predict cuts the signal (see 'tracecast
signal') into windows of W samples and predicts each window from the
previous one, followed by the KS test's verdict; alerts after
--regime-misses misses in a row. Every record has a deterministic id.
Standard output carries the lines -o DIR writes to records.jsonl: windows,
predictions, verdicts and alerts.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t.Path = args[0]
			p := specs.Predict{Trace: t, Windows: w, Forecasts: f, Out: out, Verify: verify, Terminal: isTerminal(os.Stdout)}
			if err := p.Prepare(append(args, paths.Given(w.Model)...)); err != nil {
				return err
			}
			defer memlimit.FollowLive(commandMemFloor)()
			if len(spells) > 0 {
				return predictSpells(cmd, t, spells, f.Every, f.RunID, out, f.Format)
			}
			return runner().Predict(cmd.Context(), p, os.Stdout, os.Stderr)
		},
	}
	signalFlags(cmd, &t, &w.Signal, 10_000_000)
	fl := cmd.Flags()
	cliflags.Bind(fl, &w)
	cliflags.Bind(fl, &f)
	fl.StringVar(&w.Method, "method", "", "forecast method: auto (default), ks-paper, persistence, climatology, markov; with --window, the KS p-value method: matlab (default), scipy, r")
	fl.BoolVar(&verify, "verify", false, "score the forecasts against what happened: a table on standard error, DIR/scores.jsonl with -o")
	fl.StringArrayVar(&spells, "spells", nil, "instead: spell forecasts, P(an idle worker stays idle, a busy one busy, d more), for these lengths d (repeatable; docs/backfill.md), scored")
	cmd.Flags().StringVarP(&out, "output", "o", "", "directory for the output files (default: JSON lines on standard output)")
	return cmd
}

func newVerifyCmd() *cobra.Command {
	t := specs.DefaultTrace()
	o := specs.Verify{Rules: "auto", Format: "table"}
	cmd := &cobra.Command{
		Use:   "verify TRACE FORECASTS.jsonl",
		Short: "Score forecasts (from predict or a live pipeline) against what happened in the trace",
		Long: `verify reads the forecast records of FORECASTS.jsonl (other records are
skipped) and scores them against the trace they are about: per query and
horizon, the mean squared error of p and of mean, the skill against
persistence, climatology and ks-paper at the same times, and the interval
coverage. --format jsonl writes score records with the reliability table.
Definitions: docs/forecasts.md.

Every forecast record is checked first: the fields of the schema, p,
mean, lo and hi in [0, 1], a positive horizon; the first bad one stops
verify with FILE:LINE: reason. The forecasts must be of one run, the
trace's (its run id as predict names it: docs/forecasts.md, Run ids);
--run R scores run R's forecasts whatever the trace's run id (a run named
by --run-id, a Kafka key), and only them. --explain adds what carried the
forecasts, from the explanation records of predict --explain.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t.Path = args[0]
			return runner().RunVerify(cmd.Context(), t, o, args[1], os.Stdout)
		},
	}
	cliflags.Bind(cmd.Flags(), &t)
	cliflags.Bind(cmd.Flags(), &o)
	return cmd
}

func newReportCmd() *cobra.Command {
	t := specs.DefaultTrace()
	var out, rules, starpuDir string
	var horizons, bfTasks []string
	power := specs.ReportPower{Attribution: specs.DefaultAttribution()}
	cmd := &cobra.Command{
		Use:   "report TRACE [--power FILE]... -o report.html",
		Short: "Write one self-contained HTML page about a trace: Gantt chart, occupancy, forecasts and their skill",
		Long: `report reads a trace and writes one HTML page that opens in any browser
without network access: the trace's summary, a zoomable Gantt chart of the
selected containers' states (StarPU workers or SMPI ranks), how many are
idle, computing or communicating over time, the idle-capacity forecasts
(idle>=25%) drawn over what happened, and their skill against the
baselines (docs/forecasts.md); over the Gantt chart, each idle and busy
spell's forecast length (predict --spells) against the spell, with each
worker's calibration. Large traces are aggregated so the page
stays small. With --power (one power-meter stream per file, as tracecast
energy reads them and with its options), the page also shows the power over
time and each node's energy by state class (docs/report.md). With
--starpu-dir, it also shows the task models of StarPU's sampling directory
(fit-model --starpu-dir: docs/tasks.md). With --backfill D, it also shows
what backfilling back-end tasks of length D on the idle workers is worth,
policy by policy (tracecast backfill in wait mode: docs/backfill.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := power.Check(cmd.Flags()); err != nil {
				return err
			}
			if err := checkOutputs(append(args, power.Powers...), out); err != nil {
				return err
			}
			defer memlimit.FollowLive(commandMemFloor)()
			t.Path = args[0]
			var sections []func(*report.Page)
			if starpuDir != "" {
				s, err := modelio.FitStarPUDefaults(starpuDir)
				if err != nil {
					return err
				}
				sections = append(sections, func(p *report.Page) { p.SetStarPU(s) })
			}
			if len(bfTasks) > 0 {
				ds, err := durations("backfill", bfTasks)
				if err != nil {
					return cliflags.Usage(err)
				}
				add, err := runner().BackfillSection(cmd.Context(), t, rules, ds)
				if err != nil {
					return err
				}
				sections = append(sections, add)
			}
			if err := runner().WriteReport(cmd.Context(), t, rules, horizons, power, out, sections...); err != nil {
				return err
			}
			fmt.Println(out)
			return nil
		},
	}
	cliflags.Bind(cmd.Flags(), &t)
	cliflags.Bind(cmd.Flags(), &power)
	cmd.Flags().StringVarP(&out, "output", "o", "", "the HTML file to write")
	cmd.Flags().StringVar(&rules, "rules", "auto", "state classes: auto, starpu, smpi")
	cmd.Flags().StringArrayVar(&horizons, "horizon", nil, "forecast horizons, durations with a unit (default: 0.1%, 1% and 10% of the run)")
	cmd.Flags().StringVar(&starpuDir, "starpu-dir", "", "also show the task models of StarPU's sampling directory ($STARPU_HOME), as fit-model --starpu-dir fits them")
	cmd.Flags().StringArrayVar(&bfTasks, "backfill", nil, "also show what backfilling back-end tasks of this length is worth, policy by policy (wait mode; repeatable)")
	return cmd
}

func newStatesCmd() *cobra.Command {
	return front.NewStatesCmd(func(ctx context.Context, o reader.States) error { return runner().RunStates(ctx, o) })
}
