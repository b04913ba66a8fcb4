package models

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// StatePowers are Yang et al.'s (2014) per-state node powers (Table 1), in watts.
// Each is an absolute power, not an increment: Idle is the node's power
// with every worker idle, App (Storage, Net) its power with one worker
// computing (in I/O, communicating) and the others idle. A busy worker adds
// App − Idle to the idle power, which is why App < Idle means nothing (see
// Validate).
type StatePowers struct {
	Idle    float64 `json:"idle" yaml:"idle"`
	App     float64 `json:"app" yaml:"app"`
	Storage float64 `json:"storage" yaml:"storage"`
	Net     float64 `json:"net" yaml:"net"`
}

// Taurus is Yang et al.'s (2014) Table 1 (Grid'5000 Lyon Taurus nodes).
var Taurus = StatePowers{Idle: 91.6, App: 125.2, Storage: 129.0, Net: 127.7}

// ErrImplausible marks powers, fits and predictions that cannot be what
// they claim (a negative power, a state below idle, a negative energy): a
// failed fit or a refused input, never a result.
var ErrImplausible = errors.New("implausible")

// Validate checks powers as given by a user: finite, idle not negative and
// every state at least idle. The usual mistake it catches is giving the
// increments ({idle: 100, app: 15}) where the absolute powers are meant
// ({idle: 100, app: 115}): the model would then predict that computing
// saves 85 W per worker, and a negative energy.
func (p StatePowers) Validate() error {
	fields := []struct {
		name string
		v    float64
	}{{"idle", p.Idle}, {"app", p.App}, {"storage", p.Storage}, {"net", p.Net}}
	for _, f := range fields {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w powers: %s %v W is not a power", ErrImplausible, f.name, f.v)
		}
	}
	if p.Idle < 0 {
		return fmt.Errorf("%w powers: idle %g W is negative", ErrImplausible, p.Idle)
	}
	var below []string
	for _, f := range fields[1:] {
		if f.v < p.Idle {
			below = append(below, fmt.Sprintf("%s %g W", f.name, f.v))
		}
	}
	if len(below) > 0 {
		verb := "is"
		if len(below) > 1 {
			verb = "are"
		}
		return fmt.Errorf("%w powers: %s %s below idle %g W: app, storage and net are the node's whole power with one worker in that state "+
			"(idle + what that worker adds), not the increment (for a worker adding 15 W, app is %g)",
			ErrImplausible, andList(below), verb, p.Idle, p.Idle+15)
	}
	return nil
}

// Occupancy is the time one node spends in each activity over a run or a
// window, in seconds. T is the wall-clock length; TApp, TStorage and TNet
// are the times in each state (for a node with several workers, the sum
// over workers: each busy worker adds its increment above idle).
type Occupancy struct {
	T        float64 `json:"t"`
	TApp     float64 `json:"t_app"`
	TStorage float64 `json:"t_storage"`
	TNet     float64 `json:"t_net"`
}

// NodeEnergy is Yang et al.'s (2014) per-node energy, in joules:
// P_idle·T + (P_app−P_idle)·T_app + (P_storage−P_idle)·T_storage + (P_net−P_idle)·T_net.
func NodeEnergy(p StatePowers, o Occupancy) float64 {
	return p.Idle*o.T + (p.App-p.Idle)*o.TApp + (p.Storage-p.Idle)*o.TStorage + (p.Net-p.Idle)*o.TNet
}

// Energy is the model's total over nodes (all with the same powers).
func Energy(p StatePowers, nodes []Occupancy) float64 {
	var e float64
	for _, o := range nodes {
		e += NodeEnergy(p, o)
	}
	return e
}

// Inaccuracy is Yang et al.'s (2014) |1 − E_pred/E_actual|.
func Inaccuracy(predicted, actual float64) float64 { return math.Abs(1 - predicted/actual) }

// EDP is the energy-delay product E·T (J·s).
func EDP(energy, t float64) float64 { return energy * t }

// EnergyObservation is a measured energy (J) with the occupancy it was
// measured over (one node, one window or run).
type EnergyObservation struct {
	Occupancy
	E float64 `json:"e"`
}

// StateFit is the result of FitStatePowers. Fitted says which increments
// the data could determine; the others are reported equal to Idle.
type StateFit struct {
	Powers StatePowers `json:"powers"`
	// StdErr are the standard errors of the fitted coefficients: Idle's
	// is the idle power's, App's (Storage's, Net's) the increment's
	// App − Idle. Zero when not fitted or when the fit is exact (as many
	// observations as parameters: nothing to estimate the noise from).
	StdErr StatePowers `json:"stderr"`
	Fitted struct {
		App, Storage, Net bool
	} `json:"fitted"`
	Stats FitStats `json:"stats"`
}

// FitStatePowers fits Yang et al.'s (2014) per-state powers by linear least squares
// from measured energies: E = P_idle·T + ΔP_app·T_app + ΔP_storage·T_storage
// + ΔP_net·T_net, linear in (P_idle, ΔP_app, ΔP_storage, ΔP_net). A state
// never occupied in the data is left out of the fit (its power is reported
// as the idle power and Fitted says so). Windows or runs must vary enough
// in their occupancies to separate the states: otherwise the fit fails
// with ErrNotIdentifiable. A fit whose powers cannot be powers fails too,
// with ErrImplausible and the reason: a negative power, or a state below
// idle by more than two standard errors and BelowIdleTolerance (what a
// state too rarely occupied to be measured gives: the StarPU comm states
// of a 1 kHz meter's run).
func FitStatePowers(obs []EnergyObservation) (StateFit, error) {
	var fit StateFit
	if len(obs) == 0 {
		return fit, errors.New("fit state powers: no observations")
	}
	use := [4]bool{true}
	for _, o := range obs {
		use[1] = use[1] || o.TApp > 0
		use[2] = use[2] || o.TStorage > 0
		use[3] = use[3] || o.TNet > 0
	}
	var cols []int
	for j, u := range use {
		if u {
			cols = append(cols, j)
		}
	}
	x := make([][]float64, len(obs))
	y := make([]float64, len(obs))
	for i, o := range obs {
		full := [4]float64{o.T, o.TApp, o.TStorage, o.TNet}
		row := make([]float64, 0, len(cols))
		for _, j := range cols {
			row = append(row, full[j])
		}
		x[i] = row
		y[i] = o.E
	}
	beta, cov, err := leastSquares(x, y)
	if err != nil {
		return fit, fmt.Errorf("fit state powers: %w", err)
	}
	var coef, se [4]float64
	for k, j := range cols {
		coef[j] = beta[k]
		if cov != nil {
			se[j] = math.Sqrt(math.Max(cov[k][k], 0))
		}
	}
	fit.Powers = StatePowers{Idle: coef[0], App: coef[0] + coef[1], Storage: coef[0] + coef[2], Net: coef[0] + coef[3]}
	fit.StdErr = StatePowers{Idle: se[0], App: se[1], Storage: se[2], Net: se[3]}
	fit.Fitted.App, fit.Fitted.Storage, fit.Fitted.Net = use[1], use[2], use[3]
	if err := plausibleStateFit(fit, coef, se, use, obs); err != nil {
		return StateFit{}, fmt.Errorf("fit state powers: %w", err)
	}
	pred := make([]float64, len(obs))
	for i, o := range obs {
		pred[i] = NodeEnergy(fit.Powers, o.Occupancy)
	}
	fit.Stats = Stats(y, pred, len(cols))
	return fit, nil
}

// andList joins "a", "b" and "c" as people write them.
func andList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// BelowIdleTolerance is how far below idle, as a fraction of the idle
// power, a fitted state may be and still be called idle: a state whose
// true increment is zero comes out a few mW either side of idle, and its
// standard error misses the counter's and the attribution's systematic
// errors (the DVFS fixture's comm: −5.5 mW, ±1.3 mW).
const BelowIdleTolerance = 0.01

// plausibleStateFit refuses fitted powers that cannot be powers. The
// reason names the state and how little of it the data held, which is
// nearly always why.
func plausibleStateFit(fit StateFit, coef, se [4]float64, use [4]bool, obs []EnergyObservation) error {
	var occ [4]float64
	for _, o := range obs {
		occ[0] += o.T
		occ[1] += o.TApp
		occ[2] += o.TStorage
		occ[3] += o.TNet
	}
	names := [4]string{"idle", "app", "storage", "net"}
	powers := [4]float64{fit.Powers.Idle, fit.Powers.App, fit.Powers.Storage, fit.Powers.Net}
	if coef[0] < 0 {
		return fmt.Errorf("%w fit: the fitted idle power %.4g W is negative", ErrImplausible, coef[0])
	}
	var errs []error
	for j := 1; j < 4; j++ {
		if !use[j] {
			continue
		}
		why := fmt.Sprintf(" (%s occupancy %.4g worker-s over %d windows, %.4g s: too little to determine it, or the power does not follow the states)",
			names[j], occ[j], len(obs), occ[0])
		switch {
		case powers[j] < 0:
			errs = append(errs, fmt.Errorf("the fitted %s power %.4g W is negative%s", names[j], powers[j], why))
		case coef[j] < -math.Max(2*se[j], BelowIdleTolerance*coef[0]):
			errs = append(errs, fmt.Errorf("the fitted %s power %.4g W is below idle %.4g W by more than twice its standard error (±%.2g W) and %g%% of idle%s",
				names[j], powers[j], powers[0], se[j], 100*BelowIdleTolerance, why))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w fit: %w", ErrImplausible, errors.Join(errs...))
	}
	return nil
}

// ParallelEnergy is Anger's (2016) eq. 5: E_p = E_i/S_t + E_d, from the
// sequential run's idle and dynamic energies and the time speedup.
func ParallelEnergy(idle, dynamic, timeSpeedup float64) float64 {
	return idle/timeSpeedup + dynamic
}

// IdleFraction is Anger's (2016) s = E_i / (E_i + E_d).
func IdleFraction(idle, dynamic float64) float64 { return idle / (idle + dynamic) }

// EnergySpeedup is Anger's (2016) eq. 6, S_e = 1 / ((1 − s) + s/S_t), from the
// time speedup S_t and the idle fraction s. (The seed's text prints S_e in
// the denominator; eq. 5 gives S_t, which is what is used here.)
func EnergySpeedup(timeSpeedup, idleFraction float64) float64 {
	return 1 / ((1 - idleFraction) + idleFraction/timeSpeedup)
}

// Point is one configuration's measured execution time and power.
type Point struct {
	Config string  `json:"config"`
	Time   float64 `json:"time"`
	Power  float64 `json:"power"`
}

// Pareto returns Anger's (2016) Pareto frontier: the points not strictly
// dominated by another (another point with time ≤ and power ≤, one of them
// strictly), sorted by increasing power (so decreasing time). Duplicated
// (time, power) pairs are all kept.
func Pareto(points []Point) []Point {
	ps := append([]Point(nil), points...)
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Power != ps[j].Power {
			return ps[i].Power < ps[j].Power
		}
		return ps[i].Time < ps[j].Time
	})
	var out []Point
	best := math.Inf(1) // lowest time among points of strictly lower power
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j].Power == ps[i].Power {
			j++
		}
		// ps[i:j] share a power; the lowest time among them is ps[i].Time.
		minT := ps[i].Time
		if minT < best {
			for k := i; k < j && ps[k].Time == minT; k++ {
				out = append(out, ps[k])
			}
			best = minT
		}
		i = j
	}
	return out
}
