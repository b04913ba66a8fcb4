package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/study"
)

// studyTrainFlags are train's analysis and fit flags, also reproduce's. The
// numeric ones are bound to cfg; config parses the others.
type studyTrainFlags struct {
	windows, method string
	cfg             study.TrainConfig
}

func (t *studyTrainFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&t.windows, "windows", "1000:50000:1000", "candidate window sizes in samples: a list or FROM:TO:STEP")
	fl.Float64Var(&t.cfg.Target, "target", 0.95, "hit-rate at which the fitted surface is cut")
	fl.StringVar(&t.method, "method", "matlab", "KS p-value method: matlab, scipy, r")
	fl.Float64Var(&t.cfg.Alpha, "alpha", 0.05, "KS significance level")
	fl.Float64Var(&t.cfg.Period, "period", 0, "sampling period Δ in trace units (ms for StarPU) for every trace; 0: seed 004's per-trace rule (half the shortest time between two changes) raised by --min-period and --max-samples")
	fl.Float64Var(&t.cfg.MinPeriod, "min-period", 0, "floor for the per-trace period (--period 0)")
	fl.IntVar(&t.cfg.MaxSamples, "max-samples", 10_000_000, "the per-trace period is raised so that a signal has at most this many samples (--period 0)")
	fl.IntVar(&t.cfg.Degree, "degree", 4, "total degree of the polynomial surface; needs points at this many DAG sizes per cluster size at least (its degree in T is one less with exactly that many), else refused")
	fl.IntVar(&t.cfg.Jobs, "jobs", runtime.GOMAXPROCS(0), "traces analysed in parallel")
	fl.BoolVar(&t.cfg.Plots, "plots", true, "write the plots (PNG and SVG)")
}

// config is the flags as the study's options.
func (t *studyTrainFlags) config() (*study.TrainConfig, error) {
	m, err := ks.ParseMethod(t.method)
	if err != nil {
		return nil, usageErr(err)
	}
	ws, err := parseWindows(t.windows)
	if err != nil {
		return nil, usageErr(err)
	}
	if t.cfg.MaxSamples <= 0 {
		return nil, usageErr(fmt.Errorf("--max-samples must be positive (got %d)", t.cfg.MaxSamples))
	}
	if t.cfg.Target <= 0 || t.cfg.Target > 1 {
		return nil, usageErr(fmt.Errorf("--target %g: want (0, 1]", t.cfg.Target))
	}
	c := t.cfg
	c.Method, c.Windows = m, ws
	return &c, nil
}

func newTrainCmd() *cobra.Command {
	var t studyTrainFlags
	var metaDir, out string
	cmd := &cobra.Command{
		Use:   "train (--meta-dir DIR | META.json... | TRACE...) -o DIR",
		Short: "Seed 004's benchmarking phase: hit-rate surfaces per cluster size, fitted and cut into a window-size model",
		Long: `train is the surface builder and analyzer of seed 004. For every trace (from
the synthesizer's metadata files: --meta-dir DIR, or META.json arguments; or
trace files, whose R is the number of workers and T the number of tasks seen)
it samples the idle-worker signal, classifies the trace (uniform idle / patch
/ uniform computation, §IV-B), and computes the KS hit-rate of every candidate
window size in one pass. Per cluster size R, the (w, T, hit-rate) points are
fitted by a least-squares polynomial surface of total degree --degree (4:
MATLAB's poly44), cut at --target for each T: the window-size model.

Writes DIR/window-model.json (versioned: coefficients, R², residuals, cuts),
DIR/traces.jsonl (per trace: R, T, period, samples, classification),
DIR/points.csv (every hit-rate) and DIR/plots/ (surface heat maps with the
target contour per R, window size vs DAG size), and prints one line per trace.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr(fmt.Errorf("-o DIR is required"))
			}
			cfg, err := t.config()
			if err != nil {
				return err
			}
			ins, err := study.Inputs(metaDir, args)
			if err != nil {
				return err
			}
			if len(ins) == 0 {
				return usageErr(fmt.Errorf("no trace: give --meta-dir DIR, metadata files or traces"))
			}
			start := time.Now()
			as, _, err := study.Train(ins, out, cfg)
			if err != nil {
				return studyErr(err)
			}
			for _, a := range as {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\tR=%d\tT=%d\t%s\tidle=%.2f\tsamples=%d\n", a.Trace, a.R, a.T, a.Class.State, a.Class.IdleFraction, a.Samples)
			}
			log.Info().Int("traces", len(as)).Dur("took", time.Since(start)).Str("model", filepath.Join(out, "window-model.json")).Msg("trained")
			return nil
		},
	}
	t.register(cmd)
	cmd.Flags().StringVar(&metaDir, "meta-dir", "", "directory of *.meta.json files written by 'tracecast synth'")
	cmd.Flags().StringVarP(&out, "output", "o", "", "output directory")
	return cmd
}
