// Package taskmodel serves task models (tracecast fit-model's files, seed
// 003's Eiger models) in a pipeline: it adds each task record's predicted
// duration or energy, and publishes the models, one record per group
// (tracecast.taskmodel/1), so that a scheduler subscribed to a topic has
// both the models and the predictions.
//
// A task's group is found from its fields (codelet, worker_kind, worker,
// run, footprint: the group columns fit-model can use for task tables), its
// inputs from its parameters. A task of a group without a model, lacking a
// parameter the model needs, outside a term's domain, or for which the
// model predicts a negative value, gets no prediction (null), and is
// counted.
package taskmodel

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models/eiger"
)

// Targets a model may predict: the task record's fields.
const (
	TargetDuration = "duration_s"
	TargetEnergy   = "energy_j"
)

// taskField reads a task's value of a group column.
func taskField(t *tracecast.Task, col string) (string, bool) {
	switch col {
	case "codelet":
		return t.Codelet, true
	case "worker_kind":
		return t.WorkerKind, true
	case "worker":
		return t.Worker, true
	case "run":
		return t.Run, true
	case "footprint":
		return t.Footprint, true
	case "job_id":
		return t.JobID, true
	}
	return "", false
}

// Check says whether a model file can serve task records.
func Check(f *eiger.File) error {
	if f.Target != TargetDuration && f.Target != TargetEnergy {
		return fmt.Errorf("the model predicts %s: task records take %s or %s", f.Target, TargetDuration, TargetEnergy)
	}
	var t tracecast.Task
	for _, col := range f.GroupBy {
		if _, ok := taskField(&t, col); !ok {
			return fmt.Errorf("the models are grouped by %s, which is not a task field (codelet, worker_kind, worker, run, footprint)", col)
		}
	}
	return nil
}

// Stats count what Predictor did.
type Stats struct {
	Predicted, NoModel, Failed int
}

// Predictor adds a model file's predictions to task records.
type Predictor struct {
	f      *eiger.File
	groups map[string]*eiger.Group
	Stats  Stats
}

// NewPredictor serves the models of f (checked with Check).
func NewPredictor(f *eiger.File) (*Predictor, error) {
	if err := Check(f); err != nil {
		return nil, err
	}
	p := &Predictor{f: f, groups: map[string]*eiger.Group{}}
	for i := range f.Groups {
		g := &f.Groups[i]
		if g.Model != nil {
			p.groups[p.key(func(col string) string { return g.Key[col] })] = g
		}
	}
	return p, nil
}

func (p *Predictor) key(val func(string) string) string {
	k := ""
	for _, col := range p.f.GroupBy {
		k += val(col) + "\x00"
	}
	return k
}

// Predict sets the prediction of each task (in place).
func (p *Predictor) Predict(ts []tracecast.Task) {
	for i := range ts {
		t := &ts[i]
		g := p.groups[p.key(func(col string) string { v, _ := taskField(t, col); return v })]
		var out *float64
		switch {
		case g == nil:
			p.Stats.NoModel++
		default:
			v, _, err := g.Model.Predict(t.Params)
			if err != nil || v < 0 {
				p.Stats.Failed++
				break
			}
			out = &v
			p.Stats.Predicted++
		}
		if p.f.Target == TargetDuration {
			t.PredictedDurationS = out
		} else {
			t.PredictedEnergyJ = out
		}
	}
}

// Records are the models as records, one per group with a model.
func (p *Predictor) Records(now time.Time) ([]tracecast.TaskModel, error) {
	var out []tracecast.TaskModel
	for i := range p.f.Groups {
		g := &p.f.Groups[i]
		if g.Model == nil {
			continue
		}
		b, err := json.Marshal(struct {
			Key        map[string]string `json:"key"`
			Model      *eiger.Model      `json:"model"`
			Validation *eiger.Validation `json:"validation,omitempty"`
			StarPU     *eiger.PowerLaw   `json:"starpu_regression,omitempty"`
		}{g.Key, g.Model, g.Validation, g.StarPU})
		if err != nil {
			return nil, err
		}
		out = append(out, tracecast.TaskModel{ID: p.f.Target + "/" + g.Name, Group: g.Name, Target: p.f.Target, N: g.N,
			Model: b, EmittedAt: now.UTC()})
	}
	return out, nil
}
