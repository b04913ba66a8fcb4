package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/tracecast/tracecast/models"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/signal"
)

// MinFitCover is the least fraction of a window that must be integrated
// for the window to be an observation of the per-state power fit: a window
// cut by a gap or by the run's ends would weigh its few seconds like a
// full one.
const MinFitCover = 0.99

// PoorFitR2 is the R² under which the report warns that the fitted powers
// do not explain the windows.
const PoorFitR2 = 0.9

// Energy is the energy report of a run: per node, the measured energy and
// Yang et al. (2014)'s prediction from the per-state powers, given or fitted. Its
// JSON form is model.json. What the model could not say is null with the
// reason beside it (fit_error, idle_fraction_error), never a number that
// means nothing: the measured energies stand without a model.
type Energy struct {
	Nodes []NodeEnergy `json:"nodes"`
	// Powers are the given (--params) or fitted per-state powers; null
	// when there is no model.
	Powers *models.StatePowers `json:"powers"`
	Source string              `json:"source"` // "params" or "fit"; "" when there is no model
	Fit    *models.StateFit    `json:"fit,omitempty"`
	// FitErr says why there is no model: the fit failed or was refused
	// (models.ErrImplausible), or the powers' prediction was.
	FitErr string `json:"fit_error,omitempty"`
	// Measured and Predicted are over all nodes, in joules.
	Measured   float64  `json:"measured_j"`
	Predicted  *float64 `json:"predicted_j"`
	Inaccuracy *float64 `json:"inaccuracy"`
	// RunS is the longest node run; EDP = Measured·RunS.
	RunS float64 `json:"run_s"`
	EDP  float64 `json:"edp_js"`
	// IdleFraction is Anger's (2016) s: idle-power energy over total energy.
	// Null, with IdleFractionErr, when the idle power exceeds the run's
	// mean power: s would be above 1, the dynamic energy negative.
	IdleFraction    *float64 `json:"idle_fraction"`
	IdleFractionErr string   `json:"idle_fraction_error,omitempty"`
	// Warnings are the join's (energy.Result.Warnings).
	Warnings []string `json:"warnings,omitempty"`

	// res is what the report was built from: the table, the files and the
	// plots show its windows, totals, gaps and timelines.
	res *energy.Result
}

// NodeEnergy is one node's line of the report. Predicted and Inaccuracy
// are null without a model, Inaccuracy also for a node without energy.
type NodeEnergy struct {
	Node       string           `json:"node"`
	Workers    int              `json:"workers"`
	RunS       float64          `json:"run_s"`
	CoveredS   float64          `json:"covered_s"`
	Measured   float64          `json:"measured_j"`
	Predicted  *float64         `json:"predicted_j"`
	Inaccuracy *float64         `json:"inaccuracy"`
	Occupancy  models.Occupancy `json:"occupancy"`
}

// NewEnergy builds the report of an energy stage's result. With params the
// per-state powers are those (checked: models.StatePowers.Validate); without,
// they are fitted by least squares over the result's windows. A model
// that fails — no fit, implausible fitted powers (a negative power, a
// state below idle), a fitted idle power above the run's mean power, a
// negative prediction — is reported (FitErr), not returned: the measured
// energies stand without a model.
func NewEnergy(res *energy.Result, params *models.StatePowers) *Energy {
	rep := &Energy{res: res, Warnings: res.Warnings}
	var powers models.StatePowers
	if params != nil {
		if err := params.Validate(); err != nil {
			rep.FitErr = err.Error()
		} else {
			powers, rep.Source = *params, "params"
		}
	} else {
		fit, err := energy.FitStatePowers(res.Windows, MinFitCover)
		if err != nil {
			rep.FitErr = err.Error()
		} else {
			powers, rep.Source, rep.Fit = fit.Powers, "fit", &fit
		}
	}
	var idleE, predicted, covered float64
	for _, t := range res.Totals {
		o := t.ModelOccupancy()
		nr := NodeEnergy{Node: t.Node, Workers: res.Timelines[t.Node].R, RunS: t.End - t.Start, CoveredS: t.Covered,
			Measured: t.EnergyJ, Occupancy: o}
		if rep.Source != "" {
			p := models.NodeEnergy(powers, o)
			nr.Predicted = &p
			predicted += p
			if nr.Measured > 0 {
				in := models.Inaccuracy(p, nr.Measured)
				nr.Inaccuracy = &in
			}
		}
		rep.Nodes = append(rep.Nodes, nr)
		rep.Measured += nr.Measured
		rep.RunS = math.Max(rep.RunS, nr.RunS)
		idleE += powers.Idle * t.Covered
		covered += t.Covered
	}
	rep.EDP = models.EDP(rep.Measured, rep.RunS)
	if rep.Source == "" {
		return rep
	}
	if err := rep.plausible(powers, predicted, idleE, covered); err != nil {
		// Not a model: drop what it predicted.
		rep.FitErr, rep.Source, rep.Fit = err.Error(), "", nil
		for i := range rep.Nodes {
			rep.Nodes[i].Predicted, rep.Nodes[i].Inaccuracy = nil, nil
		}
		return rep
	}
	rep.Powers, rep.Predicted = &powers, &predicted
	if rep.Measured > 0 {
		in := models.Inaccuracy(predicted, rep.Measured)
		rep.Inaccuracy = &in
		if s := idleE / rep.Measured; s <= 1 {
			rep.IdleFraction = &s
		} else {
			rep.IdleFractionErr = fmt.Sprintf("the idle power %.4g W is above the run's mean power %.4g W: the idle fraction would be %.4g, above 1",
				powers.Idle, rep.Measured/covered, s)
		}
	}
	return rep
}

// plausible refuses a model whose prediction is no energy (negative, NaN,
// or infinite: finite powers of 1e308 W overflow), and a fitted
// idle power above the run's mean power (given powers may be a poor model
// of the run, which the inaccuracy says; fitted ones that put idle above
// the mean explain nothing).
func (r *Energy) plausible(p models.StatePowers, predicted, idleE, covered float64) error {
	if predicted < 0 || math.IsNaN(predicted) || math.IsInf(predicted, 0) {
		return fmt.Errorf("%w prediction: %.4g J from the %s powers (idle %g W, app %g W, storage %g W, net %g W)",
			models.ErrImplausible, predicted, r.Source, p.Idle, p.App, p.Storage, p.Net)
	}
	if r.Source == "fit" && r.Measured > 0 && idleE > r.Measured {
		return fmt.Errorf("%w fit: the fitted idle power %.4g W is above the run's mean power %.4g W (idle fraction %.4g > 1): "+
			"the power does not follow the states, or the windows are too few", models.ErrImplausible, p.Idle, r.Measured/covered, idleE/r.Measured)
	}
	return nil
}

// Result is the energy stage's result the report was built from.
func (r *Energy) Result() *energy.Result { return r.res }

// WriteText writes the report as the terminal shows it: per node and class
// the energy, its share and the occupancy, then each node's run, the gaps
// and late samples, and the model's powers and prediction.
func (r *Energy) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	res := r.res
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
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
	for _, nr := range r.Nodes {
		// The floor keeps a node never covered at 0 W instead of NaN.
		fmt.Fprintf(ew, "%s: %d workers, run %.4f s, covered %.4f s, mean power %.2f W\n", nr.Node, nr.Workers, nr.RunS, nr.CoveredS, nr.Measured/math.Max(nr.CoveredS, 1e-300))
	}
	if len(res.Gaps) > 0 {
		fmt.Fprintf(ew, "gaps: %d, %.4f s not integrated (first: %s %.4f–%.4f s)\n", len(res.Gaps), res.Stats.GapS, res.Gaps[0].Node, res.Gaps[0].Start, res.Gaps[0].End)
	}
	if res.Stats.Late > 0 {
		// Say how many and why: an unsorted file loses half its samples
		// this way, and a bare count reads like a detail.
		fmt.Fprintf(ew, "late samples dropped: %d of %d (%.1f%%): behind a later sample of their node by more than --lateness, or at its time; sort the stream or raise --lateness\n",
			res.Stats.Late, res.Stats.Samples, 100*float64(res.Stats.Late)/math.Max(float64(res.Stats.Samples), 1))
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(ew, "warning: %s\n", w)
	}
	if r.Source == "" {
		fmt.Fprintf(ew, "per-state powers: no model (%s); give --params, or a shorter --window for more windows to fit\n", r.FitErr)
		return ew.err
	}
	p := r.Powers
	fmt.Fprintf(ew, "per-state powers (%s): idle %.3f W, app %.3f W, storage %.3f W, net %.3f W", r.Source, p.Idle, p.App, p.Storage, p.Net)
	if r.Fit != nil {
		if st := r.Fit.Stats; st.R2 == nil {
			fmt.Fprintf(ew, " (R² n/a over %d windows: %s", st.N, st.R2Error)
		} else {
			fmt.Fprintf(ew, " (R² %.6f over %d windows", *st.R2, st.N)
		}
		if r.Fit.Stats.R2 == nil || *r.Fit.Stats.R2 < PoorFitR2 {
			fmt.Fprint(ew, "; POOR FIT: power does not follow the states, or windows are too few")
		}
		if !r.Fit.Fitted.Storage || !r.Fit.Fitted.Net {
			fmt.Fprint(ew, "; states never occupied are reported at idle power")
		}
		fmt.Fprint(ew, ")")
	}
	fmt.Fprintln(ew)
	fmt.Fprintf(ew, "per-state power model: predicted %.3f J, measured %.3f J, inaccuracy %s; EDP %.4g J·s; idle fraction %s\n",
		*r.Predicted, r.Measured, optPct(r.Inaccuracy), r.EDP, optFrac(r.IdleFraction, r.IdleFractionErr))
	return ew.err
}

// optPct prints a fraction as a percentage, or n/a.
func optPct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f%%", *v*100)
}

// optFrac prints a fraction, or n/a with the reason.
func optFrac(v *float64, why string) string {
	if v == nil {
		return "n/a (" + why + ")"
	}
	return fmt.Sprintf("%.3f", *v)
}

// errWriter keeps the first write error, so that the many formatted writes
// of a report are checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
