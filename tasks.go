package tracecast

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Task (a tasks stage's record, tracecast.task/1) is one task a run
// executed: a worker state carrying the runtime's task fields (StarPU's
// Size, Params, Footprint, JobId, ... extra fields), with its parameters as
// numbers. Times are seconds, whatever the trace's unit.
type Task struct {
	// ID is RUN/JOB_ID: deterministic, for consumers that de-duplicate
	// what an at-least-once delivery may repeat.
	ID string `json:"id"`
	// Run names the run: the trace's stream (its path, or its trace id on
	// Kafka).
	Run     string `json:"run"`
	Codelet string `json:"codelet"`
	// Worker is the worker container ("CPU0"); WorkerKind its kind, the
	// name without its number ("CPU", "CUDA", "OpenCL").
	Worker     string `json:"worker"`
	WorkerKind string `json:"worker_kind"`
	// JobID and Footprint identify the task and its data-size class
	// (StarPU's JobId and Footprint; "" when the trace has none).
	JobID     string  `json:"job_id"`
	Footprint string  `json:"footprint"`
	StartS    float64 `json:"start_s"`
	DurationS float64 `json:"duration_s"`
	// EnergyJ is the task's share of its node's energy while it ran (the
	// energy stage's attribution: each of the node's workers gets an equal
	// share at every instant); null without a power stream, or when the
	// stream does not cover the whole task.
	EnergyJ *float64 `json:"energy_j"`
	// Params are the task's numeric parameters: Size, the fields of Params
	// (h0_nx, h0_ny, h0_elemsize for the first handle, ...) and every other
	// extra field holding a decimal number. Arrow: a JSON object (utf8).
	Params map[string]float64 `json:"params"`
	// PredictedDurationS and PredictedEnergyJ are a task model's
	// predictions (the taskmodel stage); null when no model applies.
	PredictedDurationS *float64 `json:"predicted_duration_s"`
	PredictedEnergyJ   *float64 `json:"predicted_energy_j"`
}

// TaskModel (tracecast.taskmodel/1) is one group's model of a task metric
// (Eiger's construction, tracecast fit-model), as published for
// schedulers: Group names the group ("GEMM/CPU"), Target the metric the
// model predicts ("duration_s"), N the measurements it was fitted on,
// Model the group's model as in the model file (clusters, terms, weights,
// adjusted R²; JSON). ID is "TARGET/GROUP", for consumers that keep the
// latest model per id.
type TaskModel struct {
	ID        string          `json:"id"`
	Group     string          `json:"group"`
	Target    string          `json:"target"`
	N         int             `json:"n"`
	Model     json.RawMessage `json:"model"`
	EmittedAt time.Time       `json:"emitted_at"`
}

// AppendJSON writes the task as one JSON object, "record" first; a null
// pointer is null, Params a JSON object with its keys sorted.
func (t Task) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"task"`...)
	b = appendStr(b, "id", t.ID)
	b = appendStr(b, "run", t.Run)
	b = appendStr(b, "codelet", t.Codelet)
	b = appendStr(b, "worker", t.Worker)
	b = appendStr(b, "worker_kind", t.WorkerKind)
	b = appendStrOrNull(b, "job_id", t.JobID)
	b = appendStrOrNull(b, "footprint", t.Footprint)
	b = appendF(b, "start_s", t.StartS)
	b = appendF(b, "duration_s", t.DurationS)
	b = appendOptF(b, "energy_j", t.EnergyJ)
	b = appendKey(b, "params")
	if t.Params == nil {
		b = append(b, "null"...)
	} else {
		keys := make([]string, 0, len(t.Params))
		for k := range t.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, k)
			b = append(b, ':')
			b = AppendJSONNumber(b, t.Params[k])
		}
		b = append(b, '}')
	}
	b = appendOptF(b, "predicted_duration_s", t.PredictedDurationS)
	b = appendOptF(b, "predicted_energy_j", t.PredictedEnergyJ)
	return append(b, '}')
}

// AppendJSON writes the model as one JSON object, "record" first.
func (m TaskModel) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"taskmodel"`...)
	b = appendStr(b, "id", m.ID)
	b = appendStr(b, "group", m.Group)
	b = appendStr(b, "target", m.Target)
	b = appendI64(b, "n", int64(m.N))
	b = appendKey(b, "model")
	if len(m.Model) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, m.Model...)
	}
	b = appendTime(b, "emitted_at", m.EmittedAt)
	return append(b, '}')
}

func appendOptF(b []byte, k string, v *float64) []byte {
	if v == nil {
		return appendNull(b, k)
	}
	return appendF(b, k, *v)
}
