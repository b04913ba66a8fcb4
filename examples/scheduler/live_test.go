package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/app/specs"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/pipelines"
	stage "github.com/tracecast/tracecast/stages/backfill"
)

// pythonWithKafka is a python3 that imports confluent_kafka (Debian's
// python3-confluent-kafka installs it for /usr/bin/python3, which need
// not be the python3 first on the PATH), or "".
func pythonWithKafka() string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import confluent_kafka").Run() == nil {
			return py
		}
	}
	return ""
}

// TestSchedulersActLive replays a StarPU trace through the live service
// (Kafka in, the backfill stage, its plans out to tracecast.plans), runs
// the Go scheduler and the Python one on the plans topic, and checks that
// each publishes exactly the decisions `tracecast backfill --policy
// forecast` makes on the file.
func TestSchedulersActLive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker, the live pipeline and two schedulers (make test runs it without -short)")
	}
	py := pythonWithKafka()
	if py == "" {
		t.Fatal("no python3 imports confluent_kafka: install Debian's python3-confluent-kafka (make deps does)")
	}
	const path = "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"
	o := specs.Backfill{Rules: "auto", Tasks: []float64{0.001, 0.01}, Mode: "wait", Alphas: []float64{10}, Policies: []string{"forecast"},
		RunID: "cholesky", Out: t.TempDir()}
	tr := specs.DefaultTrace()
	tr.Path = path
	r := specs.Runner{Log: zerolog.Nop()}
	if _, err := r.Backfill(t.Context(), tr, o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(o.Out, "decisions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := tasksOf(t, b)
	if len(want) < 100 {
		t.Fatalf("only %d offline decisions", len(want))
	}
	survey := stage.NewSurvey("auto", "")
	spec := pipelines.Spec{Name: "survey", Sources: []pipelines.Node{tr.Source()},
		Sinks: []pipelines.Node{{ID: "survey", Type: "survey", Inputs: []string{"trace"}}}}
	if err := r.Run(t.Context(), spec, map[string]tracecast.Sink{"survey": survey}); err != nil {
		t.Fatal(err)
	}

	addr := kafkatest.Start(t, 2, "traces", "tracecast.plans", "tracecast.decisions", "tracecast.decisions.py")
	publish(t, addr, path)
	yaml := fmt.Sprintf(`version: 1
name: live-backfill
settings: {status_interval: 0s}
sources:
  traces: {type: kafka, brokers: [%[1]q], topic: traces, group: bf, session_timeout: 2s, parser: {type: paje, time_unit: ms}}
stages:
  bf: {type: backfill, inputs: [traces], tasks: [1ms, 10ms], mode: wait, alphas: [10], spells: [], plans: true, run_id: cholesky, workers: [%[2]s], time_unit: ms}
sinks:
  plans: {type: kafka, inputs: [bf], records: plans, brokers: [%[1]q], topic: tracecast.plans}
`, addr, strings.Join(survey.Workers, ", "))
	cfg, err := pipelines.Parse([]byte(yaml), "live-backfill.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 3)
	go func() { done <- pipelines.Run(ctx, cfg, pipelines.RunOptions{Registry: builtin.Registry()}) }()
	go func() {
		done <- fromKafka(ctx, []string{addr}, "go-scheduler", "tracecast.plans", "tracecast.decisions", 1)
	}()
	pyOut := &bytes.Buffer{}
	cmd := exec.CommandContext(ctx, py, "backfill.py", "--brokers", addr, "--group", "py-scheduler", "--decisions", "tracecast.decisions.py", "--runs", "1")
	cmd.Stdout, cmd.Stderr = pyOut, pyOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	goDone := make(chan error, 1)
	go func() { goDone <- cmd.Wait() }()

	for name, topic := range map[string]string{"go": "tracecast.decisions", "python": "tracecast.decisions.py"} {
		got, _ := kafkatest.ReadRecords(t, addr, topic, "tracecast.decision/1", len(want), 90*time.Second)
		var lines []string
		for _, v := range got {
			lines = append(lines, v)
		}
		t.Run(name, func(t *testing.T) { compareTasks(t, tasksOf(t, []byte(strings.Join(lines, "\n"))), want) })
	}
	if err := <-goDone; err != nil {
		t.Errorf("backfill.py: %v\n%s", err, pyOut)
	}
	cancel()
	for range 2 {
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	}
	t.Logf("%d decisions, offline and from each scheduler", len(want))
}

// publish writes a trace to the topic "traces" as the trace's producer
// does, 50 lines a message, and its end.
func publish(t *testing.T, addr, path string) {
	t.Helper()
	data := gziptest.ReadFile(t, path)
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "traces", Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond, RequiredAcks: kafkago.RequireAll}
	defer w.Close()
	p := &kafkaingest.Producer{W: w, Trace: "cholesky", LinesPerMessage: 50}
	var ls []tracecast.Line
	for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		ls = append(ls, tracecast.Line{Data: l})
	}
	if err := p.Lines(t.Context(), ls); err != nil {
		t.Fatal(err)
	}
	if err := p.End(t.Context()); err != nil {
		t.Fatal(err)
	}
}
