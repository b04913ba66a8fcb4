package modelio

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/internal/paths"
	"github.com/tracecast/tracecast/models"
)

// PowerFit is "powermodel fit": six measurements, or samples to fit.
type PowerFit struct {
	models.PowerInputs
	FMax    float64 `flag:"fmax" help:"highest frequency"` // also the samples' fmax
	Samples string  `flag:"samples" help:"CSV of measurements (cpu, f, watts) to fit by least squares"`
	Out     string  `flag:"output,o" help:"also write the model to this JSON file"`
}

// Run writes the model to w (and to Out); fs says which flags were given:
// without --samples, all six measurements are required. A bad option is a
// cliflags.UsageError.
func (p PowerFit) Run(w io.Writer, fs *pflag.FlagSet) error {
	if err := cliflags.Usage(paths.CheckOutputs(paths.Given(p.Samples), p.Out)); err != nil {
		return err
	}
	if p.Samples != "" {
		mf, err := FitPowerModel(p.Samples, p.FMax)
		if err != nil {
			return err
		}
		return WriteJSON(w, p.Out, mf)
	}
	if err := cliflags.Require(fs, "fmin", "fmax", "p-idle-fmin", "p-idle-fmax", "p-full-fmin", "p-full-fmax"); err != nil {
		return err
	}
	p.PowerInputs.FMax = p.FMax
	mf, err := PowerModelFromInputs(p.PowerInputs)
	if err != nil {
		return cliflags.Usage(err)
	}
	return WriteJSON(w, p.Out, mf)
}

// CTFit is "ctmodel fit": seven inputs.
type CTFit struct {
	models.CTInputs
	Out string `flag:"output,o" help:"also write the model to this JSON file"`
}

// Run writes the model to w (and to Out); all seven inputs are required,
// --x as a fraction or a percentage.
func (c CTFit) Run(w io.Writer, fs *pflag.FlagSet) error {
	if err := cliflags.Require(fs, "fmin", "fmax", "x", "ct-full-fmin", "ct-full-fmax", "ct-x-fmin", "ct-x-fmax"); err != nil {
		return err
	}
	if c.X >= 1 {
		c.X /= 100
	}
	mf, err := CTModelFromInputs(c.CTInputs)
	if err != nil {
		return cliflags.Usage(err)
	}
	return WriteJSON(w, c.Out, mf)
}

// Predictor is a model file that predicts at a CPU share and a frequency.
type Predictor interface {
	Prediction(cpu, freq float64, measured *float64) (map[string]float64, error)
}

// ModelQuery is the predict command of powermodel and ctmodel: a model
// file evaluated at an operating point. Its flags' help names the model,
// so the command declares them.
type ModelQuery struct {
	Path            string
	CPU, Freq, Real float64
}

// Predict reads the model at q.Path with read and writes its prediction to
// w; zeroCPU allows a CPU share of 0; fs says whether --measured was given.
func Predict[M Predictor](w io.Writer, fs *pflag.FlagSet, q ModelQuery, zeroCPU bool, read func(string) (M, error)) error {
	if err := cliflags.Require(fs, "model", "cpu", "freq"); err != nil {
		return err
	}
	mf, err := read(q.Path)
	if err != nil {
		return err
	}
	cpu, err := OperatingPoint(q.CPU, q.Freq, zeroCPU)
	if err != nil {
		return cliflags.Usage(err)
	}
	p, err := mf.Prediction(cpu, q.Freq, cliflags.Given(fs, "measured", &q.Real)) // 0 is a measurement too
	if err != nil {
		return err
	}
	return WriteJSON(w, "", p)
}

// ParetoFront is "pareto": the frontier of a CSV's points, as CSV or JSON.
func ParetoFront(w io.Writer, path, format string) error {
	if format != "csv" && format != "json" {
		return cliflags.Usage(fmt.Errorf("unknown --format %q (csv, json)", format))
	}
	pts, err := ReadPoints(path)
	if err != nil {
		return err
	}
	front := models.Pareto(pts)
	if format == "json" {
		return WriteJSON(w, "", front)
	}
	return WritePoints(w, front)
}

// SpeedupInputs is "energy-speedup": the time speedup and the idle
// fraction, or the idle and dynamic energies.
type SpeedupInputs struct {
	TimeSpeedup   float64 `flag:"time-speedup" help:"time speedup S_t = T_1/T_p"`
	IdleFraction  float64 `flag:"idle-fraction" help:"idle fraction s of the sequential run's energy, 0 to 1"`
	IdleEnergy    float64 `flag:"idle-energy" help:"idle energy E_i of the sequential run (J)"`
	DynamicEnergy float64 `flag:"dynamic-energy" help:"dynamic energy E_d of the sequential run (J)"`
}

// Run writes the energy speedup to w from the flags fs was given.
func (s SpeedupInputs) Run(w io.Writer, fs *pflag.FlagSet) error {
	if err := cliflags.Require(fs, "time-speedup"); err != nil {
		return err
	}
	res, err := EnergySpeedup(s.TimeSpeedup, cliflags.Given(fs, "idle-fraction", &s.IdleFraction),
		cliflags.Given(fs, "idle-energy", &s.IdleEnergy), cliflags.Given(fs, "dynamic-energy", &s.DynamicEnergy))
	if err != nil {
		return cliflags.Usage(err)
	}
	return WriteJSON(w, "", res)
}
