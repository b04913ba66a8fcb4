package models

import (
	"errors"
	"fmt"
	"math"
)

// CTInputs are the seven inputs of Srinivasan and Bellur's (2014) completion-time model (§7.1):
// the lowest and highest frequencies, a reduced CPU allocation X (the
// "0.x" of eq. 16–17, in (0, 1)), and the completion times at full and
// reduced allocation at both frequencies.
type CTInputs struct {
	FMin      float64 `json:"fmin" flag:"fmin" help:"lowest frequency"`
	FMax      float64 `json:"fmax" flag:"fmax" help:"highest frequency"`
	X         float64 `json:"x" flag:"x" help:"reduced CPU allocation, 0 to 1 (or a percentage)"`
	CTFullMin float64 `json:"ct_full_fmin" flag:"ct-full-fmin" help:"completion time at 100% CPU and fmin"` // CT^{1.0}_{fmin}
	CTFullMax float64 `json:"ct_full_fmax" flag:"ct-full-fmax" help:"completion time at 100% CPU and fmax"` // CT^{1.0}_{fmax}
	CTXMin    float64 `json:"ct_x_fmin" flag:"ct-x-fmin" help:"completion time at x CPU and fmin"`          // CT^{0.x}_{fmin}
	CTXMax    float64 `json:"ct_x_fmax" flag:"ct-x-fmax" help:"completion time at x CPU and fmax"`          // CT^{0.x}_{fmax}
}

// CTModel is eq. 14 with θ_f from eq. 18:
//
//	CT(cpu, f) = [θ_f/cpu + μ_f] · [U·fmax/f + V] · CT^{1.0}_{fmax}
//	θ_f = (θmin − θmax)·fmin/(fmax − fmin)·(fmax/f − 1) + θmax,  μ_f = 1 − θ_f,  V = 1 − U.
type CTModel struct {
	FMin      float64 `json:"fmin"`
	FMax      float64 `json:"fmax"`
	U         float64 `json:"U"`
	ThetaMin  float64 `json:"theta_fmin"`
	ThetaMax  float64 `json:"theta_fmax"`
	CTFullMax float64 `json:"ct_full_fmax"`
}

// CTFromInputs computes U (eq. 15), θ_fmax (eq. 16) and θ_fmin (eq. 17).
func CTFromInputs(in CTInputs) (CTModel, error) {
	for _, v := range []float64{in.FMin, in.FMax, in.X, in.CTFullMin, in.CTFullMax, in.CTXMin, in.CTXMax} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return CTModel{}, errors.New("completion-time inputs must be finite numbers")
		}
	}
	if in.FMin <= 0 || in.FMax <= in.FMin {
		return CTModel{}, fmt.Errorf("need 0 < fmin < fmax (got fmin %g, fmax %g)", in.FMin, in.FMax)
	}
	if in.X <= 0 || in.X >= 1 {
		return CTModel{}, fmt.Errorf("the reduced allocation x must be in (0, 1) (got %g)", in.X)
	}
	if in.CTFullMin <= 0 || in.CTFullMax <= 0 || in.CTXMin <= 0 || in.CTXMax <= 0 {
		return CTModel{}, errors.New("completion times must be positive")
	}
	fr := in.FMin / (in.FMax - in.FMin)
	xr := in.X / (1 - in.X)
	m := CTModel{
		FMin:      in.FMin,
		FMax:      in.FMax,
		U:         (in.CTFullMin - in.CTFullMax) / in.CTFullMax * fr, // eq. 15
		ThetaMax:  xr * (in.CTXMax - in.CTFullMax) / in.CTFullMax,    // eq. 16
		ThetaMin:  xr * (in.CTXMin - in.CTFullMin) / in.CTFullMin,    // eq. 17
		CTFullMax: in.CTFullMax,
	}
	// θ < 0 says the task ran faster with less CPU; eq. 14's θ/cpu term
	// then makes the completion time negative at small allocations.
	for _, c := range []struct {
		f, theta, full, x float64
	}{{in.FMin, m.ThetaMin, in.CTFullMin, in.CTXMin}, {in.FMax, m.ThetaMax, in.CTFullMax, in.CTXMax}} {
		if c.theta < 0 {
			return CTModel{}, fmt.Errorf("%w inputs: at f = %g the task took %g at %g%% CPU, less than the %g it took at 100%% "+
				"(θ = %.4g < 0): with less CPU a task does not finish sooner, and eq. 14 would predict negative times below %.3g%% CPU",
				ErrImplausible, c.f, c.x, 100*in.X, c.full, c.theta, 100*-c.theta/(1-c.theta))
		}
	}
	return m, nil
}

// K is the slope of θ_f against fmax/f − 1 (§7).
func (m CTModel) K() float64 { return (m.ThetaMin - m.ThetaMax) * m.FMin / (m.FMax - m.FMin) }

// Theta is θ_f, eq. 18.
func (m CTModel) Theta(f float64) float64 { return m.K()*(m.FMax/f-1) + m.ThetaMax }

// Predict is eq. 14: the completion time at allocation cpu ∈ (0, 1] and frequency f.
func (m CTModel) Predict(cpu, f float64) float64 {
	th := m.Theta(f)
	return (th/cpu + (1 - th)) * (m.U*m.FMax/f + (1 - m.U)) * m.CTFullMax
}
