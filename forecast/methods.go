package forecast

import (
	"fmt"
	"math"
	"strings"
)

// Method names a forecaster.
type Method string

// The methods. All are causal; see docs/forecasts.md.
const (
	// Persistence: p = 1 if X(t) ≥ k, else 0; mean = X(t)/R.
	Persistence Method = "persistence"
	// Climatology: the fraction of [t₀, t) with X ≥ k (mean: of X/R).
	Climatology Method = "climatology"
	// KSPaper is Pallipuram et al.'s (2014) forecast in continuous time: the fraction of
	// [t − H, t) with X ≥ k, the ECDF of the previous window of length H.
	KSPaper Method = "ks-paper"
	// Markov is a two-state mean-reverting (continuous-time Markov)
	// forecaster: p = π + (z − π)·G(κH), G(u) = (1 − e^{−u})/u, with the
	// occupancy π and the relaxation rate κ estimated over [t − 10H, t).
	Markov Method = "markov"
	// Auto combines the others online: a ridge regression of the outcome
	// on the occupancies over 0.1H … 10H, the current state and its
	// neighbours, and climatology, fitted with forgetting on the outcomes
	// already known at t and shrunk toward ks-paper.
	Auto Method = "auto"
)

// Methods lists the methods, the default first.
var Methods = []Method{Auto, KSPaper, Persistence, Climatology, Markov}

// ParseMethod checks a method name.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Methods))
	for i, m := range Methods {
		names[i] = string(m)
	}
	return "", fmt.Errorf("method %q: want one of %s", s, strings.Join(names, ", "))
}

// The auto method's features, in order; featKS must stay at index 1 (the
// prior puts all its weight there).
const (
	featOne = iota
	featKS
	featOcc01
	featOcc03
	featOcc3
	featOcc10
	featNow
	featClim
	featAbove1 // X(t) ≥ k+1
	featAbove2 // X(t) ≥ k+2
	featBelow1 // X(t) ≥ k−1
	numFeatP
)

const (
	mfeatOne = iota
	mfeatKS
	mfeatOcc01
	mfeatOcc03
	mfeatOcc3
	mfeatOcc10
	mfeatNow
	mfeatClim
	numFeatM
)

// Auto's learning: λ is the forgetting factor per known outcome; the prior
// strength grows with the horizon because outcomes issued within one
// horizon of each other overlap (≈ every/H independent samples each).
const (
	autoLambda    = 0.9995
	autoAlpha     = 1.0
	autoAlphaPerH = 0.3
)

func autoAlphaFor(h, every float64) float64 { return autoAlpha * math.Max(1, autoAlphaPerH*h/every) }

func priorKS(d int) []float64 {
	w := make([]float64, d)
	w[1] = 1
	return w
}

// g is the mean of e^{−κs} over s ∈ [0, H): (1 − e^{−u})/u, u = κH.
func g(u float64) float64 {
	if u < 1e-9 {
		return 1
	}
	return -math.Expm1(-u) / u
}
