//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast/stages/predict"
)

// kinds are the records compared with the offline replay, as the fault
// suite compares them (cmd/tracecast/chaos_measure_test.go): where the
// live pipeline publishes them and their schema.
var kinds = []struct{ name, record, topic, schema string }{
	{"predictions", "prediction", "tracecast.predictions", "tracecast.prediction/1"},
	{"verdicts", "verdict", "tracecast.predictions", "tracecast.verdict/1"},
	{"forecasts", "forecast", "tracecast.forecasts", "tracecast.forecast/1"},
}

// base is a trace the soak publishes again and again under new run ids,
// and its offline replay's records.
type base struct {
	path string
	id   string // predict.TraceID(path): the run id of the offline records
	// want[k]: the offline records of kind k, id -> normalized JSON, and
	// index[k]: id -> position in a run's bitmap of records seen.
	want  [3]map[string]string
	index [3]map[string]int
}

func (b *base) records() int {
	return len(b.want[0]) + len(b.want[1]) + len(b.want[2])
}

// offlineReplay computes base's records with the live-kafka pipeline's
// options, as the fault suite does: the predict command for predictions
// and verdicts, the forecast stage on a file replay for forecasts.
func offlineReplay(binary, dir, path string) (*base, error) {
	b := &base{path: path, id: predict.TraceID(path)}
	for k := range b.want {
		b.want[k], b.index[k] = map[string]string{}, map[string]int{}
	}
	out, err := exec.Command(binary, "--log-level", "warn", "predict", "--rules", "starpu", "--period", "1", "--window", "100",
		"--query", "idle>=25%", "--query", "idle>=50%", path).Output()
	if err != nil {
		return nil, fmt.Errorf("offline predict %s: %w", path, exitErr(err))
	}
	if err := b.add(out); err != nil {
		return nil, fmt.Errorf("offline predict %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	jsonl := filepath.Join(dir, b.id+".forecasts.jsonl")
	yaml := filepath.Join(dir, b.id+".offline.yaml")
	// The forecast stage's options are live-kafka.yaml's.
	spec := fmt.Sprintf(`version: 1
name: soak-offline-forecasts
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje, time_unit: ms}}
stages:
  forecast: {type: forecast, inputs: [trace], rules: starpu, queries: ["idle>=25%%"], horizons: [10ms, 100ms, 1s], every: 5ms, skill_every: 1s, time_unit: ms, run_id: %q}
sinks:
  f: {type: jsonl, inputs: [forecast], records: forecasts, path: %q}
`, abs, b.id, jsonl)
	if err := os.WriteFile(yaml, []byte(spec), 0o644); err != nil {
		return nil, err
	}
	if _, err := exec.Command(binary, "--log-level", "warn", "run", yaml, "--no-progress").Output(); err != nil {
		return nil, fmt.Errorf("offline forecasts of %s: %w", path, exitErr(err))
	}
	data, err := os.ReadFile(jsonl)
	if err != nil {
		return nil, err
	}
	if err := b.add(data); err != nil {
		return nil, fmt.Errorf("%s: %w", jsonl, err)
	}
	for k, kind := range kinds {
		if len(b.want[k]) == 0 {
			return nil, fmt.Errorf("the offline replay of %s has no %s", path, kind.name)
		}
		ids := make([]string, 0, len(b.want[k]))
		for id := range b.want[k] {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for i, id := range ids {
			b.index[k][id] = i
		}
	}
	return b, nil
}

// add keeps the records of JSON lines whose schema is one of kinds'.
func (b *base) add(lines []byte) error {
	for i, line := range bytes.Split(bytes.TrimSpace(lines), []byte("\n")) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
		if k := kindOf(rec); k >= 0 {
			id, n := normalize(rec)
			b.want[k][id] = n
		}
	}
	return nil
}

// kindOf is the position in kinds of a record (JSON lines and Kafka
// messages name it by "record"; messages carry its "schema" too, which
// must be the one compared), or -1.
func kindOf(rec map[string]any) int {
	for k, kind := range kinds {
		if rec["record"] == kind.record {
			if s, ok := rec["schema"]; ok && s != kind.schema {
				return -1
			}
			return k
		}
	}
	return -1
}

// normalize drops what differs between deliveries (internal/kafkatest's
// Normalize): the record's id and its JSON with sorted keys.
func normalize(rec map[string]any) (string, string) {
	delete(rec, "schema")
	delete(rec, "record")
	delete(rec, "emitted_at")
	b, _ := json.Marshal(rec)
	id, _ := rec["id"].(string)
	return id, string(b)
}

func exitErr(err error) error {
	if ee, ok := err.(*exec.ExitError); ok {
		return fmt.Errorf("%v: %s", err, bytes.TrimSpace(ee.Stderr))
	}
	return err
}

// runState is what the checker knows of one published run.
type runState struct {
	base *base
	seen [3][]bool
	got  [3]int // distinct records seen
	dups int
	// published: its publisher exited 0 (end marker sent).
	published bool
	failed    string // the publisher's error
}

func (r *runState) complete() bool {
	for k := range r.seen {
		if r.got[k] < len(r.seen[k]) {
			return false
		}
	}
	return true
}

// checker reads the output topics from their start while the soak runs
// and compares every record of a soak run with its base's offline record,
// under the run's id: records missing, changed, unexpected, and
// duplicates (which must equal the first).
type checker struct {
	mu   sync.Mutex
	runs map[string]*runState
	// messages read; records of the soak runs changed or not in the
	// offline replay (with up to 5 examples).
	messages, changed, unexpected int
	examples                      []string
}

func newChecker() *checker { return &checker{runs: map[string]*runState{}} }

// expect registers a run before it is published.
func (c *checker) expect(run string, b *base) *runState {
	r := &runState{base: b}
	for k := range r.seen {
		r.seen[k] = make([]bool, len(b.want[k]))
	}
	c.mu.Lock()
	c.runs[run] = r
	c.mu.Unlock()
	return r
}

func (c *checker) published(r *runState, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		r.failed = err.Error()
		return
	}
	r.published = true
}

func (c *checker) example(format string, args ...any) {
	if len(c.examples) < 5 {
		c.examples = append(c.examples, fmt.Sprintf(format, args...))
	}
}

// message checks one message of an output topic.
func (c *checker) message(m kafkago.Message) {
	run := string(m.Key)
	c.mu.Lock()
	r := c.runs[run]
	c.messages++
	c.mu.Unlock()
	if r == nil {
		return // not a soak run's (alerts of none, say)
	}
	var rec map[string]any
	if err := json.Unmarshal(m.Value, &rec); err != nil {
		c.mu.Lock()
		c.unexpected++
		c.example("%s: a message that is not JSON: %v", run, err)
		c.mu.Unlock()
		return
	}
	k := kindOf(rec)
	if k < 0 {
		return // outcomes, skills, episodes: not compared
	}
	id, got := normalize(rec)
	// The run's records are its base's, under the run's id.
	bid := strings.Replace(id, run+"/", r.base.id+"/", 1)
	got = strings.ReplaceAll(strings.ReplaceAll(got, `"`+run+`"`, `"`+r.base.id+`"`), `"`+run+`/`, `"`+r.base.id+`/`)
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := r.base.index[k][bid]
	switch {
	case !ok:
		c.unexpected++
		c.example("%s: %s %s not in the offline replay of %s", run, kinds[k].name, id, r.base.id)
	case r.base.want[k][bid] != got:
		c.changed++
		c.example("%s: %s %s changed:\n got %s\nwant %s", run, kinds[k].name, id, got, r.base.want[k][bid])
	case r.seen[k][i]:
		r.dups++
	default:
		r.seen[k][i] = true
		r.got[k]++
	}
}

// read reads every partition of the output topics from its start until
// ctx ends; a broker restart is kafka-go's to ride out (its readers
// reconnect).
func (c *checker) read(ctx context.Context, addr string, partitions int) *sync.WaitGroup {
	var wg sync.WaitGroup
	topics := map[string]bool{}
	for _, k := range kinds {
		topics[k.topic] = true
	}
	for topic := range topics {
		for p := range partitions {
			wg.Go(func() {
				r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: p,
					MaxWait: 200 * time.Millisecond, MaxBytes: 16 << 20})
				defer r.Close()
				for {
					m, err := r.ReadMessage(ctx)
					if err != nil {
						if ctx.Err() != nil {
							return
						}
						time.Sleep(200 * time.Millisecond)
						continue
					}
					c.message(m)
				}
			})
		}
	}
	return &wg
}

// tally is the checker's verdict over every run.
type tally struct {
	runs, published, complete, failed int
	records, lost, dups               int
	changed, unexpected, messages     int
	examples                          []string
}

func (c *checker) tally() tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := tally{runs: len(c.runs), changed: c.changed, unexpected: c.unexpected, messages: c.messages, examples: c.examples}
	var lostRuns []string
	for name, r := range c.runs {
		if r.published {
			t.published++
		}
		if r.failed != "" {
			t.failed++
			lostRuns = append(lostRuns, name+": publish failed: "+r.failed)
		}
		if r.complete() {
			t.complete++
		}
		t.dups += r.dups
		for k := range r.seen {
			t.records += len(r.seen[k])
			if lost := len(r.seen[k]) - r.got[k]; lost > 0 {
				t.lost += lost
				lostRuns = append(lostRuns, fmt.Sprintf("%s: %d of %d %s missing", name, lost, len(r.seen[k]), kinds[k].name))
			}
		}
	}
	sort.Strings(lostRuns)
	t.examples = append(t.examples, lostRuns[:min(5, len(lostRuns))]...)
	return t
}

// allComplete says whether every published run's records are all there.
func (c *checker) allComplete() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.runs {
		if !r.complete() {
			return false
		}
	}
	return true
}
