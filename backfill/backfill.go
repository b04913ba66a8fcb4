// Package backfill decides when to put back-end tasks on idle workers and
// measures what the decisions are worth (docs/backfill.md): the decision the
// idle-capacity forecasts exist for.
//
// The Engine takes the selected workers' class changes in time order (the
// same feed offline and live), keeps their idle spells, and runs every
// policy causally on them: a policy decides at time t from the trace up to
// t. A back-end task has length d and set-up cost o. In kill mode a task
// still running when its worker's spell ends is killed (its elapsed time is
// waste W); in wait mode it completes and its overrun past the spell's end
// is the primary's delay D. The harvest U sums completed tasks' lengths.
// S(α) = U − α·W (kill) or U − α·D (wait), and the relative value
// V(α) = (S − S_ref)/(S_oracle − S_ref), S_ref the better of never (0) and
// greedy, S_oracle = U*, the oracle's ⌊L/(o+d)⌋ tasks per spell of length L.
//
// Policies: never; greedy (launch whenever a worker is idle, back to back);
// timeout τ (launch once a spell has lasted τ); online-timeout (τ the best
// on the run's completed spells so far, for the same α); residual (launch
// at elapsed x once the completed spells give P(L ≥ x+o+d | L ≥ x) ≥
// α/(1+α)); forecast (the idle-spell forecaster of package spell: launch
// when the expected score of launching now is positive); and two
// references that see the outcome: hindsight-timeout (the best τ of a grid
// for this trace) and oracle.
package backfill

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Mode says what happens to a back-end task when the primary wants its
// worker back.
type Mode string

// The two modes.
const (
	Kill Mode = "kill"
	Wait Mode = "wait"
)

// The policies, in the order tables list them.
const (
	Never            = "never"
	Greedy           = "greedy"
	Timeout          = "timeout"
	OnlineTimeout    = "online-timeout"
	Residual         = "residual"
	Forecast         = "forecast"
	HindsightTimeout = "hindsight-timeout"
	Oracle           = "oracle"
)

// Policies lists every policy name.
var Policies = []string{Never, Greedy, Timeout, OnlineTimeout, Residual, Forecast, HindsightTimeout, Oracle}

// Config sets up an Engine.
type Config struct {
	// Run names the run in every id.
	Run string
	// Tasks are the back-end task lengths d (seconds), Overhead the set-up
	// cost o (seconds).
	Tasks    []float64
	Overhead float64
	Mode     Mode
	// Gang K ≥ 2: a task needs K workers at once for its whole length; the
	// spells are those of [X ≥ K], X the idle workers (0 or 1: one worker).
	Gang int
	// Alphas are the costs of a second of waste (kill) or delay (wait) in
	// seconds of back-end work; the α-dependent policies run once per α.
	Alphas []float64
	// Policies to run (default: all); timeout needs Timeouts.
	Policies []string
	Timeouts []float64
	// Every is how often (trace seconds) an idle worker's spell forecast
	// is issued again while it stays idle (default: the shortest spell
	// length asked).
	Every float64
	// SpellLengths are the lengths d of the spell forecast records
	// (tracecast.spell/1); none: no such records.
	SpellLengths []float64
	// KeepSpells keeps every spell, for the references that need the
	// outcome (hindsight-timeout, oracle) and the table's U*: offline only.
	KeepSpells bool
}

func (c *Config) check() error {
	var errs []error
	if len(c.Tasks) == 0 && !slices.Equal(c.Policies, []string{Never}) {
		errs = append(errs, errors.New("no back-end task length (--task)"))
	}
	for _, d := range c.Tasks {
		if !(d > 0) || math.IsInf(d, 0) {
			errs = append(errs, fmt.Errorf("task length %g s: must be positive", d))
		}
	}
	if !(c.Overhead >= 0) || math.IsInf(c.Overhead, 0) {
		errs = append(errs, fmt.Errorf("overhead %g s: must be zero or positive", c.Overhead))
	}
	if c.Gang < 0 {
		errs = append(errs, fmt.Errorf("gang %d: must be positive", c.Gang))
	}
	if c.Mode != Kill && c.Mode != Wait {
		errs = append(errs, fmt.Errorf("mode %q: kill or wait", c.Mode))
	}
	if len(c.Alphas) == 0 {
		errs = append(errs, errors.New("no α (--alpha)"))
	}
	for _, a := range c.Alphas {
		if !(a > 0) || math.IsInf(a, 0) {
			errs = append(errs, fmt.Errorf("alpha %g: must be positive", a))
		}
	}
	if len(c.Policies) == 0 {
		c.Policies = Policies
	}
	for _, p := range c.Policies {
		if !slices.Contains(Policies, p) {
			errs = append(errs, fmt.Errorf("policy %q: one of %v", p, Policies))
		}
		if p == Timeout && len(c.Timeouts) == 0 && len(c.Policies) != len(Policies) {
			errs = append(errs, errors.New("policy timeout needs --timeout"))
		}
		if (p == HindsightTimeout || p == Oracle) && !c.KeepSpells {
			errs = append(errs, fmt.Errorf("policy %s sees the outcome: offline only", p))
		}
	}
	for _, t := range c.Timeouts {
		if !(t >= 0) || math.IsInf(t, 0) {
			errs = append(errs, fmt.Errorf("timeout %g s: must be zero or positive", t))
		}
	}
	for _, d := range c.SpellLengths {
		if !(d > 0) || math.IsInf(d, 0) {
			errs = append(errs, fmt.Errorf("spell length %g s: must be positive", d))
		}
	}
	if !(c.Every >= 0) || math.IsInf(c.Every, 0) {
		errs = append(errs, fmt.Errorf("every %g s: must be positive", c.Every))
	}
	if c.Every == 0 {
		c.Every = 1e-3
		if len(c.SpellLengths) > 0 {
			c.Every = math.Max(slices.Min(c.SpellLengths), 1e-6)
		}
	}
	return errors.Join(errs...)
}

// TauGrid is the grid of timeouts online-timeout and hindsight-timeout
// choose from: 0 and 10^(k/20) s from 1 µs to 1000 s (20 per decade).
var TauGrid = func() []float64 {
	g := []float64{0}
	for k := -120; k <= 60; k++ {
		g = append(g, math.Pow(10, float64(k)/20))
	}
	return g
}()

// label formats a length for ids and tables: 10ms, 500us.
func label(s float64) string {
	switch {
	case s >= 1:
		return strconv.FormatFloat(s, 'g', -1, 64) + "s"
	case s >= 1e-3:
		return strconv.FormatFloat(s*1e3, 'g', 6, 64) + "ms"
	default:
		return strconv.FormatFloat(s*1e6, 'g', 6, 64) + "us"
	}
}
