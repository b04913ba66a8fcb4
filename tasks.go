package tracecast

import (
	"encoding/json"
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
