package modelio

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracecast/tracecast/models/eiger"
)

// TaskFit says which columns of a task table fit-model uses.
type TaskFit struct {
	Target string
	// GroupBy is nil for the default (codelet and worker kind for a
	// tracecast tasks file, one model otherwise); {"none"}: one model.
	GroupBy []string
	// Inputs restricts the inputs (default: the tasks' parameters, or
	// every numeric column).
	Inputs []string
	// SizeColumn is the data size of StarPU's a·size^b + c baseline, used
	// when the table has it.
	SizeColumn string
	Options    eiger.Options
	Folds      int
}

// FitTaskFile reads a task table (tasks JSON lines, Arrow, or any CSV with
// a header row) and fits one Eiger model per group.
func FitTaskFile(path string, o TaskFit) (*eiger.File, error) {
	t, err := ReadTaskTable(path)
	if err != nil {
		return nil, err
	}
	spec := eiger.Spec{Target: o.Target, Options: o.Options, Folds: o.Folds, Inputs: o.Inputs}
	isTasks := len(t.Params) > 0
	switch {
	case len(o.GroupBy) == 1 && o.GroupBy[0] == "none":
	case o.GroupBy != nil:
		spec.GroupBy = o.GroupBy
	case isTasks:
		spec.GroupBy = []string{"codelet", "worker_kind"}
	}
	for _, col := range append([]string{o.Target}, spec.Inputs...) {
		if msg, ok := t.NotNumeric[col]; ok {
			return nil, fmt.Errorf("%s", msg)
		}
	}
	if _, ok := t.Num[o.SizeColumn]; ok {
		spec.SizeColumn = o.SizeColumn
	}
	if _, ok := t.Text["footprint"]; ok && isTasks {
		spec.FootprintColumn = "footprint"
	}
	return eiger.FitGroups(t.Table, spec)
}

// TaskPrediction is predict-task's answer.
type TaskPrediction struct {
	Group   string
	Target  string
	Value   float64
	Cluster int
	Model   *eiger.Cluster
	// Unused are the parameters given that the model does not use.
	Unused []string
}

// MissingKeyError says which group column a prediction needs.
type MissingKeyError struct {
	Column  string
	GroupBy []string
}

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("the models are per %s: give the %s", strings.Join(e.GroupBy, ", "), e.Column)
}

// PredictTask evaluates the model of the group key names (every group
// column) at params, in the cluster nearest to them. A parameter missing,
// a value outside a term's domain and a negative prediction (a duration
// or an energy below 0: the model does not hold there) are errors.
func PredictTask(f *eiger.File, key map[string]string, params map[string]float64) (TaskPrediction, error) {
	for _, col := range f.GroupBy {
		if _, ok := key[col]; !ok {
			return TaskPrediction{}, &MissingKeyError{Column: col, GroupBy: f.GroupBy}
		}
	}
	g, err := f.Find(key)
	if err != nil {
		return TaskPrediction{}, err
	}
	if g.Model == nil {
		return TaskPrediction{}, fmt.Errorf("group %s has no model: %s", g.Name, g.Error)
	}
	v, cluster, err := g.Model.Predict(params)
	if err != nil {
		return TaskPrediction{}, fmt.Errorf("group %s: %w", g.Name, err)
	}
	if v < 0 {
		return TaskPrediction{}, fmt.Errorf("group %s: the model predicts %s = %g, below 0: it does not hold for these parameters", g.Name, f.Target, v)
	}
	p := TaskPrediction{Group: g.Name, Target: f.Target, Value: v, Cluster: cluster, Model: &g.Model.Clusters[cluster]}
	for k := range params {
		if !slices.Contains(g.Model.Required(), k) {
			p.Unused = append(p.Unused, k)
		}
	}
	slices.Sort(p.Unused)
	return p, nil
}
