package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/app/specs"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/models"
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

// energyRequire fails with a usage error when one of names was not given.
func energyRequire(cmd *cobra.Command, names ...string) error {
	var missing []string
	for _, n := range names {
		if !cmd.Flags().Changed(n) {
			missing = append(missing, "--"+n)
		}
	}
	if len(missing) > 0 {
		return usageErr(fmt.Errorf("missing %s", strings.Join(missing, ", ")))
	}
	return nil
}

func newPowermodelFitCmd() *cobra.Command {
	var in models.PowerInputs
	var out, samples string
	var fmax float64
	cmd := &cobra.Command{
		Use:   "fit (--fmin F --fmax F --p-idle-fmin W --p-idle-fmax W --p-full-fmin W --p-full-fmax W | --samples FILE.csv)",
		Short: "Compute A, B and alpha from six measurements, or fit them to many",
		Long: `fit prints the power model as JSON (and writes it with -o), from six
measurements (idle and full-load power at the lowest and highest
frequency), or fitted to --samples, a CSV with columns cpu, f, watts and a
header row (then with the fit's RMSE and R²). Frequencies in any unit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputs(nonEmpty(samples), out); err != nil {
				return err
			}
			if samples != "" {
				mf, err := modelio.FitPowerModel(samples, fmax)
				if err != nil {
					return err
				}
				return modelio.WriteJSON(cmd.OutOrStdout(), out, mf)
			}
			if err := energyRequire(cmd, "fmin", "fmax", "p-idle-fmin", "p-idle-fmax", "p-full-fmin", "p-full-fmax"); err != nil {
				return err
			}
			in.FMax = fmax
			mf, err := modelio.PowerModelFromInputs(in)
			if err != nil {
				return usageErr(err)
			}
			return modelio.WriteJSON(cmd.OutOrStdout(), out, mf)
		},
	}
	f := cmd.Flags()
	cliflags.Bind(f, &in)
	f.Float64Var(&fmax, "fmax", 0, "highest frequency")
	f.StringVar(&samples, "samples", "", "CSV of measurements (cpu, f, watts) to fit by least squares")
	f.StringVarP(&out, "output", "o", "", "also write the model to this JSON file")
	return cmd
}

func newCTFitCmd() *cobra.Command {
	var in models.CTInputs
	var out string
	cmd := &cobra.Command{
		Use:   "fit --fmin F --fmax F --x X --ct-full-fmin S --ct-full-fmax S --ct-x-fmin S --ct-x-fmax S [-o FILE]",
		Short: "Compute U, θ_fmin and θ_fmax from seven inputs",
		Long: `fit prints the completion-time model as JSON (and writes it with -o) from
a task's completion times at 100% and at --x of the CPU (0.2 or 20 for
20%), at the lowest and highest frequency (any time unit: predictions come
out in the same one).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := energyRequire(cmd, "fmin", "fmax", "x", "ct-full-fmin", "ct-full-fmax", "ct-x-fmin", "ct-x-fmax"); err != nil {
				return err
			}
			if in.X >= 1 {
				in.X /= 100
			}
			mf, err := modelio.CTModelFromInputs(in)
			if err != nil {
				return usageErr(err)
			}
			return modelio.WriteJSON(cmd.OutOrStdout(), out, mf)
		},
	}
	f := cmd.Flags()
	cliflags.Bind(f, &in)
	f.StringVarP(&out, "output", "o", "", "also write the model to this JSON file")
	return cmd
}

// predictor is a model file that predicts at a CPU share and a frequency.
type predictor interface {
	Prediction(cpu, freq float64, measured *float64) (map[string]float64, error)
}

// newModelPredictCmd is the predict command of powermodel and ctmodel: the
// model file their fit -o wrote (read by read), evaluated at --cpu and
// --freq; what is the predicted quantity, share the CPU share's name.
func newModelPredictCmd[M predictor](model, what, share string, zeroCPU bool, read func(string) (M, error)) *cobra.Command {
	var path string
	var cpu, freq, measured float64
	cpuRange := modelio.CPURange(zeroCPU)
	cmd := &cobra.Command{
		Use:   "predict --model FILE --cpu U --freq F [--measured X]",
		Short: "Predict the " + what + " at a CPU " + share + " and frequency",
		Long: `predict evaluates the model written by "` + model + ` fit -o" at CPU ` + share + ` --cpu
(` + cpuRange + `, or a percentage) and frequency --freq (the model's unit). With
--measured, it also prints the error |measured − predicted|/measured·100.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := energyRequire(cmd, "model", "cpu", "freq"); err != nil {
				return err
			}
			mf, err := read(path)
			if err != nil {
				return err
			}
			if cpu, err = modelio.OperatingPoint(cpu, freq, zeroCPU); err != nil {
				return usageErr(err)
			}
			var m *float64 // --measured, when given (0 is a measurement too)
			if cmd.Flags().Changed("measured") {
				m = &measured
			}
			p, err := mf.Prediction(cpu, freq, m)
			if err != nil {
				return err
			}
			return modelio.WriteJSON(cmd.OutOrStdout(), "", p)
		},
	}
	f := cmd.Flags()
	f.StringVar(&path, "model", "", "model file written by "+model+" fit -o")
	f.Float64Var(&cpu, "cpu", 0, "CPU "+share+", 0 to 1 (values above 1 are read as percentages)")
	f.Float64Var(&freq, "freq", 0, "operating frequency (the model's unit)")
	f.Float64Var(&measured, "measured", 0, "measured "+what+", to report the prediction's error")
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
			if format != "csv" && format != "json" {
				return usageErr(fmt.Errorf("unknown --format %q (csv, json)", format))
			}
			pts, err := modelio.ReadPoints(args[0])
			if err != nil {
				return err
			}
			front := models.Pareto(pts)
			if format == "json" {
				return modelio.WriteJSON(cmd.OutOrStdout(), "", front)
			}
			return modelio.WritePoints(cmd.OutOrStdout(), front)
		},
	}
	cmd.Flags().StringVar(&format, "format", "csv", "output: csv or json")
	return cmd
}

func newEnergySpeedupCmd() *cobra.Command {
	var st, s, ei, ed float64
	cmd := &cobra.Command{
		Use:   "energy-speedup --time-speedup S (--idle-fraction s | --idle-energy J --dynamic-energy J)",
		Short: "Energy speedup of a parallel run from its time speedup and the idle share of the energy",
		Long: `energy-speedup prints the energy speedup of a parallel run, S_e = 1 / ((1 − s)
+ s/S_t), from its time speedup S_t and the idle share s = E_i/(E_i + E_d)
of the sequential run's energy, given or computed from the idle and dynamic
energies (then with the parallel energy E_p = E_i/S_t + E_d).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := energyRequire(cmd, "time-speedup"); err != nil {
				return err
			}
			given := func(flag string, v *float64) *float64 {
				if cmd.Flags().Changed(flag) {
					return v
				}
				return nil
			}
			res, err := modelio.EnergySpeedup(st, given("idle-fraction", &s), given("idle-energy", &ei), given("dynamic-energy", &ed))
			if err != nil {
				return usageErr(err)
			}
			return modelio.WriteJSON(cmd.OutOrStdout(), "", res)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&st, "time-speedup", 0, "time speedup S_t = T_1/T_p")
	f.Float64Var(&s, "idle-fraction", 0, "idle fraction s of the sequential run's energy, 0 to 1")
	f.Float64Var(&ei, "idle-energy", 0, "idle energy E_i of the sequential run (J)")
	f.Float64Var(&ed, "dynamic-energy", 0, "dynamic energy E_d of the sequential run (J)")
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
				return usageErr(fmt.Errorf("unknown --format %q (arrow or parquet)", format))
			}
			if err := energyRequire(cmd, "trace", "power"); err != nil {
				return err
			}
			if err := checkOutputs(nonEmpty(o.Trace, o.Power, o.Params, o.IO),
				inDir(out, "energy.arrow", "totals.arrow", "model.json", "energy.png", "energy.svg", "power.png", "power.svg")...); err != nil {
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
