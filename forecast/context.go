package forecast

import "math"

// Context is what the trace says at an issue time t besides the count of
// the class: the runtime's task counts, what each selected container is
// doing and for how long it is expected to go on. A feature feed
// (stages/features) fills it from the trace up to t only; a field the
// trace has no data for is NaN (counts) or empty (lists), and the
// forecasters then read it as absent, not as zero tasks.
type Context struct {
	// Ready and Submitted are the scheduler's ready tasks and the tasks
	// submitted and not completed (StarPU's variables), NaN when absent.
	Ready, Submitted float64
	// SinceSubmit is the time since the last task submission ended
	// (seconds), NaN before any or without submissions in the trace.
	SinceSubmit float64
	// Busy holds, per container computing at t, the expected remaining
	// time of its current state (seconds; a per-state-value duration
	// model learnt from the states already finished).
	Busy []float64
	// Idle holds, per container in the counted class at t, its spell's
	// age and its current state's expected remaining time.
	Idle []Spell
	// Comm is the number of containers communicating at t (StarPU:
	// fetching a task's input, which it will run next).
	Comm int
}

// Spell is an idle container's current spell: how long it has lasted and
// how much longer its current state is expected to (seconds; NaN: no
// duration known for that state yet).
type Spell struct {
	Age, Remaining float64
}

// Reset empties c (every field absent).
func (c *Context) Reset() {
	c.Ready, c.Submitted, c.SinceSubmit = math.NaN(), math.NaN(), math.NaN()
	c.Busy, c.Idle, c.Comm = c.Busy[:0], c.Idle[:0], 0
}

// ContextFunc fills c with the context at t (Context.Reset first). The
// engine calls it at each issue time, after every change at or before t
// and before any later one: the feed behind it must have applied the
// trace up to t and nothing after.
type ContextFunc func(t float64, c *Context)

// The context features of the learners, appended to the occupancy
// features (featCtx + i), each scaled to about [0, 1] and 0 when its field
// is absent (a weight that starts at 0 and stays there on a trace without
// it).
const (
	ctxReady     = iota // ready tasks / R, at most 2, halved
	ctxWaiting          // (submitted − busy) / R in [0, 2], halved: tasks queued somewhere
	ctxNoWait           // 1 when no task waits (submitted ≤ busy): idle workers stay idle
	ctxPhase            // 1 − e^{−since last submission / H}: the run's end phase
	ctxFreeSoon         // busy containers expected to end within H/2, / R
	ctxIdleLong         // idle containers whose state is expected to outlast H, / R
	ctxComm             // communicating containers / R
	ctxCrossUp          // [X + freeSoon·R ≥ k]: the threshold crossed upward by the frees
	ctxCrossDown        // [X − idle ending within H/2 ≥ k]: still crossed once the short idles end
	numCtx
)

// contextFeatures writes the context features for horizon h, threshold k,
// count x of r into f (numCtx values), and returns the queue's count: the
// containers expected in the class by the middle of the horizon (ok false
// without the task counts).
//
// The queue's count is max(0, x + f − w): the x idle containers and the f
// busy ones expected to end within H/2, less one per task waiting (w =
// submitted − busy), which an idle worker takes up. A worker that goes
// idle with no task waiting stays idle until a running task ends; one that
// goes idle with ten waiting does not.
func contextFeatures(c *Context, h float64, k, x, r int, f []float64) (queue float64, ok bool) {
	clear(f[:numCtx])
	if r <= 0 {
		return 0, false
	}
	rf := float64(r)
	if !math.IsNaN(c.Ready) {
		f[ctxReady] = math.Min(c.Ready/rf, 2) / 2
	}
	busy := len(c.Busy)
	if !math.IsNaN(c.Submitted) {
		w := (c.Submitted - float64(busy)) / rf
		f[ctxWaiting] = math.Max(0, math.Min(w, 2)) / 2
		f[ctxNoWait] = b2f(w <= 0)
	}
	if !math.IsNaN(c.SinceSubmit) {
		f[ctxPhase] = -math.Expm1(-c.SinceSubmit / h)
	}
	free := 0
	for _, rem := range c.Busy {
		if rem < h/2 {
			free++
		}
	}
	long, short := 0, 0
	for _, s := range c.Idle {
		switch {
		case math.IsNaN(s.Remaining):
		case s.Remaining > h:
			long++
		case s.Remaining < h/2:
			short++
		}
	}
	f[ctxFreeSoon] = float64(free) / rf
	f[ctxIdleLong] = float64(long) / rf
	f[ctxComm] = float64(c.Comm) / rf
	f[ctxCrossUp] = b2f(x+free >= k)
	f[ctxCrossDown] = b2f(x-short >= k)
	if math.IsNaN(c.Submitted) {
		return 0, false
	}
	w := math.Max(0, c.Submitted-float64(busy))
	return math.Min(rf, math.Max(0, float64(x+free)-w)), true
}
