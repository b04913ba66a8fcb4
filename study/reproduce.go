package study

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// ReproduceConfig is the study at a chosen scale: TrainSubsets subsets of
// one DAG per size in Sizes, each run on every cluster size in
// ClusterSizes, train the model; ValidationSubsets disjoint subsets validate
// it.
type ReproduceConfig struct {
	TrainConfig
	// Synth is the workload: codelets, transfers, DAG shape. Tasks, Workers
	// and Seed are set per trace from Sizes, ClusterSizes and Seed.
	Synth             SynthConfig
	Out               string // output directory
	TrainSubsets      int
	ValidationSubsets int
	Sizes             []int // DAG size groups (tasks)
	ClusterSizes      []int // R (workers)
	// SizesSpec and ClusterSizesSpec are Sizes and ClusterSizes as the user
	// wrote them (a list or FROM:TO:STEP), for the report; empty: the lists.
	SizesSpec, ClusterSizesSpec string
	Seed                        uint64 // seed of the whole study
	KeepTraces                  bool   // also write the traces and metadata to Out/traces
}

// job is one (DAG, cluster size) run of the study.
type job struct {
	phase  string // "train" or "validate"
	subset int
	group  int // DAG size group (T nominal)
	synth  SynthConfig
}

func (j job) name() string {
	return fmt.Sprintf("%s%d_T%d_R%03d", j.phase[:1], j.subset, j.group, j.synth.Workers)
}

func (j job) labels() map[string]string {
	return map[string]string{"phase": j.phase, "subset": strconv.Itoa(j.subset), "group": strconv.Itoa(j.group)}
}

// jobs are the runs of a phase: one DAG per (subset, group), run on every R.
func (c *ReproduceConfig) jobs(phase string, sets int) []job {
	var js []job
	for s := 0; s < sets; s++ {
		for gi, g := range c.Sizes {
			// Validation seeds live in another range: the subsets are disjoint.
			seed := c.Seed*1_000_003 + uint64(gi)*101 + uint64(s)*7919
			if phase == "validate" {
				seed += 1 << 40
			}
			for _, r := range c.ClusterSizes {
				sc := c.Synth
				sc.Tasks = g + int(seed%13) // Table I: a group's DAGs have T to T+25 tasks
				sc.Workers = r
				sc.Seed = seed
				js = append(js, job{phase: phase, subset: s, group: g, synth: sc})
			}
		}
	}
	return js
}

// runJobs synthesizes each job's trace into a pipe and analyses it as it
// is written: nothing is held but the signal (with keepDir, the trace goes
// there as well, with its metadata).
func runJobs(jobs []job, n int, cfg *AnalyzeConfig, predictW WindowFunc, keepDir string) ([]*Analysis, error) {
	return parallel(len(jobs), n, func(i int) (*Analysis, error) {
		j := jobs[i]
		pr, pw := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			var w io.Writer = pw
			var closeKeep func() error
			if keepDir != "" {
				kw, c, err := create(filepath.Join(keepDir, j.name()+".trace.gz"))
				if err != nil {
					pw.CloseWithError(err)
					return
				}
				w, closeKeep = io.MultiWriter(pw, kw), c
			}
			m, err := j.synth.Synthesize(w, nil)
			if closeKeep != nil {
				err = firstErr(err, closeKeep())
			}
			if m != nil && keepDir != "" {
				m.Trace = j.name() + ".trace.gz"
				m.Labels = j.labels()
				err = firstErr(err, writeJSON(filepath.Join(keepDir, j.name()+".meta.json"), m))
			}
			pw.CloseWithError(err)
		}()
		a, err := AnalyzeTrace(pr, j.name(), j.synth.Tasks, cfg, predictW)
		if err != nil {
			pr.CloseWithError(err) // the writer stops at its next write
		} else {
			io.Copy(io.Discard, pr) // the writer finishes its trace (and the kept copy)
		}
		<-done
		if err != nil {
			return nil, err
		}
		a.Labels = j.labels()
		return a, nil
	})
}

// Reproduce runs the study: the benchmarking phase (training traces
// synthesized and analysed, the model fitted into c.Out/model), then the
// prediction phase on the validation traces with the model's window for
// their (R, T), and writes c.Out/REPORT.md with its plots. log gets the
// progress.
func Reproduce(c *ReproduceConfig, log zerolog.Logger) error {
	if c.TrainSubsets < 1 || c.ValidationSubsets < 0 {
		return usageErr(fmt.Errorf("need at least one training subset"))
	}
	if len(c.Windows) == 0 || len(c.Sizes) == 0 || len(c.ClusterSizes) == 0 {
		return usageErr(fmt.Errorf("need candidate window sizes, DAG sizes and cluster sizes"))
	}
	keepDir := ""
	if c.KeepTraces {
		keepDir = filepath.Join(c.Out, "traces")
		if err := os.MkdirAll(keepDir, 0o755); err != nil {
			return err
		}
	}
	start := time.Now()
	trainJobs := c.jobs("train", c.TrainSubsets)
	log.Info().Int("traces", len(trainJobs)).Msg("benchmarking phase: synthesize and analyse")
	as, err := runJobs(trainJobs, c.Jobs, &c.AnalyzeConfig, nil, keepDir)
	if err != nil {
		return err
	}
	tTrain := time.Since(start)
	m := c.NewModel()
	if err := Fit(filepath.Join(c.Out, "model"), as, m, c.Plots); err != nil {
		return err
	}
	tModel := time.Since(start)
	var vs []*Analysis
	if c.ValidationSubsets > 0 {
		validJobs := c.jobs("validate", c.ValidationSubsets)
		log.Info().Int("traces", len(validJobs)).Msg("prediction phase: validation traces with the model's window sizes")
		vs, err = runJobs(validJobs, c.Jobs, &c.AnalyzeConfig, m.Window, keepDir)
		if err != nil {
			return err
		}
		// The per-trace outputs cover both phases.
		if err := WriteOutputs(filepath.Join(c.Out, "model"), append(append([]*Analysis{}, as...), vs...)); err != nil {
			return err
		}
	}
	total := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	took := map[string]time.Duration{"train": tTrain, "model": tModel - tTrain, "validate": total - tModel, "total": total}
	if err := writeReport(c, m, as, vs, took, ms.Sys); err != nil {
		return err
	}
	log.Info().Dur("took", total).Str("report", filepath.Join(c.Out, "REPORT.md")).Msg("reproduced")
	return nil
}

// specOr is spec, or the list xs when spec is empty.
func specOr(spec string, xs []int) string {
	if spec != "" {
		return spec
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
