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
	ID string `json:"id" desc:"RUN/JOB_ID"`
	// Run names the run: the trace's stream (its path, or its trace id on
	// Kafka).
	Run     string `json:"run" desc:"the run: the trace's stream (its path, or its trace id on Kafka)"`
	Codelet string `json:"codelet" desc:"the task's codelet (the worker state's value)"`
	// Worker is the worker container ("CPU0"); WorkerKind its kind, the
	// name without its number ("CPU", "CUDA", "OpenCL").
	Worker     string `json:"worker" desc:"the worker container (CPU0)"`
	WorkerKind string `json:"worker_kind" desc:"the worker's kind: its name without its number (CPU, CUDA)"`
	// JobID and Footprint identify the task and its data-size class
	// (StarPU's JobId and Footprint; "" when the trace has none).
	JobID     string  `json:"job_id" tracecast:"jsonnull" desc:"StarPU's JobId; null when the trace has none"`
	Footprint string  `json:"footprint" tracecast:"jsonnull" desc:"StarPU's Footprint (the data-size class); null when the trace has none"`
	StartS    float64 `json:"start_s" desc:"start, seconds on the trace's clock"`
	DurationS float64 `json:"duration_s" desc:"duration in seconds" schema:"minimum=0"`
	// EnergyJ is the task's share of its node's energy while it ran (the
	// energy stage's attribution: each of the node's workers gets an equal
	// share at every instant); null without a power stream, or when the
	// stream does not cover the whole task.
	EnergyJ *float64 `json:"energy_j" desc:"the task's share of its node's energy while it ran; null without a power stream or when it does not cover the task"`
	// Params are the task's numeric parameters: Size, the fields of Params
	// (h0_nx, h0_ny, h0_elemsize for the first handle, ...) and every other
	// extra field holding a decimal number. Arrow: a JSON object (utf8).
	Params map[string]float64 `json:"params" desc:"the task's numeric parameters (Size, the fields of Params, other numeric extra fields)"`
	// PredictedDurationS and PredictedEnergyJ are a task model's
	// predictions (the taskmodel stage); null when no model applies.
	PredictedDurationS *float64 `json:"predicted_duration_s" desc:"a task model's predicted duration; null when no model applies"`
	PredictedEnergyJ   *float64 `json:"predicted_energy_j" desc:"a task model's predicted energy; null when no model applies"`
}

// TaskModel (tracecast.taskmodel/1) is one group's model of a task metric
// (Eiger's construction, tracecast fit-model), as published for
// schedulers: Group names the group ("GEMM/CPU"), Target the metric the
// model predicts ("duration_s"), N the measurements it was fitted on,
// Model the group's model as in the model file (clusters, terms, weights,
// adjusted R²; JSON). ID is "TARGET/GROUP", for consumers that keep the
// latest model per id.
type TaskModel struct {
	ID        string          `json:"id" desc:"TARGET/GROUP"`
	Group     string          `json:"group" desc:"the group: codelet and worker kind (GEMM/CPU)"`
	Target    string          `json:"target" desc:"the metric the model predicts (duration_s, energy_j)"`
	N         int             `json:"n" desc:"the measurements the model was fitted on" schema:"minimum=0"`
	Model     json.RawMessage `json:"model" desc:"the group's model as in the model file (clusters, terms, weights, adjusted R²)"`
	EmittedAt time.Time       `json:"emitted_at" desc:"when the record was produced (RFC 3339, UTC); null when unknown"`
}

// appendOptF writes a nil pointer as null.
func appendOptF(b []byte, k string, v *float64) []byte {
	if v == nil {
		return appendNull(b, k)
	}
	return appendF(b, k, *v)
}

// appendFloatMap writes m as a JSON object with its keys sorted (the
// output does not depend on map order), nil as null.
func appendFloatMap(b []byte, k string, m map[string]float64) []byte {
	b = appendKey(b, k)
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
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
		b = AppendJSONNumber(b, m[k])
	}
	return append(b, '}')
}
