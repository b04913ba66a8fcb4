package kafka

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"go.uber.org/goleak"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/kafkatest"
)

func msg(trace, value string, hdr ...string) kafkago.Message {
	m := kafkago.Message{Key: []byte(trace), Value: []byte(value)}
	for i := 0; i+1 < len(hdr); i += 2 {
		m.Headers = append(m.Headers, kafkago.Header{Key: hdr[i], Value: []byte(hdr[i+1])})
	}
	return m
}

// collector is an Emit that records lines and markers per stream, and
// releases barriers when release is set.
type collector struct {
	mu      sync.Mutex
	release bool
	lines   map[string][]string
	ends    map[string]int
	reasons map[string]string // why each stream last ended
	drops   map[string]string // why each stream was dropped
	resets  int
}

func (c *collector) emit(ctx context.Context, b tracecast.Batch) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch it := b.Items.(type) {
	case []tracecast.Line:
		for _, l := range it {
			c.lines[b.Stream] = append(c.lines[b.Stream], string(l.Data))
		}
	case tracecast.StreamEnd:
		c.ends[b.Stream]++
		c.reasons[b.Stream] = it.Reason
	case tracecast.StreamReset:
		c.resets++
	case tracecast.StreamDrop:
		c.drops[b.Stream] = it.Reason
	case *tracecast.Barrier:
		it.Hold(1) // as the runtime does for its one consumer
		if c.release {
			go it.Release() // as a sink would, later
		}
	}
	return nil
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, ls := range c.lines {
		n += len(ls)
	}
	return n
}

// consume runs a Source of group g until want lines arrived and, when
// commits is set, a commit happened after that; it returns what it saw.
func consume(t *testing.T, addr, group string, release bool, want int, traceTimeout ...time.Duration) (*collector, Stats) {
	t.Helper()
	c := &collector{release: release, lines: map[string][]string{}, ends: map[string]int{}, reasons: map[string]string{}, drops: map[string]string{}}
	o := Options{Brokers: []string{addr}, Topic: "lines", Group: group, CommitInterval: 50 * time.Millisecond,
		MaxWait: 50 * time.Millisecond, SessionTimeout: 2 * time.Second, StopCommitTimeout: time.Second}
	if len(traceTimeout) > 0 {
		o.TraceTimeout = traceTimeout[0]
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, c.emit) }()
	deadline := time.Now().Add(15 * time.Second)
	for c.count() < want || (release && s.Stats().Commits == 0) {
		if time.Now().After(deadline) {
			t.Fatalf("timeout: %d lines of %d, stats %+v", c.count(), want, s.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // a few more commit ticks
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return c, s.Stats()
}

// TestCommitsNeverPassAnOpenTrace: trace A ends, trace B does not; the
// commit stops at B's first message, so a restarted member rebuilds B from
// its header and skips the rest of the finished trace A.
func TestCommitsNeverPassAnOpenTrace(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) }) // after the broker's cleanup
	addr := kafkatest.Start(t, 1, "lines")
	tr := &kafkago.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "lines", BatchTimeout: time.Millisecond, Transport: tr, RequiredAcks: kafkago.RequireAll}
	defer w.Close()
	err := w.WriteMessages(t.Context(),
		msg("A", "%EventDef PajeX 0\n%EndEventDef\n1 a", HeaderSeq, "0"),
		msg("A", "1 b", HeaderSeq, "3"),
		msg("B", "%EventDef\n", HeaderSeq, "0"),
		msg("A", "1 c", HeaderSeq, "4"),
		msg("A", "", HeaderEnd, "1"),
		msg("B", "1 x\n1 y\n", HeaderSeq, "1"),
	)
	if err != nil {
		t.Fatal(err)
	}

	// A member whose sinks never release the barriers commits nothing.
	c, st := consume(t, addr, "g", false, 8)
	if st.Commits != 0 {
		t.Fatalf("committed without released barriers: %+v", st)
	}
	if got := strings.Join(c.lines["A"], "|"); got != "%EventDef PajeX 0|%EndEventDef|1 a|1 b|1 c" {
		t.Fatalf("A lines: %s", got)
	}
	// At the stop, the unfinished B is forgotten, not flushed: its last
	// windows are not final.
	if c.ends["A"] != 1 || c.ends["B"] != 0 || c.resets != 1 {
		t.Fatalf("ends %v resets %d, want A ended and B reset", c.ends, c.resets)
	}
	if r := c.reasons["A"]; r != "" {
		t.Fatalf("A ended by its end marker, with reason %q", r)
	}
	// So the next member starts from the beginning again.
	c, st = consume(t, addr, "g", true, 8)
	if st.Commits == 0 || len(c.lines["A"]) != 5 {
		t.Fatalf("second member: %+v, A %v", st, c.lines["A"])
	}
	if got := committed(t, addr, tr); got != 2 {
		t.Fatalf("committed offset %d, want 2 (B's first message)", got)
	}
	// It committed up to B's first message (offset 2): a third member
	// reads B from its header and skips A's tail.
	c, st = consume(t, addr, "g", true, 3)
	if len(c.lines["A"]) != 0 || strings.Join(c.lines["B"], "|") != "%EventDef|1 x|1 y" {
		t.Fatalf("after the commit: A %v, B %v", c.lines["A"], c.lines["B"])
	}
	if st.Skipped != 1 {
		t.Fatalf("skipped %d messages of the finished trace, want 1 (its end marker is not counted)", st.Skipped)
	}

	// With a trace timeout, the silent trace B is ended (flushed) and no
	// longer holds the commit back: a later member finds nothing to read.
	c, st = consume(t, addr, "g", true, 3, 100*time.Millisecond)
	if c.ends["B"] != 1 {
		t.Fatalf("B not ended after the trace timeout: ends %v", c.ends)
	}
	// Marked as ended by the timeout (the stages count and log it), and
	// counted by the source.
	if r := c.reasons["B"]; r != tracecast.EndTimeout {
		t.Fatalf("B's end reason %q, want %q", r, tracecast.EndTimeout)
	}
	if st.TimedOut != 1 {
		t.Fatalf("%d traces timed out in the stats, want 1", st.TimedOut)
	}
	if got := committed(t, addr, tr); got != 6 {
		t.Fatalf("committed offset %d after B timed out, want 6 (the end)", got)
	}
}

// committed is group g's committed offset of partition 0 of "lines".
func committed(t *testing.T, addr string, tr *kafkago.Transport) int64 {
	t.Helper()
	cl := &kafkago.Client{Addr: kafkago.TCP(addr), Transport: tr}
	res, err := cl.OffsetFetch(t.Context(), &kafkago.OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{"lines": {0}}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Topics["lines"][0].CommittedOffset
}

// TestStartsTraceWithoutHeaders: a producer that knows nothing of tracecast
// (one line per message, no headers) still delimits traces by their '%'
// header lines.
func TestStartsTraceWithoutHeaders(t *testing.T) {
	s := &Source{}
	tr := &traceState{}
	for _, c := range []struct {
		v    string
		tr   *traceState
		want bool
	}{
		{"%EventDef", nil, true},
		{"%EventDef", tr, false}, // the rest of the header
		{"1 a", nil, false},
		{"%EventDef", &traceState{hadEvents: true}, true}, // a new run
	} {
		m := kafkago.Message{Value: []byte(c.v)}
		if got := s.startsTrace(&m, c.tr); got != c.want {
			t.Errorf("%q (trace %+v): %v", c.v, c.tr, got)
		}
	}
}

// The shipped default ends a silent trace: a producer that died without its
// end marker does not hold its partition's commits back for ever.
func TestDefaultTraceTimeoutIsFinite(t *testing.T) {
	if d := DefaultSourceConfig().TraceTimeout; d <= 0 || d > time.Hour {
		t.Fatalf("default trace_timeout %v: want a finite inactivity timeout", d)
	}
}

// TestRepeatedAndMissingLines: a producer that sends messages again after
// a write it could not confirm (a broker restart) repeats lines, which the
// source drops by their tracecast-seq; before, they were read twice and
// changed the trace's results. Lines missing before a message drop the
// trace (records missing, never changed) and skip its later messages.
func TestRepeatedAndMissingLines(t *testing.T) {
	addr := kafkatest.Start(t, 1, "lines")
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "lines", BatchTimeout: time.Millisecond, RequiredAcks: kafkago.RequireAll}
	defer w.Close()
	err := w.WriteMessages(t.Context(),
		msg("A", "%h1\n%h2", HeaderSeq, "0"),
		msg("A", "a\nb\n", HeaderSeq, "2"),
		msg("B", "%h", HeaderSeq, "0"),
		msg("A", "a\nb\n", HeaderSeq, "2"), // the same message again
		msg("A", "b\nc", HeaderSeq, "3"),   // partly read already
		msg("B", "x", HeaderSeq, "1"),
		msg("B", "y", HeaderSeq, "5"), // lines 2 to 4 lost
		msg("A", "d", HeaderSeq, "5"),
		msg("B", "z", HeaderSeq, "6"),
		msg("A", "", HeaderEnd, "1"),
		msg("B", "", HeaderEnd, "1"),
	)
	if err != nil {
		t.Fatal(err)
	}
	c, st := consume(t, addr, "g", true, 8)
	if got := strings.Join(c.lines["A"], "|"); got != "%h1|%h2|a|b|c|d" {
		t.Errorf("A lines: %s, want each line once", got)
	}
	if got := strings.Join(c.lines["B"], "|"); got != "%h|x" {
		t.Errorf("B lines: %s, want those before the lost ones", got)
	}
	if c.drops["B"] != tracecast.DropLinesLost || c.ends["B"] != 0 || c.ends["A"] != 1 {
		t.Errorf("drops %v, ends %v: want B dropped (lines lost) and not ended, A ended", c.drops, c.ends)
	}
	if st.Repeated != 3 || st.LinesLost != 1 {
		t.Errorf("stats %+v: want 3 repeated lines, 1 trace with lines lost", st)
	}
}
