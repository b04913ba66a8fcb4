package main

import (
	"bufio"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/stats/surface"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// studyJob is one (DAG, cluster size) run of the study.
type studyJob struct {
	phase  string // "train" or "validate"
	subset int
	group  int // DAG size group (T nominal)
	synth  studySynthConfig
}

func (j studyJob) name() string {
	return fmt.Sprintf("%s%d_T%d_R%03d", j.phase[:1], j.subset, j.group, j.synth.workers)
}

type studyReproduceFlags struct {
	studyTrainFlags
	synth     studySynthConfig
	out       string
	trainSets int
	validSets int
	sizes     string
	workers   string
	seed      uint64
	keep      bool
}

func studyInts(s string) ([]int, error) {
	if strings.Contains(s, ":") {
		return parseWindows(s)
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("bad list %q", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// studyJobs synthesizes each job's trace into a pipe and analyses it as
// it is written: nothing is held but the signal (or, with keep, the trace
// goes to dir as well).
func studyJobs(jobs []studyJob, n int, cfg *studyAnalyzeConfig, predictW func(R, T int) (int, error), keepDir string) ([]*studyAnalysis, error) {
	return parallel(len(jobs), n, func(i int) (*studyAnalysis, error) {
		j := jobs[i]
		pr, pw := io.Pipe()
		metaCh := make(chan *studySynthMeta, 1)
		go func() {
			var w io.Writer = pw
			var closeKeep func() error
			if keepDir != "" {
				kw, c, err := studyCreate(filepath.Join(keepDir, j.name()+".trace.gz"))
				if err != nil {
					pw.CloseWithError(err)
					metaCh <- nil
					return
				}
				w, closeKeep = io.MultiWriter(pw, kw), c
			}
			m, err := j.synth.synthesize(w, nil)
			if closeKeep != nil {
				err = firstErr(err, closeKeep())
			}
			if m != nil && keepDir != "" {
				m.Trace = j.name() + ".trace.gz"
				m.Labels = map[string]string{"phase": j.phase, "subset": strconv.Itoa(j.subset), "group": strconv.Itoa(j.group)}
				err = firstErr(err, studyWriteJSON(filepath.Join(keepDir, j.name()+".meta.json"), m))
			}
			pw.CloseWithError(err)
			metaCh <- m
		}()
		a, err := studyAnalyzeTrace(pr, j.name(), j.synth.tasks, cfg, predictW)
		if err != nil {
			pr.CloseWithError(err)
		} else {
			io.Copy(io.Discard, pr)
		}
		<-metaCh
		if err != nil {
			return nil, err
		}
		a.Labels = map[string]string{"phase": j.phase, "subset": strconv.Itoa(j.subset), "group": strconv.Itoa(j.group)}
		return a, nil
	})
}

func newReproduceCmd() *cobra.Command {
	var f studyReproduceFlags
	cmd := &cobra.Command{
		Use:   "reproduce [-o DIR]",
		Short: "Seed 004's study at a reduced scale: synthesize, train the window-size model, validate, write REPORT.md",
		Long: `reproduce runs seed 004's benchmarking and prediction phases on synthetic
workloads (see 'tracecast synth'): --train-subsets subsets of one DAG per
size in --sizes, each run on every cluster size in --workers, are analysed
(one pass per trace, every candidate window size) and fitted into the
window-size model; --validation-subsets disjoint subsets are then run through
the prediction phase with the model's window size for their (R, T), and
DIR/REPORT.md gives the model, the per-trace validation hit-rates against
DAG size per cluster size (the paper's Fig. 10) and their averages, with the
plots in DIR/plots and DIR/model/plots.

Traces are synthesized into a pipe and analysed as they are written; with
--keep-traces they are also written to DIR/traces (gzip) with their metadata.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run()
		},
	}
	f.studyTrainFlags.register(cmd)
	f.synth.register(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "output", "o", "reproduce/out", "output directory")
	fl.IntVar(&f.trainSets, "train-subsets", 8, "training DAG subsets (one DAG per size each)")
	fl.IntVar(&f.validSets, "validation-subsets", 3, "validation DAG subsets, disjoint from the training ones")
	fl.StringVar(&f.sizes, "sizes", "1000:4000:200", "DAG size groups (tasks): a list or FROM:TO:STEP")
	fl.StringVar(&f.workers, "cluster-sizes", "8,16,32,64,128,256", "cluster sizes R (workers)")
	fl.Uint64Var(&f.seed, "study-seed", 2013, "seed of the whole study")
	fl.BoolVar(&f.keep, "keep-traces", false, "also write the traces and metadata to DIR/traces")
	return cmd
}

func (f *studyReproduceFlags) run() error {
	cfg, err := f.studyTrainFlags.config()
	if err != nil {
		return err
	}
	sizes, err := studyInts(f.sizes)
	if err != nil {
		return usageErr(fmt.Errorf("--sizes: %w", err))
	}
	rs, err := studyInts(f.workers)
	if err != nil {
		return usageErr(fmt.Errorf("--cluster-sizes: %w", err))
	}
	if f.trainSets < 1 || f.validSets < 0 {
		return usageErr(fmt.Errorf("need at least one training subset"))
	}
	keepDir := ""
	if f.keep {
		keepDir = filepath.Join(f.out, "traces")
		if err := os.MkdirAll(keepDir, 0o755); err != nil {
			return err
		}
	}
	mk := func(phase string, sets int) []studyJob {
		var js []studyJob
		for s := 0; s < sets; s++ {
			for gi, g := range sizes {
				// One DAG per (subset, group), run on every R. Validation
				// seeds live in another range: the subsets are disjoint.
				seed := f.seed*1_000_003 + uint64(gi)*101 + uint64(s)*7919
				if phase == "validate" {
					seed += 1 << 40
				}
				for _, r := range rs {
					c := f.synth
					c.tasks = g + int(seed%13) // Table I: a group's DAGs have T to T+25 tasks
					c.workers = r
					c.seed = seed
					js = append(js, studyJob{phase: phase, subset: s, group: g, synth: c})
				}
			}
		}
		return js
	}
	start := time.Now()
	trainJobs := mk("train", f.trainSets)
	log.Info().Int("traces", len(trainJobs)).Msg("benchmarking phase: synthesize and analyse")
	as, err := studyJobs(trainJobs, f.jobs, cfg, nil, keepDir)
	if err != nil {
		return err
	}
	tTrain := time.Since(start)
	m, err := studyTrainAndWrite(filepath.Join(f.out, "model"), as, f.model(cfg), f.plots)
	if err != nil {
		return err
	}
	tModel := time.Since(start)
	var vs []*studyAnalysis
	if f.validSets > 0 {
		validJobs := mk("validate", f.validSets)
		log.Info().Int("traces", len(validJobs)).Msg("prediction phase: validation traces with the model's window sizes")
		vs, err = studyJobs(validJobs, f.jobs, cfg, m.Window, keepDir)
		if err != nil {
			return err
		}
		if err := writeStudyOutputs(filepath.Join(f.out, "model"), append(append([]*studyAnalysis{}, as...), vs...)); err != nil {
			return err
		}
	}
	total := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if err := studyWriteReport(f, m, as, vs, sizes, rs, map[string]time.Duration{"train": tTrain, "model": tModel - tTrain, "validate": total - tModel, "total": total}, ms.Sys); err != nil {
		return err
	}
	log.Info().Dur("took", total).Str("report", filepath.Join(f.out, "REPORT.md")).Msg("reproduced")
	return nil
}

func studyMean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func studyWriteReport(f *studyReproduceFlags, m *surface.Model, as, vs []*studyAnalysis, sizes, rs []int, took map[string]time.Duration, sys uint64) error {
	plotDir := filepath.Join(f.out, "plots")
	if err := os.MkdirAll(plotDir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Reproduction of seed 004's benchmarking and prediction phases (reduced scale)\n\n")
	p("Generated by `tracecast reproduce` on %s (%d CPUs). Do not edit: rerun `make reproduce`.\n\n", time.Now().UTC().Format(time.RFC3339), runtime.NumCPU())
	p("## Setup\n\n")
	p("| | |\n|---|---|\n")
	p("| training | %d subsets × %d DAG sizes (%s) × %d cluster sizes (%s) = %d traces |\n", f.trainSets, len(sizes), f.sizes, len(rs), f.workers, len(as))
	p("| validation | %d disjoint subsets × %d sizes × %d cluster sizes = %d traces |\n", f.validSets, len(sizes), len(rs), len(vs))
	p("| workload | synthetic DAGs (`tracecast synth`), codelets `%s`, transfer probability %g (mean %g ms), eager list scheduling |\n", f.synth.codelets, f.synth.transferP, f.synth.transferMS)
	p("| signal | idle workers (StarPU rules), Δ = %s |\n", m.Sampling+func() string {
		if m.Period > 0 {
			return fmt.Sprintf(" %g ms", m.Period)
		}
		return ""
	}())
	p("| KS | %s p-value, α = %g; windows %d…%d step %d samples |\n", m.Method, m.Alpha, m.WMin, m.WMax, m.WStep)
	p("| model | polynomial surface of total degree %d in (w, T) per R, cut at %.0f%% |\n", m.Degree, 100*m.Target)
	p("| time | synthesize+analyse training %.1fs, fit+plots %.1fs, validation %.1fs, total %.1fs (Go runtime Sys %.0f MiB; see below for peak RSS) |\n\n",
		took["train"].Seconds(), took["model"].Seconds(), took["validate"].Seconds(), took["total"].Seconds(), float64(sys)/(1<<20))

	p("## Benchmarking phase: surfaces and window-size model (Fig. 7, Fig. 9)\n\n")
	p("| R | traces | points | R² | RMSE | max \\|res\\| | states (idle/patch/comp.) | window at T = %d | T = %d | T = %d |\n|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n",
		sizes[0], sizes[len(sizes)/2], sizes[len(sizes)-1])
	for _, rm := range m.Surfaces {
		st := map[surface.State]int{}
		for _, a := range as {
			if a.R == rm.R {
				st[a.Class.State]++
			}
		}
		w := func(t int) string {
			x, _ := m.Window(rm.R, t)
			return strconv.Itoa(x)
		}
		p("| %d | %d | %d | %.3f | %.3f | %.3f | %d/%d/%d | %s | %s | %s |\n", rm.R, rm.Traces, rm.Fit.N, rm.Fit.R2, rm.Fit.RMSE, rm.Fit.MaxAbsRes,
			st[surface.UniformIdle], st[surface.Patch], st[surface.UniformComputation], w(sizes[0]), w(sizes[len(sizes)/2]), w(sizes[len(sizes)-1]))
	}
	p("\nCut status per R (crossing: the surface falls below the target inside the window range; flat: never below, the largest window; below: already below at the smallest window):\n\n")
	for _, rm := range m.Surfaces {
		cnt := map[string]int{}
		for _, c := range rm.Cuts {
			cnt[c.Status]++
		}
		p("- R = %d: %d crossing, %d flat, %d below\n", rm.R, cnt["crossing"], cnt["flat"], cnt["below"])
	}
	p("\nPlots: `model/plots/surface_R*.png|svg` (heat map of the fitted surface with the %.0f%% contour and the cuts), `model/plots/window_model.png|svg` (window size vs DAG size per R).\n\n", 100*m.Target)
	p("![window model](model/plots/window_model.png)\n\n")

	if len(vs) > 0 {
		p("## Prediction phase: validation hit-rates (Fig. 10)\n\n")
		p("Each cell: the prediction hit-rate of the validation trace (fraction of KS hits between consecutive windows of the model's size) for subsets ")
		for s := 0; s < f.validSets; s++ {
			if s > 0 {
				p(" / ")
			}
			p("%c", 'a'+s)
		}
		p("; `-` when the trace is shorter than two windows of the model's size.\n\n| T |")
		for _, r := range rs {
			p(" R=%d |", r)
		}
		p("\n|---:|")
		for range rs {
			p("---:|")
		}
		p("\n")
		cell := map[[3]int]*studyAnalysis{}
		for _, v := range vs {
			s, _ := strconv.Atoi(v.Labels["subset"])
			g, _ := strconv.Atoi(v.Labels["group"])
			cell[[3]int{s, g, v.R}] = v
		}
		for _, g := range sizes {
			p("| %d |", g)
			for _, r := range rs {
				var parts []string
				for s := 0; s < f.validSets; s++ {
					v := cell[[3]int{s, g, r}]
					if v == nil || v.Validate == nil || v.Validate.Verdicts == 0 {
						parts = append(parts, "-")
					} else {
						parts = append(parts, fmt.Sprintf("%.2f", v.Validate.HitRate))
					}
				}
				p(" %s |", strings.Join(parts, "/"))
			}
			p("\n")
		}
		p("\n| R | validated traces | mean hit-rate | share ≥ 0.90 | mean window (samples) | mean horizon (s) | untestable |\n|---:|---:|---:|---:|---:|---:|---:|\n")
		var all []float64
		allGE := 0
		perSubset := make([][]float64, f.validSets)
		for _, r := range rs {
			var hs, wsz, hz []float64
			ge, none := 0, 0
			for _, v := range vs {
				if v.R != r {
					continue
				}
				if v.Validate == nil || v.Validate.Verdicts == 0 {
					none++
					continue
				}
				hs = append(hs, v.Validate.HitRate)
				wsz = append(wsz, float64(v.Validate.Window))
				hz = append(hz, v.Validate.HorizonS)
				s, _ := strconv.Atoi(v.Labels["subset"])
				perSubset[s] = append(perSubset[s], v.Validate.HitRate)
				if v.Validate.HitRate >= 0.9 {
					ge++
				}
			}
			all = append(all, hs...)
			allGE += ge
			p("| %d | %d | %.3f | %.0f%% | %.0f | %.3g | %d |\n", r, len(hs), studyMean(hs), 100*float64(ge)/math.Max(1, float64(len(hs))), studyMean(wsz), studyMean(hz), none)
		}
		p("\n**Average prediction hit-rate: %.3f** over %d validation traces (%.0f%% of them ≥ 0.90); per subset:", studyMean(all), len(all), 100*float64(allGE)/math.Max(1, float64(len(all))))
		for s, h := range perSubset {
			p(" %c = %.3f", 'a'+s, studyMean(h))
		}
		p(". The paper reports averages up to 0.94 and most cases ≥ 0.90.\n\n")
		if err := studyPlotValidation(plotDir, vs, rs, f.validSets); err != nil {
			return err
		}
		for s := 0; s < f.validSets; s++ {
			p("![validation %c](plots/validation_%c.png)\n", 'a'+s, 'a'+s)
		}
		p("\n")
	}
	p("## Where and why this differs from the paper\n\n")
	b.WriteString(`- **Workload.** The paper's 1600 DAGs (from Cordasco & Rosenberg) and its StarPU runs on a non-dedicated cluster are not public. Here DAGs are drawn by 'tracecast synth' to match Table I's ranges (tasks, edges/task, max out-degree, level), run by an idealised eager list scheduler with lognormal task durations and no background load, no network contention and no runtime noise. Real non-dedicated clusters add interference, which makes consecutive windows less alike; our traces are cleaner, so hit-rates are not comparable in absolute value.
- **Scale.** The DAG sizes, subsets and cluster sizes follow the paper (8 training and 3 validation subsets of 16 sizes, R = 8…256) when run with the defaults; the CI configuration is smaller. The paper's R counts nodes; here R is the number of StarPU workers.
- **Sampling.** The paper samples each trace at its Nyquist rate (half the smallest time between two changes of the signal). StarPU writes runtime states microseconds apart, so that rule gives sub-microsecond periods; the study keeps the rule but caps the number of samples per trace (--max-samples), which in practice makes Δ = trace span / max-samples for every trace, in training and in prediction alike. A window of w samples is then a fixed fraction of the trace, not a fixed time; window sizes are comparable between our training and validation traces of similar (R, T), not with the paper's numbers.
- **KS test.** MATLAB's kstest2 asymptotic p-value (the paper's) on integer signals with heavy ties; consecutive samples are strongly autocorrelated, so the test is far from its nominal level, as in the paper.
- **Surface fit.** Least-squares total-degree-4 polynomial in normalised (w, T) (MATLAB poly44 with Normalize); the paper does not give its fit quality. A window size is the first crossing of the target going up in w; surfaces that never reach the target inside the range give the smallest window (status "below"), surfaces that never fall below give the largest ("flat").
- **Trace states.** §IV-B's three states are classified from the idle signal: uniform idle when ≥ 60% of the samples have ≥ 75% of the workers idle, uniform computation when ≥ 60% have ≤ 25% idle, patch otherwise. The paper classifies by looking at the traces.
`)
	// What the numbers say, against the paper's observations.
	var below, flat []string
	for _, rm := range m.Surfaces {
		nb, nf := 0, 0
		for _, c := range rm.Cuts {
			switch c.Status {
			case "below":
				nb++
			case "flat":
				nf++
			}
		}
		var h0 []float64
		for _, a := range as {
			if a.R == rm.R && len(a.Sweep) > 0 && a.Sweep[0].Compared > 0 {
				h0 = append(h0, a.Sweep[0].HitRate)
			}
		}
		d := fmt.Sprintf("R = %d (mean training hit-rate %.2f at w = %d)", rm.R, studyMean(h0), m.WMin)
		if nb == len(rm.Cuts) {
			below = append(below, d)
		} else if nf == len(rm.Cuts) {
			flat = append(flat, d)
		}
	}
	if len(flat) > 0 {
		p("- **Saturated clusters.** Flat surfaces at or above the target for every window (the largest window is modeled): %s. This matches the paper's flat surfaces for small clusters (Fig. 7a-b, uniform computation).\n", strings.Join(flat, ", "))
	}
	if len(below) > 0 {
		p("- **Surfaces below the target.** For %s the fitted surface is below %.0f%% already at the smallest candidate window, so the model can only give the smallest window and the validation hit-rates stay below the paper's. Unlike the paper's 128- and 256-node runs (flat surfaces, uniform idle), our large clusters are classified uniform idle or patch but the number of idle workers still changes at every task start and end: an idealised scheduler with independent lognormal durations produces a change of the idle count every few tens of microseconds (plus microsecond blips between back-to-back tasks), of the order of one per window of %d samples at these sampling periods, and the KS test on such step signals rejects as soon as two windows see different levels. The paper's tasks on a real cluster were presumably much longer relative to its sampling period; smaller candidate windows (or a longer mean task duration relative to Δ: --codelets, --max-samples) move the cut inside the range.\n", strings.Join(below, ", "), 100*m.Target, m.WMin)
	}
	p("\n## Resources\n\nPeak RSS and wall time are measured by `make reproduce` with `/usr/bin/time -v` into `time.txt` next to this report.\n")
	return os.WriteFile(filepath.Join(f.out, "REPORT.md"), []byte(b.String()), 0o644)
}

// studyPlotValidation draws, per studyValidation subset, the hit-rate of every trace
// against its DAG size, one line per cluster size (Fig. 10).
func studyPlotValidation(dir string, vs []*studyAnalysis, rs []int, sets int) error {
	cols := moreland.SmoothBlueRed()
	cols.SetMin(0)
	cols.SetMax(float64(max(1, len(rs)-1)))
	for s := 0; s < sets; s++ {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("Validation subset %c: prediction hit-rate with the model's window", 'a'+s)
		p.X.Label.Text = "DAG size (tasks)"
		p.Y.Label.Text = "hit-rate"
		p.Y.Min, p.Y.Max = 0, 1.02
		p.Add(plotter.NewGrid())
		for i, r := range rs {
			var xy plotter.XYs
			for _, v := range vs {
				if v.R == r && v.Labels["subset"] == strconv.Itoa(s) && v.Validate != nil && v.Validate.Verdicts > 0 {
					xy = append(xy, plotter.XY{X: float64(v.T), Y: v.Validate.HitRate})
				}
			}
			if len(xy) == 0 {
				continue
			}
			sort.Slice(xy, func(a, b int) bool { return xy[a].X < xy[b].X })
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return err
			}
			c, _ := cols.At(float64(i))
			l.Color, pts.Color = c, c
			pts.Shape = draw.CircleGlyph{}
			p.Add(l, pts)
			p.Legend.Add(fmt.Sprintf("R = %d", r), l, pts)
		}
		ref := plotter.NewFunction(func(float64) float64 { return 0.9 })
		ref.Color = color.Gray{128}
		ref.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		p.Add(ref)
		p.Legend.Top = false
		if err := studySavePlot(p, dir, fmt.Sprintf("validation_%c", 'a'+s), 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return err
		}
	}
	return nil
}

var _ = bufio.NewWriter
