package main

import (
	"fmt"
	"github.com/tracecast/tracecast/internal/paths"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/app/specs"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/models/modelio"
	"github.com/tracecast/tracecast/report"
)

// energyCommands are the energy and power-model commands.
func energyCommands() []*cobra.Command {
	pm := &cobra.Command{Use: "powermodel", Short: "A node's power from its CPU utilisation and frequency: fit the model, predict",
		Long: `powermodel fits and uses the power model P(cpu, f) = P0 − alpha·(fmax − f)/fmax +
(A·f/fmax + B)·cpu, cpu the utilisation in [0, 1], f the frequency, P0 the
idle power at fmax (docs/energy.md).`}
	pm.AddCommand(newPowermodelFitCmd(), newModelPredictCmd("powermodel", "power", "utilisation", true, modelio.ReadPowerModel))
	ct := &cobra.Command{Use: "ctmodel", Short: "A task's completion time from its CPU allocation and frequency: fit the model, predict",
		Long: `ctmodel fits and uses the completion-time model CT(cpu, f) = [θ_f/cpu +
(1 − θ_f)]·[U·fmax/f + (1 − U)]·CT(100%, fmax), U the frequency-sensitive
share of the work, θ_f the CPU-sensitive share at f (docs/energy.md).`}
	ct.AddCommand(newCTFitCmd(), newModelPredictCmd("ctmodel", "completion time", "allocation", false, modelio.ReadCTModel))
	return []*cobra.Command{pm, ct, newParetoCmd(), newEnergyCmd(), newEnergySpeedupCmd()}
}

func newPowermodelFitCmd() *cobra.Command {
	var p modelio.PowerFit
	cmd := &cobra.Command{
		Use:   "fit (--fmin F --fmax F --p-idle-fmin W --p-idle-fmax W --p-full-fmin W --p-full-fmax W | --samples FILE.csv)",
		Short: "Compute A, B and alpha from six measurements, or fit them to many",
		Long: `fit prints the power model as JSON (and writes it with -o), from six
measurements (idle and full-load power at the lowest and highest
frequency), or fitted to --samples, a CSV with columns cpu, f, watts and a
header row (then with the fit's RMSE and R²). Frequencies in any unit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return p.Run(cmd.OutOrStdout(), cmd.Flags()) },
	}
	cliflags.Bind(cmd.Flags(), &p)
	return cmd
}

func newCTFitCmd() *cobra.Command {
	var c modelio.CTFit
	cmd := &cobra.Command{
		Use:   "fit --fmin F --fmax F --x X --ct-full-fmin S --ct-full-fmax S --ct-x-fmin S --ct-x-fmax S [-o FILE]",
		Short: "Compute U, θ_fmin and θ_fmax from seven inputs",
		Long: `fit prints the completion-time model as JSON (and writes it with -o) from
a task's completion times at 100% and at --x of the CPU (0.2 or 20 for
20%), at the lowest and highest frequency (any time unit: predictions come
out in the same one).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.OutOrStdout(), cmd.Flags()) },
	}
	cliflags.Bind(cmd.Flags(), &c)
	return cmd
}

// newModelPredictCmd is the predict command of powermodel and ctmodel: the
// model file their fit -o wrote (read by read), evaluated at --cpu and
// --freq; what is the predicted quantity, share the CPU share's name.
func newModelPredictCmd[M modelio.Predictor](model, what, share string, zeroCPU bool, read func(string) (M, error)) *cobra.Command {
	var q modelio.ModelQuery
	cpuRange := modelio.CPURange(zeroCPU)
	cmd := &cobra.Command{
		Use:   "predict --model FILE --cpu U --freq F [--measured X]",
		Short: "Predict the " + what + " at a CPU " + share + " and frequency",
		Long: `predict evaluates the model written by "` + model + ` fit -o" at CPU ` + share + ` --cpu
(` + cpuRange + `, or a percentage) and frequency --freq (the model's unit). With
--measured, it also prints the error |measured − predicted|/measured·100.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return modelio.Predict(cmd.OutOrStdout(), cmd.Flags(), q, zeroCPU, read)
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.Path, "model", "", "model file written by "+model+" fit -o")
	f.Float64Var(&q.CPU, "cpu", 0, "CPU "+share+", 0 to 1 (values above 1 are read as percentages)")
	f.Float64Var(&q.Freq, "freq", 0, "operating frequency (the model's unit)")
	f.Float64Var(&q.Real, "measured", 0, "measured "+what+", to report the prediction's error")
	return cmd
}

func newParetoCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "pareto FILE.csv",
		Short: "Pareto frontier of (configuration, time, power) points",
		Long: `pareto reads a CSV with a header row and the columns config, time and power
(others ignored) and prints the configurations no other one beats in both
time and power, by increasing power: the fastest one for each power budget.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return modelio.ParetoFront(cmd.OutOrStdout(), args[0], format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "csv", "output: csv or json")
	return cmd
}

func newEnergySpeedupCmd() *cobra.Command {
	var in modelio.SpeedupInputs
	cmd := &cobra.Command{
		Use:   "energy-speedup --time-speedup S (--idle-fraction s | --idle-energy J --dynamic-energy J)",
		Short: "Energy speedup of a parallel run from its time speedup and the idle share of the energy",
		Long: `energy-speedup prints the energy speedup of a parallel run, S_e = 1 / ((1 − s)
+ s/S_t), from its time speedup S_t and the idle share s = E_i/(E_i + E_d)
of the sequential run's energy, given or computed from the idle and dynamic
energies (then with the parallel energy E_p = E_i/S_t + E_d).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return in.Run(cmd.OutOrStdout(), cmd.Flags()) },
	}
	cliflags.Bind(cmd.Flags(), &in)
	return cmd
}

func newEnergyCmd() *cobra.Command {
	o := specs.DefaultEnergy()
	var out, format string
	var plotPoints int
	cmd := &cobra.Command{
		Use:   "energy --trace TRACE --power POWER [--params FILE] [-o DIR [--format arrow|parquet]]",
		Short: "Energy per node and state class from a Paje trace and a power-meter stream",
		Long: `energy joins a trace's execution states with power samples, per node, and
reports the energy spent in each state class (idle, compute, comm, other),
per --window and in total, and the model E = P_idle·T + Σ (P_state −
P_idle)·T_state with per-state powers from --params (JSON or YAML: idle,
app, storage, net in watts, each the node's whole power with one worker in
that state, not the increment: a worker adding 15 W to an idle 100 W is app:
115; a state below idle is refused) or fitted (a fit giving a negative
power is no model, with the reason). When no power sample meets the run
(other node names, or no --offset) it fails and says why, not 0 J.
--power: csv (time,node,watts), jsonl, rapl (energy counters) or kwollect
(Grid'5000), plain or gzip; power time = trace time + --offset. Workers are
on --node unless --map or --node-type say otherwise. --io adds I/O calls
(storage activity). -o DIR writes the tables (Arrow, or Parquet with
--format parquet), model.json and plots. docs/energy.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "arrow" && format != "parquet" {
				return cliflags.Usage(fmt.Errorf("unknown --format %q (arrow or parquet)", format))
			}
			if err := cliflags.Require(cmd.Flags(), "trace", "power"); err != nil {
				return err
			}
			if err := checkOutputs(paths.Given(o.Trace, o.Power, o.Params, o.IO),
				paths.InDir(out, "energy.arrow", "totals.arrow", "model.json", "energy.png", "energy.svg", "power.png", "power.svg")...); err != nil {
				return err
			}
			o.Series = out != ""
			rep, c, err := runner().Energy(cmd.Context(), o)
			if err != nil {
				return err
			}
			if err := rep.WriteText(cmd.OutOrStdout()); err != nil || out == "" {
				return err
			}
			return rep.WriteFiles(report.EnergyFiles{Dir: out, Format: format, Series: c.Series, PlotPoints: plotPoints, Offset: o.Offset,
				Meta: map[string]string{"trace": o.Trace, "power": o.Power, "window_s": fmt.Sprint(o.Window)}})
		},
	}
	fl := cmd.Flags()
	cliflags.Bind(fl, &o)
	fl.StringVarP(&out, "output", "o", "", "directory for the tables (energy, totals), model.json and plots")
	fl.StringVar(&format, "format", "arrow", "format of -o's tables: arrow (energy.arrow, totals.arrow) or parquet (energy.parquet, totals.parquet)")
	fl.IntVar(&plotPoints, "plot-points", 20000, "most power samples kept per node for the plot")
	return cmd
}
