package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

var sink []byte

// garbage allocates n MiB that become garbage at once.
func garbage(n int) {
	for range n {
		sink = make([]byte, 1<<20)
	}
	sink = nil
}

func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// TestFloor: no collection before the floor, the usual pacing and the
// wanted limit after the first one.
func TestFloor(t *testing.T) {
	t.Setenv("GOGC", "")
	pct := debug.SetGCPercent(100)
	lim := debug.SetMemoryLimit(math.MaxInt64)
	defer func() {
		endFloor()
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(lim)
	}()
	runtime.GC()
	n := numGC()
	Floor(96 << 20)
	// A limit set during the floor waits for its end.
	if prev := SetLimit(1 << 40); prev != math.MaxInt64 {
		t.Errorf("SetLimit returned %d, want the limit before the floor", prev)
	}
	if l := debug.SetMemoryLimit(-1); l != 96<<20 {
		t.Errorf("memory limit during the floor %d, want the floor", l)
	}
	// 32 MiB of garbage: at GOGC=100 over a heap of a few MiB, several
	// collections.
	garbage(32)
	if got := numGC(); got != n {
		t.Fatalf("%d collections below the floor, want none", got-n)
	}
	garbage(256)
	if numGC() == n {
		t.Fatal("no collection past the floor")
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		floor.Lock()
		active := floor.active
		floor.Unlock()
		if !active {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the floor did not end after the first collection")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC %d after the floor, want 100", p)
	}
	if l := debug.SetMemoryLimit(-1); l != 1<<40 {
		t.Errorf("memory limit %d after the floor, want the one set during it", l)
	}
}

// TestFloorRespectsGOGC: GOGC in the environment is the user's pacing.
func TestFloorRespectsGOGC(t *testing.T) {
	t.Setenv("GOGC", "200")
	pct := debug.SetGCPercent(100)
	defer debug.SetGCPercent(pct)
	Floor(96 << 20)
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("Floor changed GOGC to %d with GOGC set", p)
	}
}

// TestFollowLive: the limit is the floor while the live heap is small,
// then follows it (+ 16 MiB or a quarter of it) after a collection, and
// stays where it was once stopped.
func TestFollowLive(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	lim := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(lim)
	runtime.GC()
	stop := FollowLive(64 << 20)
	if l := debug.SetMemoryLimit(-1); l != 64<<20 {
		t.Fatalf("limit %d with a small live heap, want the floor", l)
	}
	live := make([][]byte, 96) // 96 MiB live
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	want := int64(96<<20) * 5 / 4
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		time.Sleep(time.Millisecond)
		l := debug.SetMemoryLimit(-1)
		if l >= want && l < want+16<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("limit %d MiB with 96 MiB live, want about %d", l>>20, want>>20)
		}
	}
	runtime.KeepAlive(live)
	stop()
	live = nil
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if l := debug.SetMemoryLimit(-1); l < want {
		t.Fatalf("limit %d MiB after stop, want it left at %d", l>>20, want>>20)
	}
}

// TestFollowLiveRespectsGOMEMLIMIT: the user's limit stays.
func TestFollowLiveRespectsGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	lim := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(lim)
	FollowLive(64 << 20)()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("limit %d, want it untouched", l)
	}
}
