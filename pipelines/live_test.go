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
// same prediction run on the finished file.
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
  trace: {type: tail, path: %q, poll: 5ms, parser: {type: paje, time_unit: ms}}
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
	time.Sleep(300 * time.Millisecond)
	stop() // a graceful stop: the stage flushes what is final
	if err := <-done; err != nil {
		t.Fatal(err)
	}
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
