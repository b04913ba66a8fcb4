//go:build chaos

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/internal/kafkatest"
)

// The fault suite (make chaos): the live service against the faults an
// operator meets, each compared with an offline replay of the same traces
// (0 lost, 0 changed: duplicates only with equal ids and content), with the
// pipeline's peak RSS. TestLiveKafkaProcesses (also run by make chaos)
// covers a broker restart, SIGKILL and SIGTERM of the pipeline and a group
// member killed.

// peakRSS is a process's peak resident set (VmHWM), in MiB.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

// Publication at full speed into a service already running.
func TestChaosMaxSpeedIntoRunningService(t *testing.T) {
	e := newLiveEnv(t)
	p := e.pipeline("pipeline")
	time.Sleep(time.Second) // the service is up and idle
	e.publish("max")()
	e.check("pipeline")
	t.Logf("peak RSS of the pipeline: %.0f MiB", peakRSS(p.Process.Pid))
}

// A producer that dies mid-trace: its trace ends by trace_timeout, the
// other traces' results are complete, and the partition's commits reach
// its end (nothing is read again after a restart).
func TestChaosProducerDiesMidTrace(t *testing.T) {
	e := newLiveEnv(t)
	args := []string{"run", "live-kafka", "--no-progress", "--set", "traces.session_timeout=2s", "--set", "traces.commit_interval=200ms",
		"--set", "traces.trace_timeout=3s"}
	for _, id := range []string{"traces", "predictions", "verdicts", "alerts", "forecasts", "outcomes", "episodes", "skills"} {
		args = append(args, "--set", id+".brokers=["+e.addr+"]")
	}
	p := e.start("pipeline", args...)
	// Half of a trace, then silence: its producer died.
	half := traceLines(t, e.traces[0])
	half = half[:len(half)/2]
	w := &kafkago.Writer{Addr: kafkago.TCP(e.addr), Topic: "tracecast.traces", Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond, RequiredAcks: kafkago.RequireAll}
	defer w.Close()
	pr := &kafkaingest.Producer{W: w, Trace: "dead-run"}
	if err := pr.Lines(t.Context(), half); err != nil {
		t.Fatal(err)
	}
	e.publish("max")()
	e.check("pipeline")
	// The dead trace held its partition's commits; after trace_timeout it
	// ends and the commits reach every partition's end.
	deadline := time.Now().Add(30 * time.Second)
	for {
		lag := commitLag(t, e.addr)
		if lag == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("committed offsets still %d messages behind the partitions' ends 30 s after the producer died\n%s", lag, e.logTail("pipeline"))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !strings.Contains(e.logTail("pipeline"), "trace silent for too long") {
		t.Errorf("no log line about the dead trace")
	}
	t.Logf("peak RSS of the pipeline: %.0f MiB", peakRSS(p.Process.Pid))
}

// 5000 traces open at once (interleaved line chunks): the service stays up
// and every trace's predictions equal the offline replay's.
func TestChaosFiveThousandOpenTraces(t *testing.T) {
	e := newLiveEnv(t)
	n := 5000
	if v, err := strconv.Atoi(os.Getenv("CHAOS_TRACES")); err == nil {
		n = v // a smaller run while investigating
	}
	lines := traceLines(t, e.traces[3]) // the smallest synthetic trace
	args := []string{"run", "live-kafka", "--no-progress", "--set", "traces.session_timeout=6s", "--set", "traces.commit_interval=1s",
		"--set", "traces.parser.max_streams=6000", "--set", "idle.max_streams=6000", "--set", "forecast.max_streams=6000"}
	for _, id := range []string{"traces", "predictions", "verdicts", "alerts", "forecasts", "outcomes", "episodes", "skills"} {
		args = append(args, "--set", id+".brokers=["+e.addr+"]")
	}
	p := e.start("pipeline", args...)
	// Acknowledged writes, in batches under the broker's maximum message
	// size (1 MiB): a writer without acks once lost every trace's first
	// chunk here without an error (the batch was too large), and the
	// pipeline then rightly skipped every trace. kafka-go sends one
	// partition's batches in order, one at a time.
	w := &kafkago.Writer{Addr: kafkago.TCP(e.addr), Topic: "tracecast.traces", Balancer: &kafkago.Hash{}, BatchTimeout: 5 * time.Millisecond,
		BatchSize: 100000, BatchBytes: 1 << 20, RequiredAcks: kafkago.RequireAll}
	defer w.Close()
	prods := make([]*kafkaingest.Producer, n)
	for i := range prods {
		prods[i] = &kafkaingest.Producer{W: w, Trace: fmt.Sprintf("run-%04d", i), LinesPerMessage: 256}
	}
	// Every trace's first chunk before any trace's second: all open at once.
	const chunk = 512
	ctx := t.Context()
	for off := 0; off < len(lines); off += chunk {
		var msgs []kafkago.Message
		for _, pr := range prods {
			part := lines[off:min(off+chunk, len(lines))]
			msgs = append(msgs, kafkago.Message{Key: []byte(pr.Trace), Value: joinLines(part),
				Headers: []kafkago.Header{{Key: kafkaingest.HeaderSeq, Value: strconv.AppendInt(nil, int64(off), 10)}}})
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	for _, pr := range prods {
		if err := pr.End(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The offline predictions of that trace, under each run's id.
	base := map[string]string{}
	prefix := ""
	for id, rec := range e.want {
		if strings.HasPrefix(id, "synth-3.trace/") {
			base[strings.TrimPrefix(id, "synth-3.trace/")] = rec
			prefix = "synth-3.trace"
		}
	}
	if prefix == "" || len(base) == 0 {
		t.Fatal("no offline predictions for synth-3.trace")
	}
	want := map[string]string{}
	for i := 0; i < n; i++ {
		run := fmt.Sprintf("run-%04d", i)
		for id, rec := range base {
			rec = strings.ReplaceAll(rec, `"`+prefix+`"`, `"`+run+`"`)
			want[run+"/"+id] = strings.ReplaceAll(rec, `"`+prefix+`/`, `"`+run+`/`)
		}
	}
	// The pipeline publishes about 4000 records per trace (predictions,
	// verdicts, forecasts, outcomes, skills) to the broker: on two cores,
	// 5000 traces take minutes.
	start := time.Now()
	got, msgs := kafkatest.ReadRecords(t, e.addr, "tracecast.predictions", "tracecast.prediction/1", len(want), max(5*time.Minute, time.Duration(n)*200*time.Millisecond))
	kafkatest.CompareRecords(t, got, want)
	t.Logf("%d traces open at once: %d predictions (%d messages) in %v; peak RSS of the pipeline %.0f MiB", n, len(got), msgs, time.Since(start).Round(time.Second), peakRSS(p.Process.Pid))
	if t.Failed() {
		t.Log(e.logTail("pipeline"))
		if b, err := os.ReadFile(e.dir + "/pipeline.log"); err == nil {
			os.WriteFile(os.TempDir()+"/chaos-pipeline.log", b, 0o644)
			t.Logf("the pipeline's log: %s", os.TempDir()+"/chaos-pipeline.log")
		}
	}
}

func traceLines(t *testing.T, path string) []tracecast.Line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	var out []tracecast.Line
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, tracecast.Line{Data: append([]byte(nil), sc.Bytes()...)})
	}
	return out
}

func joinLines(ls []tracecast.Line) []byte {
	var b bytes.Buffer
	for _, l := range ls {
		b.Write(l.Data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// commitLag is how many messages of tracecast.traces the live pipelines'
// group has not committed.
func commitLag(t *testing.T, addr string) int64 {
	t.Helper()
	c := &kafkago.Client{Addr: kafkago.TCP(addr)}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	res, err := c.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: "tracecast-live", Topics: map[string][]int{"tracecast.traces": {0, 1, 2, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	var lag int64
	for _, p := range res.Topics["tracecast.traces"] {
		conn, err := kafkago.DialLeader(ctx, "tcp", addr, "tracecast.traces", p.Partition)
		if err != nil {
			t.Fatal(err)
		}
		last, err := conn.ReadLastOffset()
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		committed := max(p.CommittedOffset, 0)
		lag += last - committed
	}
	return lag
}
