package pipelines

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/kafkatest"
)

func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// TestLivePredictOnTailedTrace writes the StarPU trace to a file in pieces
// while a tail → paje → live predict pipeline follows it: predictions come
// out before the trace is complete, and in the end they are those of the
// same prediction run on the finished file. The tail ends 2 s after the
// file stops growing: with 300 ms, a loaded machine (make test's race
// runs) took longer than that to make the first prediction, the input
// ended at the first half, and the test failed with 49 of 69.
func TestLivePredictOnTailedTrace(t *testing.T) {
	zr, err := os.Open(filepath.Join("testdata", "starpu-cholesky-2cpu.trace.gz"))
	if err != nil {
		t.Fatal(err)
	}
	gz, _ := gzip.NewReader(zr)
	data, _ := io.ReadAll(gz)
	zr.Close()
	dir := t.TempDir()
	trace := filepath.Join(dir, "live.trace")
	liveOut, offOut := filepath.Join(dir, "live.jsonl"), filepath.Join(dir, "off.jsonl")
	stage := func(extra string) string {
		return `{type: predict, inputs: [trace], rules: starpu, period: 1, window: 100, queries: ["idle>=50%"], trace: run` + extra + `}`
	}
	liveCfg, err := Parse([]byte(fmt.Sprintf(`version: 1
name: live
settings: {status_interval: 0s}
sources:
  trace: {type: tail, path: %q, poll: 5ms, end_after: 2s, parser: {type: paje, time_unit: ms}}
stages:
  idle: %s
sinks:
  out: {type: jsonl, inputs: [idle], records: predictions, path: %q}
`, trace, stage(", live: true"), liveOut)), "live.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, liveCfg, RunOptions{}) }()

	f, err := os.Create(trace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	half := len(lines) * 3 / 4 // the watermark trails the latest time by the 3 s reorder horizon
	f.WriteString(strings.Join(lines[:half], ""))
	// Predictions for the first half come out while the rest is unwritten.
	deadline := time.Now().Add(10 * time.Second)
	for len(readJSONL(t, liveOut)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no prediction while the trace was being written")
		}
		time.Sleep(20 * time.Millisecond)
	}
	early := len(readJSONL(t, liveOut))
	f.WriteString(strings.Join(lines[half:], ""))
	f.Close()
	// The file stops growing: after end_after the input ends and the stage
	// flushes its last windows.
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stop()
	live := readJSONL(t, liveOut)

	offCfg, err := Parse([]byte(fmt.Sprintf(`version: 1
name: off
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje, time_unit: ms}}
stages:
  idle: %s
sinks:
  out: {type: jsonl, inputs: [idle], records: predictions, path: %q}
`, trace, stage(""), offOut)), "off.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(t.Context(), offCfg, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	off := readJSONL(t, offOut)
	t.Logf("%d predictions before the trace was complete, %d in all; offline %d", early, len(live), len(off))
	if early >= len(live) {
		t.Errorf("all %d predictions came before the second half was written", early)
	}
	if len(live) != len(off) {
		t.Fatalf("live %d predictions, offline %d", len(live), len(off))
	}
	for i := range off {
		if live[i]["id"] != off[i]["id"] || live[i]["likelihood"] != off[i]["likelihood"] {
			t.Fatalf("prediction %d: live %v, offline %v", i, live[i], off[i])
		}
	}
}

// TestLiveTailRestart: a tail pipeline stopped in the middle of a run and
// started again (same position file) goes on without errors — the Paje
// trace is read again from its start, since its containers were defined
// there — and the two runs' predictions together, de-duplicated on their
// ids, are the offline ones.
func TestLiveTailRestart(t *testing.T) {
	data := gziptest.ReadFile(t, filepath.Join("testdata", "starpu-cholesky-2cpu.trace.gz"))
	dir := t.TempDir()
	trace := filepath.Join(dir, "run.trace")
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(trace, []byte(strings.Join(lines[:len(lines)*3/4], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	first, second := filepath.Join(dir, "1.jsonl"), filepath.Join(dir, "2.jsonl")
	run := func(out, endAfter string, until func() bool) {
		t.Helper()
		cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: restart
settings: {status_interval: 0s}
sources:
  trace: {type: tail, path: %q, poll: 5ms, end_after: %s, position_file: %q, parser: {type: paje, time_unit: ms}}
stages:
  idle: {type: predict, inputs: [trace], live: true, rules: starpu, period: 1, window: 100, queries: ["idle>=50%%"]}
sinks:
  out: {type: jsonl, inputs: [idle], records: predictions, path: %q}
`, trace, endAfter, filepath.Join(dir, "position.json"), out), "restart.yaml")
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- Run(ctx, cfg, RunOptions{}) }()
		deadline := time.Now().Add(20 * time.Second)
		for until != nil && !until() {
			if time.Now().After(deadline) {
				stop()
				t.Fatalf("timeout: %v, %d and %d predictions", <-done, len(readJSONL(t, first)), len(readJSONL(t, second)))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if until != nil {
			stop() // mid-run: the last windows are not final, nothing is flushed
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		stop()
	}
	run(first, "0s", func() bool { return len(readJSONL(t, first)) >= 2 })
	f, err := os.OpenFile(trace, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Join(lines[len(lines)*3/4:], ""))
	f.Close()
	// The second run rebuilds from the start and ends when the file stops
	// growing (the run is over).
	run(second, "300ms", nil)

	got := map[string]string{}
	for _, out := range []string{first, second} {
		for _, m := range readJSONL(t, out) {
			id, b := kafkatest.Normalize(m)
			if prev, ok := got[id]; ok && prev != b {
				t.Fatalf("%s differs between the runs:\n%s\n%s", id, prev, b)
			}
			got[id] = b
		}
	}
	// Every prediction of either run is the offline one.
	if len(got) != 69 || len(readJSONL(t, second)) != 69 {
		t.Errorf("%d distinct predictions, %d from the second run; want the offline 69", len(got), len(readJSONL(t, second)))
	}
	off := filepath.Join(dir, "off.jsonl")
	offCfg, err := Parse(fmt.Appendf(nil, `version: 1
name: off
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje, time_unit: ms}}
stages:
  idle: {type: predict, inputs: [trace], rules: starpu, period: 1, window: 100, queries: ["idle>=50%%"]}
sinks:
  out: {type: jsonl, inputs: [idle], records: predictions, path: %q}
`, trace, off), "off.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(t.Context(), offCfg, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, m := range readJSONL(t, off) {
		id, b := kafkatest.Normalize(m)
		want[id] = b
	}
	kafkatest.CompareRecords(t, got, want)
	t.Logf("first run %d predictions, second %d, distinct %d", len(readJSONL(t, first)), len(readJSONL(t, second)), len(got))
}
