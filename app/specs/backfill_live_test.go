package specs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/pipelines"
	stage "github.com/tracecast/tracecast/stages/backfill"
)

// TestLiveBackfillEqualsOffline publishes a StarPU trace and an SMPI run
// to Kafka, interleaved, runs the backfill stage on the topic with the
// forecast policy and the trace's workers named, and checks that the
// decisions on the output topic are exactly `tracecast backfill --policy
// forecast`'s on each file: the decisions are a function of the trace alone,
// however its lines arrive. So are the spell forecasts, idle and busy
// (tracecast.spell/2), on their own topic.
func TestLiveBackfillEqualsOffline(t *testing.T) {
	files := map[string]string{"cholesky": "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "dynfarm": "../../testdata/smpi/dynfarm-16.trace.gz"}
	r := Runner{Log: zerolog.Nop()}
	want, wantSpells := map[string]string{}, map[string]string{}
	workers := map[string][]string{}
	for id, path := range files {
		dir := t.TempDir()
		tr := DefaultTrace()
		tr.Path = path
		_, err := r.Backfill(t.Context(), tr, Backfill{Rules: "auto", Tasks: []float64{0.01}, Mode: "wait", Alphas: []float64{10},
			Policies: []string{"forecast"}, Spells: []float64{0.01}, RunID: id, Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range readLines(t, filepath.Join(dir, "decisions.jsonl")) {
			rid, b := kafkatest.Normalize(m)
			want[rid] = b
		}
		for _, m := range readLines(t, filepath.Join(dir, "spells.jsonl")) {
			rid, b := kafkatest.Normalize(m)
			wantSpells[rid] = b
		}
		s := stage.NewSurvey("auto", "")
		spec := pipelines.Spec{Name: "survey", Sources: []pipelines.Node{tr.Source()}, Sinks: []pipelines.Node{collect("survey", "trace")}}
		if err := r.Run(t.Context(), spec, map[string]tracecast.Sink{"survey": s}); err != nil {
			t.Fatal(err)
		}
		workers[id] = s.Workers
	}
	if len(want) < 100 {
		t.Fatalf("only %d offline decisions", len(want))
	}

	// A topic per run: each run's stage names its own workers.
	busy := 0
	for _, b := range wantSpells {
		if bytes.Contains([]byte(b), []byte(`"state":"busy"`)) {
			busy++
		}
	}
	if busy < 100 || len(wantSpells)-busy < 100 {
		t.Fatalf("%d busy spell forecasts offline of %d", busy, len(wantSpells))
	}
	addr := kafkatest.Start(t, 2, "traces.cholesky", "traces.dynfarm", "tracecast.decisions", "tracecast.spells")
	writers := map[string]*kafkago.Writer{}
	for id := range files {
		writers[id] = &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "traces." + id, Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond, RequiredAcks: kafkago.RequireAll}
		defer writers[id].Close()
	}
	lines := map[string][][]byte{}
	producers := map[string]*kafkaingest.Producer{}
	for id, path := range files {
		lines[id] = readTrace(t, path)
		producers[id] = &kafkaingest.Producer{W: writers[id], Trace: id, LinesPerMessage: 50}
	}
	for left := true; left; { // interleaved, 300 lines at a time, as concurrent runs are
		left = false
		for _, id := range []string{"cholesky", "dynfarm"} {
			n := min(300, len(lines[id]))
			if n == 0 {
				continue
			}
			ls := make([]tracecast.Line, n)
			for i := range ls {
				ls[i].Data = lines[id][i]
			}
			lines[id] = lines[id][n:]
			p := producers[id]
			if err := p.Lines(t.Context(), ls); err != nil {
				t.Fatal(err)
			}
			if len(lines[id]) == 0 {
				if err := p.End(t.Context()); err != nil {
					t.Fatal(err)
				}
			} else {
				left = true
			}
		}
	}
	// One stage per run (its workers named, as a scheduler knows them):
	// each reads the topic, keeps its own key.
	var stages, sinks bytes.Buffer
	for _, id := range []string{"cholesky", "dynfarm"} {
		unit := map[string]string{"cholesky": "ms", "dynfarm": "s"}[id]
		ws, _ := json.Marshal(workers[id])
		fmt.Fprintf(&stages, "  bf-%s: {type: backfill, inputs: [%s], tasks: [10ms], mode: wait, alphas: [10], policies: [forecast], spells: [10ms], run_id: %s, workers: %s, time_unit: %s}\n", id, id, id, ws, unit)
		fmt.Fprintf(&sinks, "  out-%s: {type: kafka, inputs: [bf-%s], records: decisions, brokers: [%q], topic: tracecast.decisions}\n", id, id, addr)
		fmt.Fprintf(&sinks, "  spells-%s: {type: kafka, inputs: [bf-%s], records: spells, brokers: [%q], topic: tracecast.spells}\n", id, id, addr)
	}
	yaml := fmt.Sprintf(`version: 1
name: live-backfill
settings: {status_interval: 0s}
sources:
  cholesky: {type: kafka, brokers: [%q], topic: traces.cholesky, group: bf, session_timeout: 2s, parser: {type: paje, time_unit: ms}}
  dynfarm: {type: kafka, brokers: [%q], topic: traces.dynfarm, group: bf, session_timeout: 2s, parser: {type: paje}}
stages:
%ssinks:
%s`, addr, addr, stages.String(), sinks.String())
	cfg, err := pipelines.Parse([]byte(yaml), "live-backfill.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- pipelines.Run(ctx, cfg, pipelines.RunOptions{Registry: builtin.Registry()}) }()
	got, _ := kafkatest.ReadRecords(t, addr, "tracecast.decisions", "tracecast.decision/1", len(want), 90*time.Second)
	gotSpells, _ := kafkatest.ReadRecords(t, addr, "tracecast.spells", "tracecast.spell/2", len(wantSpells), 90*time.Second)
	cancel()
	if err := <-done; err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	kafkatest.CompareRecords(t, got, want)
	kafkatest.CompareRecords(t, gotSpells, wantSpells)
	t.Logf("%d decisions live, %d offline; %d spell forecasts live, %d offline (%d busy)", len(got), len(want), len(gotSpells), len(wantSpells), busy)
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func readTrace(t *testing.T, path string) [][]byte {
	t.Helper()
	return bytes.Split(bytes.TrimSuffix(gziptest.ReadFile(t, path), []byte("\n")), []byte("\n"))
}
