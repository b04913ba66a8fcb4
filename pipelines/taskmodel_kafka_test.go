package pipelines

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracecast/tracecast/internal/kafkatest"
)

// TestTaskModelsToKafka serves the demo trace's task models through a real
// (in-process) broker: the four per-codelet models on one topic, every task
// with its predicted duration on another, as a scheduler would read them.
func TestTaskModelsToKafka(t *testing.T) {
	addr := kafkatest.Start(t, 2, "tracecast.tasks", "tracecast.taskmodels")
	yaml := fmt.Sprintf(`version: 1
name: taskmodels
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje, user_defined: true}}
stages:
  tasks: {type: tasks, inputs: [trace]}
  predicted: {type: taskmodel, inputs: [tasks], model: %q}
sinks:
  records: {type: kafka, inputs: [predicted], records: tasks, brokers: [%q], topic: tracecast.tasks}
  models: {type: kafka, inputs: [predicted], records: taskmodels, brokers: [%q], topic: tracecast.taskmodels}
`, filepath.Join("testdata", "starpu-cholesky-2cpu.trace.gz"), filepath.Join("..", "testdata", "tasks", "cholesky-2cpu.duration.model.json"), addr, addr)
	cfg, err := Parse([]byte(yaml), "taskmodels.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(t.Context(), cfg, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	models, _ := kafkatest.ReadRecords(t, addr, "tracecast.taskmodels", "tracecast.taskmodel/1", 4, 20*time.Second)
	for _, id := range []string{"duration_s/GEMM/CPU", "duration_s/POTRF/CPU", "duration_s/SYRK/CPU", "duration_s/TRSM/CPU"} {
		var rec struct {
			Target string
			N      int
			Model  struct {
				Model struct{ Clusters []struct{ Terms []string } }
			}
		}
		if err := json.Unmarshal([]byte(models[id]), &rec); err != nil || rec.Target != "duration_s" || rec.N == 0 ||
			len(rec.Model.Model.Clusters) != 1 || rec.Model.Model.Clusters[0].Terms[0] != "1" {
			t.Errorf("model %s: %s (%v)", id, models[id], err)
		}
	}
	got, _ := kafkatest.ReadRecords(t, addr, "tracecast.tasks", "tracecast.task/1", 1540, 20*time.Second)
	if len(got) != 1540 {
		t.Fatalf("%d task records", len(got))
	}
	for _, b := range got {
		var rec struct {
			PredictedDurationS *float64 `json:"predicted_duration_s"`
			Codelet            string
		}
		if err := json.Unmarshal([]byte(b), &rec); err != nil || rec.PredictedDurationS == nil || *rec.PredictedDurationS <= 0 {
			t.Errorf("task %s: %v", b, err)
		}
	}
}
