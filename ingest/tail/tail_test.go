package tail

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracecast/tracecast"
)

// collector runs a Source and gathers its lines.
type collector struct {
	mu     sync.Mutex
	lines  []tracecast.Line
	resets int
	// hold keeps checkpoint barriers unreleased, as a pipeline whose sinks
	// never made the lines durable.
	hold bool
}

func (c *collector) emit(ctx context.Context, b tracecast.Batch) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch it := b.Items.(type) {
	case []tracecast.Line:
		c.lines = append(c.lines, it...)
	case tracecast.StreamReset:
		c.resets++
	case *tracecast.Barrier:
		if c.hold {
			it.Hold(1) // never released
		} // else released by its sender on return: durable now
	}
	return nil
}

func (c *collector) texts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s []string
	for _, l := range c.lines {
		s = append(s, string(l.Data))
	}
	return s
}

// waitFor polls until the collector holds want, or fails after 5 s.
func (c *collector) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Join(c.texts(), "|") == strings.Join(want, "|") {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("lines %q, want %q", c.texts(), want)
}

func start(t *testing.T, o Options, hold ...bool) (*Source, *collector, func()) {
	t.Helper()
	o.Poll = 5 * time.Millisecond
	o.StopSaveTimeout = 200 * time.Millisecond
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{hold: len(hold) > 0 && hold[0]}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, c.emit) }()
	return s, c, func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(s)
	f.Close()
}

func TestFollow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace")
	pos := filepath.Join(dir, "pos.json")
	_, c, stop := start(t, Options{Path: path, PositionFile: pos})
	// The file appears later; a partial line waits for its newline.
	appendTo(t, path, "%EventDef PajeNewEvent 1\n1 0.5 a")
	c.waitFor(t, "%EventDef PajeNewEvent 1")
	appendTo(t, path, " b\n1 0.6 c\n")
	c.waitFor(t, "%EventDef PajeNewEvent 1", "1 0.5 a b", "1 0.6 c")
	// Truncation: read again from the start.
	os.WriteFile(path, []byte("x\n"), 0o644)
	c.waitFor(t, "%EventDef PajeNewEvent 1", "1 0.5 a b", "1 0.6 c", "x")
	// Rotation: the old file is renamed, a new one takes the name.
	appendTo(t, path, "y\n")
	c.waitFor(t, "%EventDef PajeNewEvent 1", "1 0.5 a b", "1 0.6 c", "x", "y")
	os.Rename(path, path+".1")
	appendTo(t, path+".1", "z-old\n")
	appendTo(t, path, "first-new\n")
	c.waitFor(t, "%EventDef PajeNewEvent 1", "1 0.5 a b", "1 0.6 c", "x", "y", "z-old", "first-new")
	stop()
	if c.lines[len(c.lines)-1].Num != 1 || c.lines[1].Num != 2 {
		t.Errorf("line numbers: %+v", c.lines)
	}
}

func TestRestartFromSavedPosition(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace")
	pos := filepath.Join(dir, "pos.json")
	appendTo(t, path, "% header 1\n%EndEventDef\nev 1\nev 2\n")
	_, c, stop := start(t, Options{Path: path, PositionFile: pos})
	c.waitFor(t, "% header 1", "%EndEventDef", "ev 1", "ev 2")
	stop()
	// More lines while nobody follows; the restart resumes after "ev 2",
	// with the header re-read first.
	appendTo(t, path, "ev 3\n")
	s, c2, stop2 := start(t, Options{Path: path, PositionFile: pos})
	c2.waitFor(t, "% header 1", "%EndEventDef", "ev 3")
	stop2()
	if got := c2.lines[2].Num; got != 5 {
		t.Errorf("ev 3 is line %d, want 5", got)
	}
	if p := s.Position(); p.Offset != int64(len("% header 1\n%EndEventDef\nev 1\nev 2\nev 3\n")) || p.Line != 5 {
		t.Errorf("position %+v", p)
	}
	// Start at the end: only the header and what comes next.
	_, c3, stop3 := start(t, Options{Path: path, Start: FromEnd})
	c3.waitFor(t, "% header 1", "%EndEventDef")
	appendTo(t, path, "ev 4\n")
	c3.waitFor(t, "% header 1", "%EndEventDef", "ev 4")
	stop3()
}

// TestPositionWaitsForDurability: the position is saved only when the
// pipeline released the checkpoint: a restart after lines that were never
// made durable reads them again.
func TestPositionWaitsForDurability(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace")
	pos := filepath.Join(dir, "pos.json")
	appendTo(t, path, "% h\nev 1\n")
	_, c, stop := start(t, Options{Path: path, PositionFile: pos, SyncEvery: time.Millisecond})
	c.waitFor(t, "% h", "ev 1")
	stop()
	appendTo(t, path, "ev 2\n")
	_, c, stop = start(t, Options{Path: path, PositionFile: pos, SyncEvery: time.Millisecond}, true)
	c.waitFor(t, "% h", "ev 2")
	stop() // "ev 2" was never durable
	_, c, stop = start(t, Options{Path: path, PositionFile: pos})
	c.waitFor(t, "% h", "ev 2")
	stop()
}

// TestRebuild: with Rebuild, resuming in the same file reads it from its
// start (a Paje parser needs the containers defined before).
func TestRebuild(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace")
	pos := filepath.Join(dir, "pos.json")
	appendTo(t, path, "% h\nev 1\n")
	_, c, stop := start(t, Options{Path: path, PositionFile: pos, Rebuild: true})
	c.waitFor(t, "% h", "ev 1")
	stop()
	appendTo(t, path, "ev 2\n")
	_, c, stop = start(t, Options{Path: path, PositionFile: pos, Rebuild: true})
	c.waitFor(t, "% h", "ev 1", "ev 2")
	stop()
	// A stop mid-run makes the stages forget the stream (its last windows
	// are not final); the end of input (EndAfter) does not.
	if c.resets != 1 {
		t.Errorf("%d resets at the stop, want 1", c.resets)
	}
	s, err := New(Options{Path: path, EndAfter: 20 * time.Millisecond, Poll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c = &collector{}
	if err := s.Run(t.Context(), c.emit); err != nil {
		t.Fatal(err)
	}
	if len(c.lines) != 3 || c.resets != 0 {
		t.Errorf("end_after: %d lines, %d resets", len(c.lines), c.resets)
	}
}

func TestBadOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("no path accepted")
	}
	if _, err := New(Options{Path: "x", Start: "middle"}); err == nil {
		t.Error("bad start accepted")
	}
}
