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
// seed 000's prediction from the per-state powers, given or fitted. Its
// JSON form is model.json.
type Energy struct {
	Nodes []NodeEnergy `json:"nodes"`
	// Powers are the given (--params) or fitted per-state powers.
	Powers models.StatePowers `json:"powers"`
	Source string             `json:"source"` // "params" or "fit"; "" when the fit failed
	Fit    *models.StateFit   `json:"fit,omitempty"`
	FitErr string             `json:"fit_error,omitempty"`
	// Measured and Predicted are over all nodes, in joules.
	Measured   float64 `json:"measured_j"`
	Predicted  float64 `json:"predicted_j"`
	Inaccuracy float64 `json:"inaccuracy"`
	// RunS is the longest node run; EDP = Measured·RunS.
	RunS float64 `json:"run_s"`
	EDP  float64 `json:"edp_js"`
	// IdleFraction is seed 003's s: idle-power energy over total energy.
	IdleFraction float64 `json:"idle_fraction"`

	// res is what the report was built from: the table, the files and the
	// plots show its windows, totals, gaps and timelines.
	res *energy.Result
}

// NodeEnergy is one node's line of the report.
type NodeEnergy struct {
	Node       string           `json:"node"`
	Workers    int              `json:"workers"`
	RunS       float64          `json:"run_s"`
	CoveredS   float64          `json:"covered_s"`
	Measured   float64          `json:"measured_j"`
	Predicted  float64          `json:"predicted_j"`
	Inaccuracy float64          `json:"inaccuracy"`
	Occupancy  models.Occupancy `json:"occupancy"`
}

// NewEnergy builds the report of an energy stage's result. With params the
// per-state powers are those; without, they are fitted by least squares
// over the result's windows, and a failed fit is reported (FitErr), not
// returned: the measured energies stand without a model.
func NewEnergy(res *energy.Result, params *models.StatePowers) *Energy {
	rep := &Energy{res: res}
	if params != nil {
		rep.Powers, rep.Source = *params, "params"
	} else {
		fit, err := energy.FitStatePowers(res.Windows, MinFitCover)
		if err != nil {
			rep.FitErr = err.Error()
		} else {
			rep.Powers, rep.Source, rep.Fit = fit.Powers, "fit", &fit
		}
	}
	var idleE float64
	for _, t := range res.Totals {
		o := t.ModelOccupancy()
		nr := NodeEnergy{Node: t.Node, Workers: res.Timelines[t.Node].R, RunS: t.End - t.Start, CoveredS: t.Covered,
			Measured: t.EnergyJ, Occupancy: o}
		if rep.Source != "" {
			nr.Predicted = models.NodeEnergy(rep.Powers, o)
			nr.Inaccuracy = models.Inaccuracy(nr.Predicted, nr.Measured)
		}
		rep.Nodes = append(rep.Nodes, nr)
		rep.Measured += nr.Measured
		rep.Predicted += nr.Predicted
		rep.RunS = math.Max(rep.RunS, nr.RunS)
		idleE += rep.Powers.Idle * t.Covered
	}
	if rep.Source != "" && rep.Measured > 0 {
		rep.Inaccuracy = models.Inaccuracy(rep.Predicted, rep.Measured)
		rep.IdleFraction = idleE / rep.Measured
	}
	rep.EDP = models.EDP(rep.Measured, rep.RunS)
	return rep
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
		fmt.Fprintf(ew, "late samples dropped: %d\n", res.Stats.Late)
	}
	switch r.Source {
	case "":
		fmt.Fprintf(ew, "per-state powers: not fitted (%s); give --params\n", r.FitErr)
	default:
		p := r.Powers
		fmt.Fprintf(ew, "per-state powers (%s): idle %.3f W, app %.3f W, storage %.3f W, net %.3f W", r.Source, p.Idle, p.App, p.Storage, p.Net)
		if r.Fit != nil {
			fmt.Fprintf(ew, " (R² %.6f over %d windows", r.Fit.Stats.R2, r.Fit.Stats.N)
			if r.Fit.Stats.R2 < PoorFitR2 {
				fmt.Fprint(ew, "; POOR FIT: power does not follow the states, or windows are too few")
			}
			if !r.Fit.Fitted.Storage || !r.Fit.Fitted.Net {
				fmt.Fprint(ew, "; states never occupied are reported at idle power")
			}
			fmt.Fprint(ew, ")")
		}
		fmt.Fprintln(ew)
		fmt.Fprintf(ew, "seed 000 model: predicted %.3f J, measured %.3f J, inaccuracy %.4f%%; EDP %.4g J·s; idle fraction %.3f\n",
			r.Predicted, r.Measured, r.Inaccuracy*100, r.EDP, r.IdleFraction)
	}
	return ew.err
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
