package tail

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
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

// readThenAppend runs a source with o on a new trace, "% h" and "ev 1",
// with a position file (o.Path and o.PositionFile, in a temporary
// directory), stops it once it read both lines and appends "ev 2": o for
// the restart.
func readThenAppend(t *testing.T, o Options) Options {
	t.Helper()
	dir := t.TempDir()
	o.Path, o.PositionFile = filepath.Join(dir, "trace"), filepath.Join(dir, "pos.json")
	appendTo(t, o.Path, "% h\nev 1\n")
	_, c, stop := start(t, o)
	c.waitFor(t, "% h", "ev 1")
	stop()
	appendTo(t, o.Path, "ev 2\n")
	return o
}

// TestPositionWaitsForDurability: the position is saved only when the
// pipeline released the checkpoint: a restart after lines that were never
// made durable reads them again.
func TestPositionWaitsForDurability(t *testing.T) {
	o := readThenAppend(t, Options{SyncEvery: time.Millisecond})
	_, c, stop := start(t, o, true)
	c.waitFor(t, "% h", "ev 2")
	stop() // "ev 2" was never durable
	_, c, stop = start(t, Options{Path: o.Path, PositionFile: o.PositionFile})
	c.waitFor(t, "% h", "ev 2")
	stop()
}

// TestRebuild: with Rebuild, resuming in the same file reads it from its
// start (a Paje parser needs the containers defined before).
func TestRebuild(t *testing.T) {
	o := readThenAppend(t, Options{Rebuild: true})
	path := o.Path
	_, c, stop := start(t, o)
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

// startWith runs a Source with o as given (start sets a 5 ms poll).
func startWith(t *testing.T, o Options) (*collector, func()) {
	t.Helper()
	if o.StopSaveTimeout == 0 {
		o.StopSaveTimeout = 200 * time.Millisecond
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, c.emit) }()
	return c, func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// With notifications, the poll is only a fallback: with an hour's poll the
// file appearing, lines appended (a partial one completed later),
// truncation and rotation are all seen at once.
func TestNotifications(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace")
	c, stop := startWith(t, Options{Path: path, Poll: time.Hour})
	defer stop()
	appendTo(t, path, "%EventDef PajeNewEvent 1\n1 0.5 a")
	c.waitFor(t, "%EventDef PajeNewEvent 1")
	appendTo(t, path, " b\n1 0.6 c\n")
	c.waitFor(t, "%EventDef PajeNewEvent 1", "1 0.5 a b", "1 0.6 c")
	os.WriteFile(path, []byte("x\n"), 0o644)
	c.waitFor(t, "%EventDef PajeNewEvent 1", "1 0.5 a b", "1 0.6 c", "x")
	os.Rename(path, path+".1")
	appendTo(t, path+".1", "z-old\n")
	appendTo(t, path, "first-new\n")
	c.waitFor(t, "%EventDef PajeNewEvent 1", "1 0.5 a b", "1 0.6 c", "x", "z-old", "first-new")
}

// A writer appending numbered lines in pieces of random sizes (lines cut
// anywhere, bursts and pauses) while the source follows: every line comes
// out once, in order, whole, whether notifications or polls wake the
// source, and whatever the batch size.
func TestNoLossNoDuplicate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"notify", Options{Poll: time.Hour}},
		{"notify, small batches", Options{Poll: time.Hour, BatchLines: 3}},
		{"notify and a fast poll", Options{Poll: 100 * time.Microsecond}},
		{"poll only", Options{Poll: time.Millisecond, NoNotify: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace")
			tc.o.Path = path
			var all strings.Builder
			const n = 20000
			for i := range n {
				fmt.Fprintf(&all, "line %d %s\n", i, strings.Repeat("x", i%37))
			}
			data := all.String()
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			c, stop := startWith(t, tc.o)
			defer stop()
			rng := rand.New(rand.NewPCG(1, 2))
			for len(data) > 0 {
				k := min(len(data), 1+rng.IntN(4000))
				if _, err := f.WriteString(data[:k]); err != nil {
					t.Fatal(err)
				}
				data = data[k:]
				if rng.IntN(20) == 0 {
					time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(c.texts()) < n && time.Now().Before(deadline) {
				time.Sleep(2 * time.Millisecond)
			}
			got := c.texts()
			if len(got) != n {
				t.Fatalf("%d lines, want %d", len(got), n)
			}
			for i, l := range got {
				if want := fmt.Sprintf("line %d %s", i, strings.Repeat("x", i%37)); l != want {
					t.Fatalf("line %d is %q, want %q", i, l, want)
				}
			}
		})
	}
}

// Without notifications the poll is the cadence: a line appended while the
// source sleeps arrives when the poll period is over, not before; and the
// input ends EndAfter after the file last grew. (synctest: the clock is the
// bubble's.)
func TestPollFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "trace")
		appendTo(t, path, "a\n")
		s, err := New(Options{Path: path, Poll: time.Second, NoNotify: true, EndAfter: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		c := &collector{}
		done := make(chan error, 1)
		go func() { done <- s.Run(t.Context(), c.emit) }()
		synctest.Wait()
		if got := c.texts(); len(got) != 1 {
			t.Fatalf("lines %q at the start", got)
		}
		appendTo(t, path, "b\n")
		time.Sleep(time.Second - time.Nanosecond)
		synctest.Wait()
		if got := c.texts(); len(got) != 1 {
			t.Fatalf("lines %q before the poll period is over", got)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if got := c.texts(); len(got) != 2 {
			t.Fatalf("lines %q once the poll period is over", got)
		}
		// The file last grew at 1 s: the input ends 10 s later, at the
		// first poll after that.
		time.Sleep(10*time.Second - time.Nanosecond)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("ended early: %v", err)
		default:
		}
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("still following 11 s after the last growth")
		}
	})
}

// A notification watcher that cannot be made (its directory is missing)
// leaves polling: the file is still found once it appears.
func TestNotificationsUnavailable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "later")
	path := filepath.Join(dir, "trace")
	c, stop := startWith(t, Options{Path: path, Poll: 5 * time.Millisecond})
	defer stop()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "a\n")
	c.waitFor(t, "a")
}

// A rotation whose old file gets its last lines after the rename: the
// notification for the new file wakes the follower, which drains the old
// one first and must then switch at once, not wait for the next
// notification (with an hour's poll: never).
func TestNotificationsDrainThenSwitch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace")
	appendTo(t, path, "a\n")
	c, stop := startWith(t, Options{Path: path, Poll: time.Hour})
	defer stop()
	c.waitFor(t, "a")
	os.Rename(path, path+".1")
	time.Sleep(100 * time.Millisecond) // the follower sees the rename, no new file yet
	appendTo(t, path+".1", "z-old\n")  // no event for the followed name
	appendTo(t, path, "first-new\n")
	c.waitFor(t, "a", "z-old", "first-new")
}
