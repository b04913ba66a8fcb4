package modelio

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast/models/eiger"
	"github.com/tracecast/tracecast/models/starpudir"
)

// TaskFit are fit-model's options: which columns, and Eiger's.
type TaskFit struct {
	Target string `flag:"target" help:"column to model (duration_s, energy_j, ...)"`
	// GroupBy is nil for the default (codelet and worker kind for a
	// tracecast tasks file, one model otherwise); {"none"}: one model.
	GroupBy []string `flag:"group" list:"comma" help:"columns whose values group the rows, one model per group (default for tasks: codelet,worker_kind; none: one model)"`
	// Inputs restricts the inputs (default: the tasks' parameters, or
	// every numeric column).
	Inputs []string `flag:"inputs" list:"comma" help:"comma-separated input columns (default: the tasks' parameters, or every numeric column)"`
	// SizeColumn is the data size of StarPU's a·size^b + c baseline, used
	// when the table has it.
	SizeColumn string  `flag:"size-column" help:"data size for StarPU's a·size^b + c baseline"`
	Threshold  float64 `flag:"threshold" help:"least gain in adjusted R² for a regressor to enter the model"`
	Clusters   int     `flag:"clusters" help:"k of k-means: models per group"`
	PCA        bool    `flag:"pca" help:"fit on the principal components (of non-zero variance) instead of the inputs"`
	Folds      int     `flag:"folds" help:"folds of the cross-validation (0: none)"`
	Seed       uint64  `flag:"seed" help:"seed of k-means++ and of the folds"`
	// MaxFactors > 0: products of up to that many factors (eiger.Products)
	// instead of Table 1's pool; 0: 4 for StarPU's measurements, Table 1
	// for other tables (Resolve).
	MaxFactors int `flag:"max-factors" help:"terms are products of up to this many factors x or log2(x) (M^2*N, N^3*K, N*log2(N); with --regressors, of those functions), and x^-2, x^-1, x^-0.5, x^0.5 alone; at most 4; 0: 4 for StarPU measurements, else Table 1's pool"`
	// Select is the selection's criterion: adj-r2, held-out, or "" (held
	// out with products, adjusted R² with Table 1's pool).
	Select string `flag:"select" help:"how terms are chosen: adj-r2 (Algorithm 1) or held-out (held-out parameter combinations; default with products)"`
	// Pool restricts the regressors (nil: all); Check sets it.
	Pool []eiger.Func
	// Resolve sets these from the options and the input.
	maxFactors   int
	sel          eiger.Selection
	foldByInputs bool
}

// DefaultTaskFit are fit-model's defaults.
func DefaultTaskFit() TaskFit {
	return TaskFit{SizeColumn: "Size", Threshold: eiger.DefaultThreshold, Clusters: 1, Folds: 5, Seed: 1}
}

// Check validates the options and sets Pool from regressors (pool
// function names, comma-separated; "": all).
func (o *TaskFit) Check(regressors string) error {
	switch {
	case o.Clusters < 1:
		return fmt.Errorf("--clusters must be at least 1")
	case o.Folds < 0 || o.Folds == 1:
		return fmt.Errorf("--folds must be 0 (none) or at least 2")
	case !(o.Threshold >= 0):
		return fmt.Errorf("--threshold must not be negative")
	case o.MaxFactors < 0 || o.MaxFactors > eiger.MaxFactors:
		return fmt.Errorf("--max-factors must be from 0 to %d", eiger.MaxFactors)
	}
	if _, err := eiger.ParseSelection(o.Select); err != nil {
		return fmt.Errorf("--select: %w", err)
	}
	if strings.TrimSpace(regressors) == "" {
		o.Pool = nil
		return nil
	}
	var err error
	o.Pool, err = eiger.ParsePool(regressors)
	return err
}

// CheckSources validates what fit-model is given to fit: a file, or
// StarPU's sampling directory (whose models are per codelet and arch, of
// every parameter, with the duration as target), not both; writeBack
// needs the directory.
func (o *TaskFit) CheckSources(file, starpuDir string, writeBack bool) error {
	switch {
	case starpuDir != "" && file != "":
		return errors.New("give a FILE or --starpu-dir, not both")
	case starpuDir != "":
		if o.Target != "" && o.Target != starpudir.DurationColumn {
			return fmt.Errorf("--target %s: with --starpu-dir the target is %s", o.Target, starpudir.DurationColumn)
		}
		if o.GroupBy != nil || o.Inputs != nil {
			return errors.New("--group and --inputs: with --starpu-dir the models are per codelet and arch, of every parameter (or of the data size)")
		}
	case file == "":
		return errors.New("give a FILE to fit, or --starpu-dir DIR")
	case writeBack:
		return errors.New("--write-back needs --starpu-dir (the model files to write are there)")
	case o.Target == "" && !IsStarPURaw(file):
		return errors.New("--target is required")
	}
	return nil
}

// FitTaskFile reads a task table (tasks JSON lines, Arrow, any CSV with a
// header row, or a StarPU raw measurement file) and fits one Eiger model
// per group.
func FitTaskFile(path string, o TaskFit) (*eiger.File, error) {
	t, err := ReadTaskTable(path)
	if err != nil {
		return nil, err
	}
	if err := o.Resolve(t.StarPURaw); err != nil {
		return nil, err
	}
	if o.Target == "" {
		return nil, fmt.Errorf("%s: no target column given", path)
	}
	spec := o.spec()
	for _, in := range o.Inputs {
		spec.Inputs = append(spec.Inputs, strings.TrimSpace(in))
	}
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

// TaskQuery is predict-task's question, as its flags give it: the model
// file, the task's group and its parameters.
type TaskQuery struct {
	Model      string   `flag:"model" help:"model file written by fit-model -o"`
	Codelet    string   `flag:"codelet" help:"the task's codelet (group column codelet)"`
	WorkerKind string   `flag:"worker-kind" help:"the worker kind (group column worker_kind), e.g. CPU"`
	Arch       string   `flag:"arch" help:"StarPU's arch (group column arch of fit-model --starpu-dir), e.g. cpu0_impl0"`
	Keys       []string `flag:"key" help:"COLUMN=VALUE of another group column (repeatable)"`
	Params     []string `flag:"param" help:"NAME=VALUE: a parameter of the task (repeatable)"`
}

// QueryError is a question that is not well formed: a usage error.
type QueryError struct{ Msg string }

func (e *QueryError) Error() string { return e.Msg }

// Predict reads the model file and evaluates it for the task (PredictTask).
func (q TaskQuery) Predict() (TaskPrediction, error) {
	bad := func(format string, a ...any) (TaskPrediction, error) {
		return TaskPrediction{}, &QueryError{fmt.Sprintf(format, a...)}
	}
	if q.Model == "" {
		return bad("--model is required")
	}
	key, params := map[string]string{}, map[string]float64{}
	if q.Codelet != "" {
		key["codelet"] = q.Codelet
	}
	if q.WorkerKind != "" {
		key["worker_kind"] = q.WorkerKind
	}
	if q.Arch != "" {
		key["arch"] = q.Arch
	}
	for _, kv := range q.Keys {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return bad("--key %q: want COLUMN=VALUE", kv)
		}
		key[k] = v
	}
	for _, kv := range q.Params {
		k, v, ok := strings.Cut(kv, "=")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || k == "" || err != nil {
			return bad("--param %q: want NAME=NUMBER", kv)
		}
		params[k] = x
	}
	f, err := ReadTaskModel(q.Model)
	if err != nil {
		return TaskPrediction{}, err
	}
	for _, col := range f.GroupBy {
		if _, ok := key[col]; !ok {
			flag := map[string]string{"codelet": "--codelet", "worker_kind": "--worker-kind", "arch": "--arch"}[col]
			return bad("the models are per %s: give %s", strings.Join(f.GroupBy, ", "), cmp.Or(flag, "--key "+col+"=VALUE"))
		}
	}
	return PredictTask(f, key, params)
}

// PredictTask evaluates the model of the group key names at params, in
// the cluster nearest to them. A group column missing, a parameter missing,
// a value outside a term's domain and a negative prediction (a duration
// or an energy below 0: the model does not hold there) are errors.
func PredictTask(f *eiger.File, key map[string]string, params map[string]float64) (TaskPrediction, error) {
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
