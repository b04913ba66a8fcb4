package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models"
	"github.com/tracecast/tracecast/parsers/iocall"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/parsers/power"
	"github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/iotime"
	"github.com/tracecast/tracecast/stages/signal"
	"gopkg.in/yaml.v3"
)

type energyFlags struct {
	ioFile, ioFormat                                                           string
	ioOffset                                                                   float64
	trace, power, format, params, out, rules, timeUnit, node, metric, nodeType string
	mapping                                                                    []string
	window, maxGap, lateness, offset                                           float64
	lenient                                                                    bool
	plotPoints                                                                 int
}

func newEnergyCmd() *cobra.Command {
	var f energyFlags
	cmd := &cobra.Command{
		Use:   "energy --trace TRACE --power POWER [--params FILE] [-o DIR]",
		Short: "Energy per node and state class from a Paje trace and a power-meter stream",
		Long: `energy joins a trace's execution states with power samples, per node, and
reports the energy spent in each state class (idle, compute, comm, other).

Storage: with --io, an I/O-call stream (strace -f -tt -T, or the CSV/JSON-
lines schema of docs/io.md); every I/O call is storage activity on its node
(--map "pid N"=NODE, else --node) beside the workers' classes, and the
node's energy at each instant is shared equally among its activities.

Power (--power, plain or gzip; --power-format auto guesses):
  csv       time,node,watts rows at any rate (header optional; "time,watts"
            rows are for --node)
  jsonl     {"time":…,"node":…,"watts":…} per line
  rapl      time,node,energy_uj,max_energy_range_uj counter readings; wraps
            are handled, a wrap with an unknown range is skipped and counted
  kwollect  Grid'5000 Kwollect JSON ({timestamp, device_id, metric_id, value})
Times are seconds (numbers) or RFC 3339. Power time = trace time in seconds
+ --offset (e.g. the run's start epoch for Kwollect).

Nodes: by default all the trace's workers are on one node, --node (node0);
--map CONTAINER=NODE (repeatable) places workers on nodes named as in the
power stream; --node-type TYPE places each other worker on its nearest
ancestor container of that type in the trace's container tree.

Energy between two samples is integrated by the trapezoid rule
(counter-derived mean power: exactly), over the node's run only, and split
between the classes in proportion to the node's workers in each class.
Intervals longer than --max-gap are not integrated and are reported as
gaps. Windows of --window seconds are reported; samples up to --lateness s
out of order are reordered.

Seed 000's model E = P_idle·T + Σ (P_state − P_idle)·T_state: with --params
(JSON or YAML: idle, app, storage, net in watts; app = per computing worker
increment above idle, and likewise) the run's energy is predicted and the
inaccuracy |1 − E_pred/E| printed; without, the per-state powers are fitted
by least squares over the windows. compute → app, comm → net, other →
storage.

-o DIR writes energy.arrow (node × class × window rows), totals.arrow,
model.json, energy.png/.svg (stacked energy per node by class) and
power.png/.svg (power over time with the workers' states underneath).`,
		Args: energyArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := energyRequire(cmd, "trace", "power"); err != nil {
				return err
			}
			return runEnergy(cmd.OutOrStdout(), &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.trace, "trace", "", "Paje trace (plain or gzip)")
	fl.StringVar(&f.power, "power", "", "power stream (plain or gzip)")
	fl.StringVar(&f.format, "power-format", "auto", "power format: auto, csv, jsonl, rapl, kwollect")
	fl.StringVar(&f.metric, "metric", "", "with Kwollect input: keep only this metric_id (e.g. wattmetre_power_watt)")
	fl.StringVar(&f.params, "params", "", "per-state powers file (JSON or YAML: idle, app, storage, net)")
	fl.StringVarP(&f.out, "output", "o", "", "directory for Arrow files, model.json and plots")
	fl.StringVar(&f.rules, "rules", "starpu", "state classes: starpu, smpi")
	fl.StringVar(&f.timeUnit, "time-unit", "auto", "unit of the trace's times: auto, s, ms, us, ns")
	fl.StringVar(&f.node, "node", energy.DefaultNode, "node of unmapped workers and of power rows without a node")
	fl.StringArrayVar(&f.mapping, "map", nil, "CONTAINER=NODE: put a worker on a node (repeatable)")
	fl.StringVar(&f.nodeType, "node-type", "", "put each unmapped worker on its nearest ancestor container of this type (e.g. \"Memory Node\"), named as that container")
	fl.Float64Var(&f.window, "window", 1, "window length in seconds (0: the whole run)")
	fl.Float64Var(&f.maxGap, "max-gap", 5, "longest interval between samples that is integrated, seconds")
	fl.Float64Var(&f.lateness, "lateness", 0, "how late (s) a sample may arrive and still be used")
	fl.Float64Var(&f.offset, "offset", 0, "power time minus trace time, seconds")
	fl.StringVar(&f.ioFile, "io", "", "an I/O-call stream (strace -f -tt -T, or the CSV/JSON-lines schema): time in I/O calls is the storage class")
	fl.StringVar(&f.ioFormat, "io-format", "", "format of --io: strace, csv, jsonl (default: guessed)")
	fl.Float64Var(&f.ioOffset, "io-offset", 0, "I/O-stream time minus trace time, seconds (strace -tt times are seconds since midnight)")
	fl.BoolVar(&f.lenient, "lenient", false, "skip bad trace and power lines instead of failing")
	fl.IntVar(&f.plotPoints, "plot-points", 20000, "most power samples kept per node for the plot")
	return cmd
}

func energyUnitsPerSecond(u string) float64 {
	switch u {
	case "ms":
		return 1e3
	case "us":
		return 1e6
	case "ns":
		return 1e9
	}
	return 1
}

func energyOpen(path string) (*os.File, error) {
	if path == "-" {
		return os.Stdin, nil
	}
	return os.Open(path)
}

func runEnergy(w io.Writer, f *energyFlags) error {
	pf, err := power.ParseFormat(f.format)
	if err != nil {
		return usageErr(err)
	}
	mk, ok := signal.Presets[f.rules]
	if !ok {
		return usageErr(fmt.Errorf("unknown --rules %q (starpu, smpi)", f.rules))
	}
	switch f.timeUnit {
	case "auto", "s", "ms", "us", "ns":
	default:
		return usageErr(fmt.Errorf("unknown --time-unit %q", f.timeUnit))
	}
	if f.window < 0 || f.maxGap < 0 || f.lateness < 0 {
		return usageErr(fmt.Errorf("--window, --max-gap and --lateness must not be negative"))
	}
	mapping := map[string]string{}
	for _, m := range f.mapping {
		c, n, ok := strings.Cut(m, "=")
		if !ok || c == "" || n == "" {
			return usageErr(fmt.Errorf("--map %q: want CONTAINER=NODE", m))
		}
		mapping[c] = n
	}
	var params *models.StatePowers
	if f.params != "" {
		b, err := os.ReadFile(f.params)
		if err != nil {
			return err
		}
		var p models.StatePowers
		if err := yaml.Unmarshal(b, &p); err != nil { // YAML is a superset of JSON
			return fmt.Errorf("%s: %w", f.params, err)
		}
		params = &p
	}
	rules := mk()
	if err := rules.Compile(); err != nil {
		return err
	}
	// States.
	tf, err := energyOpen(f.trace)
	if err != nil {
		return err
	}
	defer tf.Close()
	popts := paje.DefaultOptions()
	popts.Name, popts.Lenient, popts.TimeUnit = f.trace, f.lenient, f.timeUnit
	unit := "s"
	popts.OnTimeUnit = func(u string) { unit = u }
	col := energy.NewCollector(rules, mapping, f.node)
	col.SetNodeType(f.nodeType)
	pst, err := paje.Read(tf, popts, func(es []tracecast.Entity) error { col.Add(es); return nil })
	if err != nil {
		return err
	}
	if n := pst.Skipped.Total(); n > 0 {
		log.Warn().Int64("lines", n).Str("trace", f.trace).Msg("skipped bad trace lines")
	}
	if f.ioFile != "" {
		// Storage: the time processes spend in I/O calls.
		var ios []tracecast.Entity
		calls, ist, err := iocall.ReadFile(f.ioFile, iocall.Format(f.ioFormat), iocall.Options{Lenient: f.lenient})
		if err != nil {
			return err
		}
		for i := range calls {
			ios = append(ios, iotime.State(&calls[i]))
		}
		col.AddIO(ios, f.ioOffset)
		log.Info().Str("io", f.ioFile).Int64("calls", ist.Calls).Int("states", len(ios)).Msg("storage activity")
	}
	tls, err := col.Build(energyUnitsPerSecond(unit))
	if err != nil {
		return err
	}
	// Power.
	pfile, err := energyOpen(f.power)
	if err != nil {
		return err
	}
	defer pfile.Close()
	j := energy.NewJoiner(tls, energy.Options{Window: f.window, MaxGap: f.maxGap, Lateness: f.lateness, Offset: f.offset})
	keep := f.out != ""
	series := map[string][]tracecast.PowerSample{}
	pst2, err := power.Read(pfile, power.Options{Name: f.power, Format: pf, Lenient: f.lenient, Node: f.node, Metric: f.metric}, func(ss []tracecast.PowerSample) error {
		j.Add(ss)
		if keep {
			for _, s := range ss {
				series[s.Node] = append(series[s.Node], s)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range pst2.Skipped.Reasons() {
		log.Warn().Int64("lines", pst2.Skipped[r]).Str("reason", r).Str("power", f.power).Msg("skipped power lines")
	}
	res := j.Finish()
	if len(res.UnknownNodes) > 0 {
		var names []string
		for n := range res.UnknownNodes {
			names = append(names, n)
		}
		sort.Strings(names)
		log.Warn().Strs("nodes", names).Msg("power samples of nodes with no states (use --map or --node)")
	}
	rep := buildReport(res, params)
	printReport(w, res, rep)
	if f.out == "" {
		return nil
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	meta := map[string]string{"trace": f.trace, "power": f.power, "window_s": fmt.Sprint(f.window)}
	if err := energyWriteArrow(filepath.Join(f.out, "energy.arrow"), arrow.StructTable[tracecast.EnergyRow]("tracecast.energy/1", meta), energy.Rows(res.Windows)); err != nil {
		return err
	}
	if err := energyWriteArrow(filepath.Join(f.out, "totals.arrow"), arrow.StructTable[tracecast.EnergyRow]("tracecast.energy/1", meta), energy.Rows(res.Totals)); err != nil {
		return err
	}
	if err := energyWriteJSON(io.Discard, filepath.Join(f.out, "model.json"), rep); err != nil {
		return err
	}
	for n, s := range series {
		series[n] = energyDecimate(s, f.plotPoints)
	}
	return writeEnergyPlots(f.out, res, series, f.offset)
}

func energyWriteArrow(path string, t arrow.Table, items any) error {
	sink, err := arrow.New(arrow.Options{Path: path, Tables: []arrow.Table{t}})
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := sink.Write(ctx, tracecast.Batch{Items: items}); err != nil {
		sink.Close(ctx)
		return err
	}
	return sink.Close(ctx)
}

func energyDecimate(s []tracecast.PowerSample, n int) []tracecast.PowerSample {
	if n <= 0 || len(s) <= n {
		return s
	}
	stride := (len(s) + n - 1) / n
	out := s[:0]
	for i := 0; i < len(s); i += stride {
		out = append(out, s[i])
	}
	return out
}

// energyReport is the model part of the output (model.json).
type energyReport struct {
	Nodes []nodeReport `json:"nodes"`
	// Powers are the given (--params) or fitted per-state powers.
	Powers models.StatePowers `json:"powers"`
	Source string             `json:"source"` // "params" or "fit"
	Fit    *models.StateFit   `json:"fit,omitempty"`
	FitErr string             `json:"fit_error,omitempty"`
	// Measured and Predicted are over all nodes, in joules.
	Measured   float64 `json:"measured_j"`
	Predicted  float64 `json:"predicted_j"`
	Inaccuracy float64 `json:"inaccuracy"`
	// RunS is the longest node run; EDP = Measured·RunS.
	RunS float64 `json:"run_s"`
	EDP  float64 `json:"edp_js"`
	// IdleFraction is seed 003's s: idle-power energy over total energy.
	IdleFraction float64 `json:"idle_fraction"`
}

type nodeReport struct {
	Node       string           `json:"node"`
	Workers    int              `json:"workers"`
	RunS       float64          `json:"run_s"`
	CoveredS   float64          `json:"covered_s"`
	Measured   float64          `json:"measured_j"`
	Predicted  float64          `json:"predicted_j"`
	Inaccuracy float64          `json:"inaccuracy"`
	Occupancy  models.Occupancy `json:"occupancy"`
}

func buildReport(res *energy.Result, params *models.StatePowers) *energyReport {
	rep := &energyReport{}
	if params != nil {
		rep.Powers, rep.Source = *params, "params"
	} else {
		fit, err := energy.FitStatePowers(res.Windows, 0.99)
		if err != nil {
			rep.FitErr = err.Error()
		} else {
			rep.Powers, rep.Source, rep.Fit = fit.Powers, "fit", &fit
		}
	}
	var idleE float64
	for _, t := range res.Totals {
		o := t.ModelOccupancy()
		nr := nodeReport{Node: t.Node, Workers: res.Timelines[t.Node].R, RunS: t.End - t.Start, CoveredS: t.Covered,
			Measured: t.EnergyJ, Occupancy: o}
		if rep.Source != "" {
			nr.Predicted = models.NodeEnergy(rep.Powers, o)
			nr.Inaccuracy = models.Inaccuracy(nr.Predicted, nr.Measured)
		}
		rep.Nodes = append(rep.Nodes, nr)
		rep.Measured += nr.Measured
		rep.Predicted += nr.Predicted
		rep.RunS = math.Max(rep.RunS, nr.RunS)
		idleE += rep.Powers.Idle * t.Covered
	}
	if rep.Source != "" && rep.Measured > 0 {
		rep.Inaccuracy = models.Inaccuracy(rep.Predicted, rep.Measured)
		rep.IdleFraction = idleE / rep.Measured
	}
	rep.EDP = models.EDP(rep.Measured, rep.RunS)
	return rep
}

func printReport(w io.Writer, res *energy.Result, rep *energyReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "node\tclass\tenergy J\tshare\toccupancy s\t")
	for _, t := range res.Totals {
		for c := range energy.NumClasses {
			share := 0.0
			if t.EnergyJ > 0 {
				share = t.ClassEnergy[c] / t.EnergyJ * 100
			}
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.1f%%\t%.4f\t\n", t.Node, energy.ClassName(signal.Class(c)), t.ClassEnergy[c], share, t.Occupancy[c])
		}
		fmt.Fprintf(tw, "%s\ttotal\t%.3f\t100.0%%\t%.4f\t\n", t.Node, t.EnergyJ, t.Covered)
	}
	tw.Flush()
	for _, nr := range rep.Nodes {
		fmt.Fprintf(w, "%s: %d workers, run %.4f s, covered %.4f s, mean power %.2f W\n", nr.Node, nr.Workers, nr.RunS, nr.CoveredS, nr.Measured/math.Max(nr.CoveredS, 1e-300))
	}
	if len(res.Gaps) > 0 {
		fmt.Fprintf(w, "gaps: %d, %.4f s not integrated (first: %s %.4f–%.4f s)\n", len(res.Gaps), res.Stats.GapS, res.Gaps[0].Node, res.Gaps[0].Start, res.Gaps[0].End)
	}
	if res.Stats.Late > 0 {
		fmt.Fprintf(w, "late samples dropped: %d\n", res.Stats.Late)
	}
	switch rep.Source {
	case "":
		fmt.Fprintf(w, "per-state powers: not fitted (%s); give --params\n", rep.FitErr)
	default:
		p := rep.Powers
		fmt.Fprintf(w, "per-state powers (%s): idle %.3f W, app %.3f W, storage %.3f W, net %.3f W", rep.Source, p.Idle, p.App, p.Storage, p.Net)
		if rep.Fit != nil {
			fmt.Fprintf(w, " (R² %.6f over %d windows", rep.Fit.Stats.R2, rep.Fit.Stats.N)
			if rep.Fit.Stats.R2 < 0.9 {
				fmt.Fprint(w, "; POOR FIT: power does not follow the states, or windows are too few")
			}
			if !rep.Fit.Fitted.Storage || !rep.Fit.Fitted.Net {
				fmt.Fprint(w, "; states never occupied are reported at idle power")
			}
			fmt.Fprint(w, ")")
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "seed 000 model: predicted %.3f J, measured %.3f J, inaccuracy %.4f%%; EDP %.4g J·s; idle fraction %.3f\n",
			rep.Predicted, rep.Measured, rep.Inaccuracy*100, rep.EDP, rep.IdleFraction)
	}
}
