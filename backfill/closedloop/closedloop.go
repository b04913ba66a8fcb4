// Package closedloop runs a synthetic DAG (study/synth) on R workers with a
// second queue of back-end tasks placed live by a backfill policy
// (backfill.Engine, fed as the run goes, seeing nothing of its future), in
// wait mode: the primary's tasks really wait for the back-end tasks, and
// the delay propagates through the DAG. Per policy it measures the
// back-end throughput, the primary's makespan slowdown and the p99 of its
// task start delays against the same DAG and draws without back-end
// tasks: the frontier of (throughput, slowdown) points
// (docs/backfill.md, "Closed loop"; tracecast closed-loop).
package closedloop

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	bf "github.com/tracecast/tracecast/backfill"
	"github.com/tracecast/tracecast/study"
	"github.com/tracecast/tracecast/study/synth"
)

// Config is a closed-loop study of one workload: the synthetic DAG of
// Synth (as tracecast synth draws it), run once without back-end tasks and
// once per policy, task length and timeout.
type Config struct {
	study.SynthConfig
	// Tasks are the back-end task lengths d, durations (1ms).
	Tasks []string `flag:"task" list:"comma" help:"back-end task lengths d, durations with a unit (repeatable, or a comma-separated list)"`
	// Alpha is the cost of a second of primary delay in seconds of
	// back-end work: the α-dependent policies (online-timeout, residual,
	// forecast) decide by it.
	Alpha float64 `flag:"alpha" help:"what one second of the primary's delay costs, in seconds of back-end work (online-timeout, residual and forecast decide by it)"`
	// Timeouts are the timeout policy's τ grid, durations ("0" allowed).
	Timeouts []string `flag:"timeout" list:"comma" help:"the timeout policy's τ, durations (repeatable, or a list; default: 0 and 4 per decade from 100us to 1s)"`
	// Policies to run (default: every causal one).
	Policies []string `flag:"policy" list:"comma" help:"never, greedy, timeout, online-timeout, residual, forecast (repeatable, or a list; default: all)"`
	// Seeds is how many workloads to run, from Synth.Seed on (one DAG
	// each): one DAG's makespan moves by tenths of a percent when any task
	// moves (list scheduling's anomalies), so the frontier is drawn from
	// the means.
	Seeds int `flag:"seeds" help:"run this many DAGs (seeds SEED, SEED+1, ...) and compare the policies on their means"`
	// MaxLaunches bounds the back-end tasks of one run (the lines they add
	// are held until written, and a tiny d on a long run makes millions).
	MaxLaunches int `flag:"max-launches" help:"refuse a run that launches more back-end tasks than this (memory bound)"`
}

// Causal are the policies the closed loop runs: the backfill engine's
// causal ones (the references that see the outcome cannot act live).
var Causal = []string{bf.Never, bf.Greedy, bf.Timeout, bf.OnlineTimeout, bf.Residual, bf.Forecast}

// DefaultTimeouts is the timeout grid: 0 and 10^(k/4) s from 100 µs to 1 s.
func DefaultTimeouts() []float64 {
	g := []float64{0}
	for k := -16; k <= 0; k++ {
		g = append(g, math.Pow(10, float64(k)/4))
	}
	return g
}

// DefaultConfig is tracecast closed-loop's defaults: synth's workload,
// tasks of 1 and 10 ms, α = 10, every causal policy.
func DefaultConfig() Config {
	return Config{SynthConfig: study.DefaultSynthConfig(), Tasks: []string{"1ms", "10ms"}, Alpha: 10, Seeds: 1, MaxLaunches: 10_000_000}
}

// plan is a checked Config.
type plan struct {
	dag      *synth.DAG
	trace    synth.TraceParams
	tasks    []float64 // seconds
	timeouts []float64 // seconds
	policies []string
}

func usage(format string, args ...any) error {
	return &study.UsageError{Err: fmt.Errorf(format, args...)}
}

// check refuses bad options (a *study.UsageError naming the flag) before
// anything runs, and draws the workload.
func (c *Config) check() (*plan, error) {
	dag, tp, err := c.SynthConfig.Workload()
	if err != nil {
		return nil, err
	}
	p := &plan{dag: dag, trace: tp}
	var errs []error
	dur := func(flag, s string, zero bool) float64 {
		s = strings.TrimSpace(s)
		if zero && s == "0" {
			return 0
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 || d == 0 && !zero {
			errs = append(errs, usage("--%s %q: want a positive duration with a unit (500us, 10ms)", flag, s))
			return 0
		}
		return d.Seconds()
	}
	for _, s := range c.Tasks {
		p.tasks = append(p.tasks, dur("task", s, false))
	}
	if len(c.Tasks) == 0 {
		errs = append(errs, usage("--task: no back-end task length"))
	}
	for _, s := range c.Timeouts {
		p.timeouts = append(p.timeouts, dur("timeout", s, true))
	}
	if len(c.Timeouts) == 0 {
		p.timeouts = DefaultTimeouts()
	}
	if !(c.Alpha > 0) || math.IsInf(c.Alpha, 0) {
		errs = append(errs, usage("--alpha %g: must be positive", c.Alpha))
	}
	if c.Seeds < 1 || c.Seeds > 1000 {
		errs = append(errs, usage("--seeds %d: must be in [1, 1000]", c.Seeds))
	}
	if c.MaxLaunches < 1 {
		errs = append(errs, usage("--max-launches %d: must be positive", c.MaxLaunches))
	}
	p.policies = c.Policies
	if len(p.policies) == 0 {
		p.policies = Causal
	}
	for _, pol := range p.policies {
		if !slices.Contains(Causal, pol) {
			errs = append(errs, usage("--policy %q: one of %s (the references that see the outcome cannot act live)", pol, strings.Join(Causal, ", ")))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// Row is one policy's closed-loop run (times in seconds).
type Row struct {
	Policy string  `json:"policy"`
	D      float64 `json:"d"`
	// Alpha for the α-dependent policies, Timeout for timeout (else
	// absent).
	Alpha   *float64 `json:"alpha,omitempty"`
	Timeout *float64 `json:"timeout,omitempty"`
	Tasks   int      `json:"tasks"`
	Workers int      `json:"workers"`
	Seed    uint64   `json:"seed"`
	// Seeds is 1 for a run, the number of runs for a mean.
	Seeds int `json:"seeds"`
	// Launches back-end tasks, all completed (wait mode): Harvest U =
	// Launches·d of back-end work.
	Launches int     `json:"launches"`
	Harvest  float64 `json:"harvest"`
	// Makespan T is the primary's, first task start to last task end;
	// BaseMakespan T₀ the run's without back-end tasks; Slowdown ΔT/T₀.
	Makespan     float64 `json:"makespan"`
	BaseMakespan float64 `json:"base_makespan"`
	Slowdown     float64 `json:"slowdown"`
	// Throughput is U/T: back-end work per second, in workers' worth.
	Throughput float64 `json:"throughput"`
	// DelayP99 and DelayMean are the p99 and mean of the primary tasks'
	// start delays (start with back-end tasks − start without).
	DelayP99  float64 `json:"delay_p99"`
	DelayMean float64 `json:"delay_mean"`
	// Waited counts the primary tasks given a worker still running a
	// back-end task (they started when it ended).
	Waited int `json:"waited"`
	// FirstOrderDelay is the engine's D: the back-end tasks' overruns
	// past the end of their spells, without propagation (what tracecast
	// backfill would count on this run's trace).
	FirstOrderDelay float64 `json:"first_order_delay"`
	// BaseIdle is the idle worker-seconds of the run without back-end
	// tasks (from its start to its last task's end).
	BaseIdle float64 `json:"base_idle_worker_seconds"`
}

// Result is a closed-loop study.
type Result struct {
	// Rows are every run's, in the order run (seed by seed); Means their
	// means per policy, τ and d over the seeds (Seed is the first one,
	// Seeds how many; DelayP99 the mean of the p99s).
	Rows, Means []Row
	Seeds       int
}

// Traces opens where a run's trace goes (name: sSEED-POLICY[-tTAU]-D, or
// sSEED-base for the run without back-end tasks, without extension); nil:
// traces are not kept.
type Traces func(name string) (io.WriteCloser, error)

// Run runs the study: for each seed, the workload without back-end tasks,
// then each policy for each task length (timeout once per τ). Every
// option is checked, and every DAG drawn, before the first run.
func Run(c Config, traces Traces) (*Result, error) {
	var plans []*plan
	for i := range max(c.Seeds, 1) {
		cs := c
		cs.SynthConfig.Seed += uint64(i)
		p, err := cs.check()
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	res := &Result{Seeds: len(plans)}
	for i, p := range plans {
		cs := c
		cs.SynthConfig.Seed += uint64(i)
		rows, err := runSeed(cs, p, traces)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, rows...)
	}
	res.Means = means(res.Rows, len(plans))
	return res, nil
}

// means averages the rows of the same policy, τ and d over the seeds.
func means(rows []Row, seeds int) []Row {
	n := len(rows) / seeds
	out := make([]Row, n)
	for i := range n {
		m := rows[i]
		m.Seeds = seeds
		for s := 1; s < seeds; s++ {
			r := rows[s*n+i]
			m.Launches += r.Launches
			m.Harvest += r.Harvest
			m.Makespan += r.Makespan
			m.BaseMakespan += r.BaseMakespan
			m.Slowdown += r.Slowdown
			m.Throughput += r.Throughput
			m.DelayP99 += r.DelayP99
			m.DelayMean += r.DelayMean
			m.Waited += r.Waited
			m.FirstOrderDelay += r.FirstOrderDelay
			m.BaseIdle += r.BaseIdle
		}
		k := float64(seeds)
		m.Launches = int(math.Round(float64(m.Launches) / k))
		m.Waited = int(math.Round(float64(m.Waited) / k))
		m.Harvest /= k
		m.Makespan /= k
		m.BaseMakespan /= k
		m.Slowdown /= k
		m.Throughput /= k
		m.DelayP99 /= k
		m.DelayMean /= k
		m.FirstOrderDelay /= k
		m.BaseIdle /= k
		out[i] = m
	}
	return out
}

// runSeed runs one workload's every policy.
func runSeed(c Config, p *plan, traces Traces) ([]Row, error) {
	var rows []Row
	runName := fmt.Sprintf("T%d_R%d_s%d", c.SynthConfig.Tasks, c.SynthConfig.Workers, c.SynthConfig.Seed)
	prefix := fmt.Sprintf("s%d-", c.SynthConfig.Seed)
	base := &idleMeter{}
	b, err := run(p, base, traces, prefix+"base")
	if err != nil {
		return nil, err
	}
	row := func(pol string, d float64, s synth.LoopSummary, fo float64) Row {
		r := Row{Policy: pol, D: d, Tasks: c.SynthConfig.Tasks, Workers: c.SynthConfig.Workers, Seed: c.SynthConfig.Seed, Seeds: 1,
			Launches: s.Launches, Harvest: float64(s.Launches) * d, Makespan: s.MakespanMS / 1e3, BaseMakespan: b.MakespanMS / 1e3,
			Waited: s.Held, FirstOrderDelay: fo, BaseIdle: base.total / 1e3}
		r.Slowdown = (r.Makespan - r.BaseMakespan) / r.BaseMakespan
		r.Throughput = r.Harvest / r.Makespan
		r.DelayP99, r.DelayMean = delays(s.TaskStarts, b.TaskStarts)
		return r
	}
	for _, d := range p.tasks {
		for _, pol := range p.policies {
			if pol == bf.Never {
				rows = append(rows, row(pol, d, b, 0))
				continue
			}
			taus := []float64{math.NaN()}
			if pol == bf.Timeout {
				taus = p.timeouts
			}
			for _, tau := range taus {
				cfg := bf.Config{Run: runName, Tasks: []float64{d}, Mode: bf.Wait, Alphas: []float64{c.Alpha}, Policies: []string{pol}, KeepSpells: true}
				name := fmt.Sprintf("%s%s-%s", prefix, pol, label(d))
				if pol == bf.Timeout {
					cfg.Timeouts = []float64{tau}
					name = fmt.Sprintf("%s%s-t%s-%s", prefix, pol, label(tau), label(d))
				}
				eb, err := newEngineBackEnd(cfg, c.MaxLaunches)
				if err != nil {
					return nil, err
				}
				s, err := run(p, eb, traces, name)
				if err != nil {
					return nil, err
				}
				fr, err := eb.row(pol)
				if err != nil {
					return nil, err
				}
				if fr.Launches != s.Launches {
					return nil, fmt.Errorf("closed loop %s: the engine launched %d back-end tasks, the run ran %d", name, fr.Launches, s.Launches)
				}
				r := row(pol, d, s, fr.Delay)
				if pol == bf.Timeout {
					r.Timeout = &tau
				}
				if !math.IsNaN(fr.Alpha) && pol != bf.Greedy && pol != bf.Timeout {
					a := c.Alpha
					r.Alpha = &a
				}
				rows = append(rows, r)
			}
		}
	}
	return rows, nil
}

// run is one simulation, its trace written when traces is set.
func run(p *plan, be synth.BackEnd, traces Traces, name string) (synth.LoopSummary, error) {
	out := io.Discard
	var wc io.WriteCloser
	if traces != nil {
		var err error
		if wc, err = traces(name); err != nil {
			return synth.LoopSummary{}, err
		}
		out = wc
	}
	s, err := synth.RunClosedLoop(out, p.dag, p.trace, be)
	if eb, ok := be.(*engineBackEnd); ok && eb.err != nil {
		err = eb.err
	}
	if wc != nil {
		if cerr := wc.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return s, fmt.Errorf("closed loop %s: %w", name, err)
	}
	return s, nil
}

// delays are the p99 (nearest rank) and mean of the start delays, seconds.
func delays(with, without []float64) (p99, mean float64) {
	d := make([]float64, len(with))
	for i := range with {
		d[i] = (with[i] - without[i]) / 1e3
		mean += d[i]
	}
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	k := int(math.Ceil(0.99*float64(len(d)))) - 1
	return d[max(k, 0)], mean / float64(len(d))
}

// label formats a length for file names and tables: 10ms, 500us, 0.
func label(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s >= 1:
		return fmt.Sprintf("%gs", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.4gms", s*1e3)
	default:
		return fmt.Sprintf("%.4gus", s*1e6)
	}
}

// Frontier checks the closed loop's acceptance for task length d: the
// forecast policy harvests more than every timeout policy whose slowdown
// is equal or lower. It returns whether it holds and the timeouts that
// break it (slowdown ≤ forecast's, harvest ≥ forecast's); ok is false
// with no breaker when a row is missing.
func Frontier(rows []Row, d float64) (ok bool, breakers []Row) {
	var f *Row
	for i := range rows {
		if rows[i].D == d && rows[i].Policy == bf.Forecast {
			f = &rows[i]
		}
	}
	n := 0
	for _, r := range rows {
		if r.D != d || r.Policy != bf.Timeout {
			continue
		}
		n++
		if f != nil && r.Slowdown <= f.Slowdown+1e-12 && r.Harvest >= f.Harvest {
			breakers = append(breakers, r)
		}
	}
	return f != nil && n > 0 && len(breakers) == 0, breakers
}

// idleMeter is the back-end of the run without back-end tasks: it
// launches nothing and sums the idle worker-time (ms).
type idleMeter struct {
	since []float64
	total float64
}

func (m *idleMeter) Begin(t float64, workers int) {
	m.since = make([]float64, workers)
	for w := range m.since {
		m.since[w] = t
	}
}

func (m *idleMeter) Idle(t float64, w int, idle bool) {
	if idle {
		m.since[w] = t
	} else if !math.IsNaN(m.since[w]) {
		m.total += t - m.since[w]
		m.since[w] = math.NaN()
	}
}

func (m *idleMeter) Counts(float64, int, int)       {}
func (m *idleMeter) Advance(float64) []synth.Launch { return nil }

func (m *idleMeter) Finish(t float64) []synth.Launch {
	for w := range m.since {
		m.Idle(t, w, false)
	}
	return nil
}
