package csv

import (
	"encoding/csv"
	"io"
	"slices"

	"github.com/tracecast/tracecast"
)

// TaskHeader is the fixed part of a task table's header; the parameter
// columns follow, one per parameter name, sorted.
var TaskHeader = []string{"id", "run", "codelet", "worker", "worker_kind", "job_id", "footprint", "start_s", "duration_s",
	"energy_j", "predicted_duration_s", "predicted_energy_j"}

// WriteTasks writes tasks as one wide CSV table: the fixed columns, then a
// column per parameter (the union over the tasks, sorted by name). A cell
// is empty where a task has no such parameter, or no energy or prediction.
// The whole set is needed for the header: the caller holds it.
func WriteTasks(w io.Writer, ts []tracecast.Task) error {
	seen := map[string]bool{}
	var params []string
	for i := range ts {
		for k := range ts[i].Params {
			if !seen[k] {
				seen[k] = true
				params = append(params, k)
			}
		}
	}
	slices.Sort(params)
	cw := csv.NewWriter(w)
	if err := cw.Write(append(slices.Clone(TaskHeader), params...)); err != nil {
		return err
	}
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return num(*p)
	}
	row := make([]string, len(TaskHeader)+len(params))
	for i := range ts {
		t := &ts[i]
		copy(row, []string{t.ID, t.Run, t.Codelet, t.Worker, t.WorkerKind, t.JobID, t.Footprint, num(t.StartS), num(t.DurationS),
			opt(t.EnergyJ), opt(t.PredictedDurationS), opt(t.PredictedEnergyJ)})
		for j, k := range params {
			if v, ok := t.Params[k]; ok {
				row[len(TaskHeader)+j] = num(v)
			} else {
				row[len(TaskHeader)+j] = ""
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
