package modelio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/models"
)

// Model names recorded in the files, so that a file says which model it
// holds.
const (
	PowerModelName = "dvfs-power/seed001"
	CTModelName    = "completion-time/seed001"
)

// PowerModelFile is what "powermodel fit" writes and "powermodel predict"
// reads: the model, and the six inputs or the least-squares fit it came
// from.
type PowerModelFile struct {
	Model  string              `json:"model"`
	Inputs *models.PowerInputs `json:"inputs,omitempty"`
	models.PowerModel
	Fit *models.FitStats `json:"fit,omitempty"`
}

// PowerModelFromInputs computes the power model from the six inputs of
// Srinivasan and Bellur's (2014) eq. 7–9. The error is the inputs' (models.DVFSFromInputs).
func PowerModelFromInputs(in models.PowerInputs) (PowerModelFile, error) {
	m, err := models.DVFSFromInputs(in)
	if err != nil {
		return PowerModelFile{}, err
	}
	return PowerModelFile{Model: PowerModelName, Inputs: &in, PowerModel: m}, nil
}

// FitPowerModel fits the power model by least squares to the measurements
// of a CSV file (see ReadPowerSamples); fmax is the reference frequency, 0
// for the highest in the samples.
func FitPowerModel(samples string, fmax float64) (PowerModelFile, error) {
	ss, err := ReadPowerSamples(samples)
	if err != nil {
		return PowerModelFile{}, err
	}
	m, st, err := models.FitPower(ss, fmax)
	if err != nil {
		return PowerModelFile{}, err
	}
	return PowerModelFile{Model: PowerModelName, PowerModel: m, Fit: &st}, nil
}

// ReadPowerModel reads a power model file; a JSON file without fmax is
// not one.
func ReadPowerModel(path string) (PowerModelFile, error) {
	var mf PowerModelFile
	if err := readJSON(path, &mf); err != nil {
		return mf, err
	}
	if mf.FMax <= 0 {
		return mf, fmt.Errorf("%s: not a power model (no fmax)", path)
	}
	return mf, nil
}

// Prediction is the answer of "powermodel predict": the power at
// utilisation cpu (0 to 1) and frequency freq and, when measured is not
// nil, the measured power and eq. 10's error. A power that is not positive
// (a model far from the frequencies it was built on) is refused, as is a
// measured power that is not (eq. 10 divides by it).
func (f PowerModelFile) Prediction(cpu, freq float64, measured *float64) (map[string]float64, error) {
	w := f.Predict(cpu, freq)
	if !(w > 0) || math.IsInf(w, 0) {
		return nil, fmt.Errorf("%w prediction: %.4g W at %g%% CPU and f = %g: the model does not hold there (fmax %g)",
			models.ErrImplausible, w, 100*cpu, freq, f.FMax)
	}
	res := map[string]float64{"cpu": cpu, "freq": freq, "watts": w}
	if measured != nil {
		if err := positive("measured power", *measured); err != nil {
			return nil, err
		}
		res["measured"] = *measured
		res["error_pct"] = models.ErrorPct(*measured, w)
	}
	return res, nil
}

// positive refuses a measurement eq. 10 cannot divide by.
func positive(what string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("the %s must be a positive number (got %g)", what, v)
	}
	return nil
}

// CTModelFile is what "ctmodel fit" writes and "ctmodel predict" reads:
// the completion-time model, its seven inputs, and K (eq. 18's slope, to
// compare with the seed's).
type CTModelFile struct {
	Model  string           `json:"model"`
	Inputs *models.CTInputs `json:"inputs,omitempty"`
	models.CTModel
	K float64 `json:"K"`
}

// CTModelFromInputs computes the completion-time model from its seven
// inputs (eq. 15–17; in.X in (0, 1)). The error is the inputs'
// (models.CTFromInputs).
func CTModelFromInputs(in models.CTInputs) (CTModelFile, error) {
	m, err := models.CTFromInputs(in)
	if err != nil {
		return CTModelFile{}, err
	}
	return CTModelFile{Model: CTModelName, Inputs: &in, CTModel: m, K: m.K()}, nil
}

// ReadCTModel reads a completion-time model file; a JSON file without
// fmax or the full-allocation time is not one.
func ReadCTModel(path string) (CTModelFile, error) {
	var mf CTModelFile
	if err := readJSON(path, &mf); err != nil {
		return mf, err
	}
	if mf.FMax <= 0 || mf.CTFullMax <= 0 {
		return mf, fmt.Errorf("%s: not a completion-time model", path)
	}
	return mf, nil
}

// Prediction is the answer of "ctmodel predict": θ_f and the completion
// time at allocation cpu (0 < cpu ≤ 1) and frequency freq and, when
// measured is not nil, the measured time and eq. 10's error. A completion
// time that is not positive (θ_f < 0 far below fmin, or U > 1 far above
// fmax) is refused, as is a measured time that is not.
func (f CTModelFile) Prediction(cpu, freq float64, measured *float64) (map[string]float64, error) {
	ct := f.Predict(cpu, freq)
	if !(ct > 0) || math.IsInf(ct, 0) {
		return nil, fmt.Errorf("%w prediction: a completion time of %.4g at %g%% CPU and f = %g: the model does not hold there (fitted on [%g, %g], θ_f = %.4g)",
			models.ErrImplausible, ct, 100*cpu, freq, f.FMin, f.FMax, f.Theta(freq))
	}
	res := map[string]float64{"cpu": cpu, "freq": freq, "theta": f.Theta(freq), "completion_time": ct}
	if measured != nil {
		if err := positive("measured completion time", *measured); err != nil {
			return nil, err
		}
		res["measured"] = *measured
		res["error_pct"] = models.ErrorPct(*measured, ct)
	}
	return res, nil
}

// ReadStatePowers reads Yang et al.'s (2014) per-state powers from a YAML or JSON
// file: idle, app, storage, net in watts, each the node's whole power in
// that state (models.StatePowers), not an increment. idle is required; a
// state left out is at idle power (a worker in it adds nothing). Unknown
// keys and powers that are no powers (models.StatePowers.Validate: a state
// below idle, mostly increments given for powers) are refused, naming the
// file.
func ReadStatePowers(path string) (models.StatePowers, error) {
	var p models.StatePowers
	b, err := input.ReadFile(path)
	if err != nil {
		return p, err
	}
	var in map[string]float64
	if err := yaml.Unmarshal(b, &in); err != nil { // YAML is a superset of JSON
		return p, fmt.Errorf("%s: %w", path, err)
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "idle", "app", "storage", "net":
		default:
			return p, fmt.Errorf("%s: unknown key %q (want idle, app, storage, net in watts)", path, k)
		}
	}
	idle, ok := in["idle"]
	if !ok {
		return p, fmt.Errorf("%s: no idle power (want idle, app, storage, net in watts)", path)
	}
	p = models.StatePowers{Idle: idle, App: idle, Storage: idle, Net: idle}
	for k, dst := range map[string]*float64{"app": &p.App, "storage": &p.Storage, "net": &p.Net} {
		if v, ok := in[k]; ok {
			*dst = v
		}
	}
	if err := p.Validate(); err != nil {
		return models.StatePowers{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Speedup is the answer of "energy-speedup" from the time speedup and the
// idle fraction of the sequential run's energy (Anger's (2016) eq. 6). The
// time speedup must be a positive number and the idle fraction in [0, 1].
func Speedup(timeSpeedup, idleFraction float64) (map[string]float64, error) {
	if !(timeSpeedup > 0) || math.IsInf(timeSpeedup, 0) {
		return nil, fmt.Errorf("the time speedup must be a positive number (got %g)", timeSpeedup)
	}
	if !(idleFraction >= 0 && idleFraction <= 1) {
		return nil, fmt.Errorf("the idle fraction must be in [0, 1] (got %g)", idleFraction)
	}
	return map[string]float64{"time_speedup": timeSpeedup, "idle_fraction": idleFraction,
		"energy_speedup": models.EnergySpeedup(timeSpeedup, idleFraction)}, nil
}

// EnergySpeedup is the answer of "energy-speedup" from what it was given
// (nil: not given): the idle fraction, or the idle and dynamic energies —
// one or the other, since two idle fractions could disagree.
func EnergySpeedup(timeSpeedup float64, idleFraction, idle, dynamic *float64) (map[string]float64, error) {
	switch {
	case idleFraction != nil && (idle != nil || dynamic != nil):
		return nil, errors.New("give --idle-fraction, or --idle-energy and --dynamic-energy, not both")
	case idleFraction != nil:
		return Speedup(timeSpeedup, *idleFraction)
	case idle != nil && dynamic != nil:
		return SpeedupFromEnergies(timeSpeedup, *idle, *dynamic)
	}
	return nil, errors.New("give --idle-fraction, or --idle-energy and --dynamic-energy")
}

// CPURange is the range of a model's CPU share: [0, 1] when 0 is allowed.
func CPURange(zeroCPU bool) string { return map[bool]string{true: "[0, 1]", false: "(0, 1]"}[zeroCPU] }

// OperatingPoint checks a model's operating point as the predict commands
// take it: cpu in [0, 1] ((0, 1] without zeroCPU), or a percentage above
// 1, returned as a fraction; freq positive and finite.
func OperatingPoint(cpu, freq float64, zeroCPU bool) (float64, error) {
	if cpu > 1 {
		cpu /= 100
	}
	// Written to fail on NaN (every comparison with it is false) and on an
	// infinite frequency.
	if !(cpu >= 0 && cpu <= 1) || (cpu == 0 && !zeroCPU) || !(freq > 0 && freq <= math.MaxFloat64) {
		return 0, errors.New("--cpu must be in " + CPURange(zeroCPU) + " (or a percentage) and --freq positive")
	}
	return cpu, nil
}

// SpeedupFromEnergies is Speedup with the idle fraction computed from the
// sequential run's idle and dynamic energies, plus the parallel energy of
// eq. 5. Both energies must be finite and not negative, not both zero.
func SpeedupFromEnergies(timeSpeedup, idle, dynamic float64) (map[string]float64, error) {
	if !(idle >= 0 && dynamic >= 0) || math.IsInf(idle+dynamic, 0) || idle+dynamic == 0 {
		return nil, fmt.Errorf("the idle and dynamic energies must be finite, not negative and not both zero (got %g J and %g J)", idle, dynamic)
	}
	res, err := Speedup(timeSpeedup, models.IdleFraction(idle, dynamic))
	if err != nil {
		return nil, err
	}
	res["parallel_energy"] = models.ParallelEnergy(idle, dynamic, timeSpeedup)
	return res, nil
}

func readJSON(path string, v any) error {
	b, err := input.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WriteJSON writes v as indented JSON to w and, when path is set, to that
// file as well (a model file for the predict commands).
func WriteJSON(w io.Writer, path string, v any) error {
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
