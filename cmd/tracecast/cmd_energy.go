package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/models"
	"github.com/tracecast/tracecast/models/modelio"
)

// energyCommands are the energy and power-model commands (energy,
// powermodel, ctmodel, pareto, ...).
func energyCommands() []*cobra.Command {
	return []*cobra.Command{newPowermodelCmd(), newCTModelCmd(), newParetoCmd(), newEnergyCmd(), newEnergySpeedupCmd()}
}

// requireFlags fails with a usage error when one of names was not given.
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

// energyWriteJSON prints v indented to w, and to path as well when path is
// set (a model file for the predict commands).
func energyWriteJSON(w io.Writer, path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path != "" {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	_, err = w.Write(b)
	return err
}

func newPowermodelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "powermodel",
		Short: "Seed 001's DVFS power model: fit it (six inputs or least squares) and predict",
		Long: `powermodel builds and uses the power model of seed 001 (eq. 6):

  P(cpu, f) = P0 − α·(fmax − f)/fmax + (A·f/fmax + B)·cpu

where cpu is the utilisation in [0, 1], f the highest operating frequency
and P0 the idle power at fmax. "fit" computes A, B and α from the six inputs
of eq. 7–9 or fits all four parameters by least squares to measurements;
"predict" evaluates the model.`,
	}
	cmd.AddCommand(newPowermodelFitCmd(), newPowermodelPredictCmd())
	return cmd
}

func newPowermodelFitCmd() *cobra.Command {
	var in models.PowerInputs
	var out, samples string
	var fmax float64
	cmd := &cobra.Command{
		Use:   "fit (--fmin F --fmax F --p-idle-fmin W --p-idle-fmax W --p-full-fmin W --p-full-fmax W | --samples FILE.csv)",
		Short: "Compute A, B and alpha from six measurements, or fit them to many",
		Long: `fit prints the power model as JSON (A, B, alpha, fmax, p_idle_fmax) and, with
-o, writes it to a model file for "powermodel predict".

With the six inputs, A, B and α come from seed 001's eq. 7, 8 and 9:

  A = ((P¹max − P⁰max) − (P¹min − P⁰min)) · fmax/(fmax − fmin)
  B = (P¹max − P⁰max) − A
  α = (P⁰max − P⁰min) · fmax/(fmax − fmin)

With --samples, a CSV of measurements with columns cpu, f, watts (a header
row naming them, in any order; cpu in [0, 1]) is fitted by linear least
squares, and the fit's RMSE, R² and eq. 10 errors are reported. --fmax sets
the reference frequency (default: the highest f in the samples).

Frequencies may be in any unit, as long as all are in the same one.`,
		Args: energyArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if samples != "" {
				mf, err := modelio.FitPowerModel(samples, fmax)
				if err != nil {
					return err
				}
				return energyWriteJSON(cmd.OutOrStdout(), out, mf)
			}
			if err := energyRequire(cmd, "fmin", "fmax", "p-idle-fmin", "p-idle-fmax", "p-full-fmin", "p-full-fmax"); err != nil {
				return err
			}
			in.FMax = fmax
			mf, err := modelio.PowerModelFromInputs(in)
			if err != nil {
				return usageErr(err)
			}
			return energyWriteJSON(cmd.OutOrStdout(), out, mf)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&in.FMin, "fmin", 0, "lowest frequency")
	f.Float64Var(&fmax, "fmax", 0, "highest frequency")
	f.Float64Var(&in.PIdleFMin, "p-idle-fmin", 0, "idle power at fmin (W)")
	f.Float64Var(&in.PIdleFMax, "p-idle-fmax", 0, "idle power at fmax (W)")
	f.Float64Var(&in.PFullFMin, "p-full-fmin", 0, "power at 100% CPU and fmin (W)")
	f.Float64Var(&in.PFullFMax, "p-full-fmax", 0, "power at 100% CPU and fmax (W)")
	f.StringVar(&samples, "samples", "", "CSV of measurements (cpu, f, watts) to fit by least squares")
	f.StringVarP(&out, "output", "o", "", "also write the model to this JSON file")
	return cmd
}

func newPowermodelPredictCmd() *cobra.Command {
	var model string
	var cpu, freq, measured float64
	cmd := &cobra.Command{
		Use:   "predict --model FILE --cpu U --freq F [--measured W]",
		Short: "Predict a node's power at a utilisation and frequency",
		Long: `predict evaluates seed 001's eq. 6 with a model file written by
"powermodel fit -o", at utilisation --cpu (0 to 1; 0.5 or 50% both mean
half) and frequency --freq (same unit as the model's). With --measured, it
also prints eq. 10's error, |measured − predicted|/measured·100.`,
		Args: energyArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := energyRequire(cmd, "model", "cpu", "freq"); err != nil {
				return err
			}
			mf, err := modelio.ReadPowerModel(model)
			if err != nil {
				return err
			}
			if cpu > 1 {
				cpu /= 100
			}
			if cpu < 0 || cpu > 1 || freq <= 0 {
				return usageErr(errors.New("--cpu must be in [0, 1] (or a percentage) and --freq positive"))
			}
			p, err := mf.Prediction(cpu, freq, energyMeasured(cmd, measured))
			if err != nil {
				return err
			}
			return energyWriteJSON(cmd.OutOrStdout(), "", p)
		},
	}
	f := cmd.Flags()
	f.StringVar(&model, "model", "", "model file written by powermodel fit -o")
	f.Float64Var(&cpu, "cpu", 0, "CPU utilisation, 0 to 1 (values above 1 are read as percentages)")
	f.Float64Var(&freq, "freq", 0, "operating frequency (the model's unit)")
	f.Float64Var(&measured, "measured", 0, "measured power, to report eq. 10's error")
	return cmd
}

func newCTModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ctmodel",
		Short: "Seed 001's completion-time model (eq. 14–18): fit from seven inputs and predict",
		Long: `ctmodel builds and uses the completion-time model of seed 001 (eq. 14):

  CT(cpu, f) = [θ_f/cpu + (1 − θ_f)] · [U·fmax/f + (1 − U)] · CT¹max
  θ_f = (θmin − θmax) · fmin/(fmax − fmin) · (fmax/f − 1) + θmax   (eq. 18)

"fit" computes U (eq. 15), θmax (eq. 16) and θmin (eq. 17) from the run
times of one task at 100% and x% CPU at fmin and fmax; "predict" evaluates
eq. 14.`,
	}
	cmd.AddCommand(newCTFitCmd(), newCTPredictCmd())
	return cmd
}

func newCTFitCmd() *cobra.Command {
	var in models.CTInputs
	var out string
	cmd := &cobra.Command{
		Use:   "fit --fmin F --fmax F --x X --ct-full-fmin S --ct-full-fmax S --ct-x-fmin S --ct-x-fmax S [-o FILE]",
		Short: "Compute U, θ_fmin and θ_fmax from seven inputs",
		Long: `fit prints the completion-time model as JSON (U, theta_fmin, theta_fmax, K,
ct_full_fmax) and, with -o, writes it for "ctmodel predict". --x is the
reduced CPU allocation (0.2 or 20 for 20%); the four times are the task's
completion times at 100% and at x, at fmin and at fmax (any time unit:
predictions come out in the same one).`,
		Args: energyArgs(cobra.NoArgs),
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
			return energyWriteJSON(cmd.OutOrStdout(), out, mf)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&in.FMin, "fmin", 0, "lowest frequency")
	f.Float64Var(&in.FMax, "fmax", 0, "highest frequency")
	f.Float64Var(&in.X, "x", 0, "reduced CPU allocation, 0 to 1 (or a percentage)")
	f.Float64Var(&in.CTFullMin, "ct-full-fmin", 0, "completion time at 100% CPU and fmin")
	f.Float64Var(&in.CTFullMax, "ct-full-fmax", 0, "completion time at 100% CPU and fmax")
	f.Float64Var(&in.CTXMin, "ct-x-fmin", 0, "completion time at x CPU and fmin")
	f.Float64Var(&in.CTXMax, "ct-x-fmax", 0, "completion time at x CPU and fmax")
	f.StringVarP(&out, "output", "o", "", "also write the model to this JSON file")
	return cmd
}

func newCTPredictCmd() *cobra.Command {
	var model string
	var cpu, freq, measured float64
	cmd := &cobra.Command{
		Use:   "predict --model FILE --cpu U --freq F [--measured T]",
		Short: "Predict a task's completion time at a CPU allocation and frequency",
		Long: `predict evaluates seed 001's eq. 14 with a model written by "ctmodel fit -o".
--cpu is the allocation (0 < cpu ≤ 1, or a percentage); with --measured it
also prints eq. 10's error.`,
		Args: energyArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := energyRequire(cmd, "model", "cpu", "freq"); err != nil {
				return err
			}
			mf, err := modelio.ReadCTModel(model)
			if err != nil {
				return err
			}
			if cpu > 1 {
				cpu /= 100
			}
			if cpu <= 0 || cpu > 1 || freq <= 0 {
				return usageErr(errors.New("--cpu must be in (0, 1] (or a percentage) and --freq positive"))
			}
			p, err := mf.Prediction(cpu, freq, energyMeasured(cmd, measured))
			if err != nil {
				return err
			}
			return energyWriteJSON(cmd.OutOrStdout(), "", p)
		},
	}
	f := cmd.Flags()
	f.StringVar(&model, "model", "", "model file written by ctmodel fit -o")
	f.Float64Var(&cpu, "cpu", 0, "CPU allocation, 0 to 1 (values above 1 are read as percentages)")
	f.Float64Var(&freq, "freq", 0, "operating frequency (the model's unit)")
	f.Float64Var(&measured, "measured", 0, "measured completion time, to report eq. 10's error")
	return cmd
}

func newParetoCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "pareto FILE.csv",
		Short: "Pareto frontier of (configuration, time, power) points (seed 003 §4.2)",
		Long: `pareto reads a CSV with a header row and the columns config, time and power
(any order; other columns are ignored) and prints the Pareto-optimal
configurations: those no other configuration beats in both time and power
(≤ in both, < in one). They are printed by increasing power, hence
decreasing time — the best performance for each power budget.

--format csv (default) prints config,time,power; json one array.`,
		Args: energyArgs(cobra.ExactArgs(1)),
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
				return energyWriteJSON(cmd.OutOrStdout(), "", front)
			}
			return modelio.WritePoints(cmd.OutOrStdout(), front)
		},
	}
	cmd.Flags().StringVar(&format, "format", "csv", "output: csv or json")
	return cmd
}

// energyArgs makes a positional-argument error a usage error (exit 2).
func energyArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageErr(err)
		}
		return nil
	}
}

func newEnergySpeedupCmd() *cobra.Command {
	var st, s, ei, ed float64
	cmd := &cobra.Command{
		Use:   "energy-speedup --time-speedup S (--idle-fraction s | --idle-energy J --dynamic-energy J)",
		Short: "Seed 003's energy speedup from the time speedup and the idle fraction (eq. 5–6)",
		Long: `energy-speedup prints seed 003's energy speedup of a parallel run,

  S_e = 1 / ((1 − s) + s/S_t)          (eq. 6)

from the time speedup S_t and the idle fraction s = E_i/(E_i + E_d) of the
sequential run's energy — given, or computed from the idle and dynamic
energies, in which case the parallel energy E_p = E_i/S_t + E_d (eq. 5) is
printed too. "tracecast energy" reports a run's measured idle fraction.`,
		Args: energyArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := energyRequire(cmd, "time-speedup"); err != nil {
				return err
			}
			var res map[string]float64
			var err error
			switch {
			case cmd.Flags().Changed("idle-fraction"):
				res, err = modelio.Speedup(st, s)
			case cmd.Flags().Changed("idle-energy") && cmd.Flags().Changed("dynamic-energy"):
				res, err = modelio.SpeedupFromEnergies(st, ei, ed)
			default:
				return usageErr(errors.New("give --idle-fraction, or --idle-energy and --dynamic-energy"))
			}
			if err != nil {
				return usageErr(err)
			}
			return energyWriteJSON(cmd.OutOrStdout(), "", res)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&st, "time-speedup", 0, "time speedup S_t = T_1/T_p")
	f.Float64Var(&s, "idle-fraction", 0, "idle fraction s of the sequential run's energy, 0 to 1")
	f.Float64Var(&ei, "idle-energy", 0, "idle energy E_i of the sequential run (J)")
	f.Float64Var(&ed, "dynamic-energy", 0, "dynamic energy E_d of the sequential run (J)")
	return cmd
}

// energyMeasured is --measured when it was given (0 is a measurement too),
// else nil.
func energyMeasured(cmd *cobra.Command, v float64) *float64 {
	if !cmd.Flags().Changed("measured") {
		return nil
	}
	return &v
}
