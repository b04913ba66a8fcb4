//go:build chaos

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/stages/predict"
)

// recordKinds are the records the fault suite compares with the offline
// replay: where the live pipeline publishes them, and their schema.
var recordKinds = []struct{ name, topic, schema string }{
	{"predictions", "tracecast.predictions", "tracecast.prediction/1"},
	{"verdicts", "tracecast.predictions", "tracecast.verdict/1"},
	{"forecasts", "tracecast.forecasts", "tracecast.forecast/1"},
}

// offline is the offline replay's records of each kind (recordKinds'
// order): id -> kafkatest.Normalize'd JSON.
type offline [3]map[string]string

func newOffline() offline { return offline{{}, {}, {}} }

// add adds o2's records.
func (o offline) add(o2 offline) {
	for k := range o {
		for id, r := range o2[k] {
			o[k][id] = r
		}
	}
}

// offlineForecasts runs live-kafka's forecast stage on each trace file,
// as a file replay, with the trace's id (publish's: the file name without
// .gz) as its run id.
func offlineForecasts(t *testing.T, dir string, traces ...string) map[string]string {
	t.Helper()
	return offlineForecastStage(t, dir, "forecasts", traces...)
}

// offlineForecastStage is offlineForecasts for the forecast stage's records
// of one kind (forecasts, outcomes, episodes, skills).
func offlineForecastStage(t *testing.T, dir, records string, traces ...string) map[string]string {
	t.Helper()
	want := map[string]string{}
	for i, tr := range traces {
		abs, _ := filepath.Abs(tr)
		out := filepath.Join(dir, fmt.Sprintf("offline-%s-%d.jsonl", records, i))
		yaml := filepath.Join(dir, fmt.Sprintf("offline-%s-%d.yaml", records, i))
		// The stage's options are live-kafka.yaml's.
		if err := os.WriteFile(yaml, fmt.Appendf(nil, `version: 1
name: offline-forecasts
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje, time_unit: ms}}
stages:
  forecast: {type: forecast, inputs: [trace], rules: starpu, queries: ["idle>=25%%"], horizons: [10ms, 100ms, 1s], every: 5ms, skill_every: 1s, time_unit: ms, run_id: %q}
sinks:
  f: {type: jsonl, inputs: [forecast], records: %s, path: %q}
`, abs, predict.TraceID(tr), records, out), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := run(t, nil, "run", yaml, "--no-progress"); r.code != 0 {
			t.Fatalf("offline %s of %s: exit %d: %s", records, tr, r.code, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			id, n := kafkatest.Normalize(rec)
			want[id] = n
		}
	}
	return want
}

// offline is the offline replay of the environment's four traces: the
// predictions and verdicts newLiveEnv computed, and the forecasts.
func (e *liveEnv) offline() offline {
	e.t.Helper()
	return offline{e.want, e.wantV, offlineForecasts(e.t, e.dir, e.traces...)}
}

// kindCount compares the records of one kind on the topics with the
// offline replay's.
type kindCount struct {
	want, lost, changed, dups int
	// extra counts records the offline replay does not have (none may
	// be); badDups duplicates that differ from the first with their id.
	extra, badDups int
}

// readRecords reads every message of topic with the given schema whose key
// keep accepts (nil: all), until it has want distinct ids or the deadline:
// id -> Normalize'd JSON, the messages read, and how many duplicates
// differed from the first message with their id.
func readRecords(t *testing.T, addr, topic, schema string, keep func(key []byte) bool, want int, deadline time.Duration) (map[string]string, int, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	readers, closeAll := kafkatest.Readers(ctx, t, kafkago.DefaultDialer, addr, topic, 16<<20)
	defer closeAll()
	got := map[string]string{}
	msgs, bad := 0, 0
	kafkatest.Drain(ctx, readers, func() bool { return len(got) >= want }, func(m kafkago.Message) {
		if keep != nil && !keep(m.Key) {
			return
		}
		if s, ok := header(m, "schema"); ok && s != schema {
			return
		}
		rec := kafkatest.Decode(t, m)
		if rec["schema"] != schema {
			return
		}
		msgs++
		id, b := kafkatest.Normalize(rec)
		if prev, ok := got[id]; ok {
			if prev != b {
				bad++
				if bad <= 3 {
					t.Errorf("duplicate %s differs:\n%s\n%s", id, prev, b)
				}
			}
			return
		}
		got[id] = b
	})
	return got, msgs, bad
}

func header(m kafkago.Message, key string) (string, bool) {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

// measure reads each kind of record from the topics (for kind k, those of
// the traces keep(k, key) accepts; keep nil: all) and compares them with
// want: records lost, changed, duplicated, and records want lacks. Any
// lost, changed or extra record fails the test.
func (e *liveEnv) measure(t *testing.T, want offline, keep func(k int, key []byte) bool, deadline time.Duration, logs ...string) [3]kindCount {
	t.Helper()
	var cs [3]kindCount
	for k, kind := range recordKinds {
		var keepK func([]byte) bool
		if keep != nil {
			keepK = func(key []byte) bool { return keep(k, key) }
		}
		got, msgs, bad := readRecords(t, e.addr, kind.topic, kind.schema, keepK, len(want[k]), deadline)
		c := &cs[k]
		c.want, c.dups, c.badDups = len(want[k]), msgs-len(got), bad
		for id, rec := range want[k] {
			if g, ok := got[id]; !ok {
				c.lost++
				if c.lost <= 3 {
					t.Errorf("%s: missing %s", kind.name, id)
				}
			} else if g != rec {
				c.changed++
				if c.changed <= 3 {
					t.Errorf("%s: changed %s:\n got %s\nwant %s", kind.name, id, g, rec)
				}
			}
		}
		for id := range got {
			if _, ok := want[k][id]; !ok {
				c.extra++
				if c.extra <= 3 {
					t.Errorf("%s: unexpected %s", kind.name, id)
				}
			}
		}
		if c.lost+c.changed+c.extra > 0 {
			t.Errorf("%s: %d lost, %d changed, %d unexpected of %d", kind.name, c.lost, c.changed, c.extra, c.want)
		}
	}
	if t.Failed() {
		for _, l := range logs {
			t.Logf("%s:\n%s", l, e.logTail(l))
		}
	}
	return cs
}

// faultReport is a line of the fault suite's table.
type faultReport struct {
	fault       string
	counts      [3]kindCount // recordKinds' order
	restart     time.Duration
	restartWhat string
	rss         []float64 // MiB, per pipeline process
}

// reportTable formats fault reports: per kind, lost/changed/duplicates of
// the offline replay's count; the restart time; the peak RSS.
func reportTable(reports []faultReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-44s | %-22s | %-22s | %-24s | %-44s | %s\n", "fault", "predictions lost/chg/dup", "verdicts lost/chg/dup", "forecasts lost/chg/dup", "restart", "peak RSS (MiB)")
	for _, r := range reports {
		var rss []string
		for _, v := range r.rss {
			rss = append(rss, fmt.Sprintf("%.0f", v))
		}
		var cols [3]string
		for k, c := range r.counts {
			cols[k] = fmt.Sprintf("%d/%d/%d of %d", c.lost, c.changed+c.extra+c.badDups, c.dups, c.want)
		}
		restart := "-"
		if r.restartWhat != "" {
			restart = fmt.Sprintf("%.2fs (%s)", r.restart.Seconds(), r.restartWhat)
		}
		fmt.Fprintf(&b, "%-44s | %-22s | %-22s | %-24s | %-44s | %s\n", r.fault, cols[0], cols[1], cols[2], restart, strings.Join(rss, ", "))
	}
	return b.String()
}
