package file

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Speed is a replay pace: how many seconds of trace time pass per second of
// wall time. The zero value means "as fast as possible" (no pacing).
type Speed float64

// Named speeds.
const (
	// SpeedMax replays without pacing.
	SpeedMax Speed = 0
	// SpeedRealtime replays one second of trace time per wall second.
	SpeedRealtime Speed = 1
)

// ParseSpeed parses "max" (or ""), "realtime" or "Nx" with N a positive
// number ("10x", "0.5x"). The form mirrors the CLI's --speed flag.
func ParseSpeed(s string) (Speed, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "max":
		return SpeedMax, nil
	case "realtime":
		return SpeedRealtime, nil
	}
	num, ok := strings.CutSuffix(strings.ToLower(strings.TrimSpace(s)), "x")
	if !ok {
		return 0, fmt.Errorf("invalid speed %q: want max, realtime or a factor like 10x or 0.5x", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("invalid speed %q: the factor must be a positive number (10x, 0.5x)", s)
	}
	return Speed(f), nil
}

// String formats s the way ParseSpeed reads it.
func (s Speed) String() string {
	switch s {
	case SpeedMax:
		return "max"
	case SpeedRealtime:
		return "realtime"
	}
	return strconv.FormatFloat(float64(s), 'g', -1, 64) + "x"
}

// Clock is the time source used for pacing. It is an interface so that a
// caller can substitute its own notion of time; tests simply run the default
// SystemClock inside a testing/synctest bubble, where time is virtual.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever comes first, and
	// returns ctx.Err() in the latter case.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the Clock backed by package time.
var SystemClock Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// minSleep is the smallest delay worth a sleep: shorter waits are deferred
// (targets are absolute, so nothing drifts) to keep batches large and timers
// rare.
const minSleep = time.Millisecond

// pacer maps trace time to wall-clock deadlines. Deadlines are computed from
// the first timed line, not from the previous one, so rounding and scheduling
// delays never accumulate. Trace time only moves forward: traces that are not
// globally time-sorted (StarPU) are paced by their running maximum.
type pacer struct {
	clock   Clock
	perSec  float64 // trace units per wall second: TimeScale × Speed
	started bool
	t0, max float64
	w0      time.Time
}

// delay returns how long to wait before releasing a line stamped t.
func (p *pacer) delay(t float64) time.Duration {
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return 0
	}
	if !p.started {
		p.started, p.t0, p.max, p.w0 = true, t, t, p.clock.Now()
		return 0
	}
	if t <= p.max {
		return 0
	}
	p.max = t
	offset := (t - p.t0) / p.perSec * float64(time.Second)
	if offset > float64(math.MaxInt64/2) {
		offset = float64(math.MaxInt64 / 2)
	}
	return p.w0.Add(time.Duration(offset)).Sub(p.clock.Now())
}
