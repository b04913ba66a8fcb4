package synth

import (
	"container/heap"
	"io"
	"math"
)

// BackEnd is a second queue of back-end tasks placed live on the idle
// workers of a run (RunClosedLoop; package backfill/closedloop puts a
// backfill policy behind it). The simulation tells it, in time order,
// when each worker is idle — it has no primary task — and when the
// primary takes it back, and the counts a runtime knows; it answers with
// the tasks it launches. It sees nothing of the run's future. Times are
// the trace's milliseconds; workers are numbered from 0.
type BackEnd interface {
	// Begin starts the run at t with every one of the workers idle.
	Begin(t float64, workers int)
	// Idle says that worker w is idle (no primary task) from t on, or,
	// idle false, that the primary takes it from t on.
	Idle(t float64, w int, idle bool)
	// Counts are the ready tasks not yet given to a worker and the tasks
	// submitted and not completed, from t on.
	Counts(t float64, ready, submitted int)
	// Advance returns the launches that start before t not yet returned.
	Advance(t float64) []Launch
	// Finish ends the run at t (the last primary task's end) and returns
	// the launches not yet returned.
	Finish(t float64) []Launch
}

// Launch is a back-end task on Worker from Start to End (ms).
type Launch struct {
	Worker     int
	Start, End float64
}

// LoopSummary is a closed-loop run's Summary, with what the back-end did
// to the primary.
type LoopSummary struct {
	Summary
	// TaskStarts is, per task, when its codelet started (ms).
	TaskStarts []float64
	// Launches are the back-end tasks launched, BackEndMS their time on
	// the workers (start to end, summed).
	Launches  int
	BackEndMS float64
	// Held counts the primary tasks that waited for a back-end task.
	Held int
	// PrimaryEndMS is the last primary task's end.
	PrimaryEndMS float64
}

// loopEps is how close two times (ms) are to count as equal: 1 ns, the
// backfill engine's tolerance (its times are seconds; ms → s → ms
// conversions round).
const loopEps = 1e-6

// RunClosedLoop runs the DAG as WriteTrace does, with a second queue of
// back-end tasks placed live by be, and streams the trace: each back-end
// task is a state "Backfill" of its worker, from its launch to its end.
//
// Wait mode: a launched task always completes. A worker is idle, for be,
// from when it has no primary task to run (it goes to sleep) until the
// list scheduler gives it one; the runtime states around a task are part
// of the task. When a task is ready the scheduler prefers a worker that
// is free — idle and running no back-end task — (the lowest-numbered, as
// WriteTrace), as a runtime would: a worker running a back-end task is
// not available to it. When every idle worker is running one, the task
// goes to the one whose back-end task ends first and starts when it ends
// (the primary waits); be is told at once that the primary took the
// worker back. The run starts at TraceParams.StartMS, when the runtime
// accepts tasks: every worker is idle for be from then on.
//
// With a be that never launches, the trace is WriteTrace's, byte for
// byte.
func RunClosedLoop(out io.Writer, d *DAG, p TraceParams, be BackEnd) (LoopSummary, error) {
	return simulate(out, d, p, be)
}

// floatHeap is a min-heap of times.
type floatHeap []float64

func (h floatHeap) Len() int           { return len(h) }
func (h floatHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h floatHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *floatHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *floatHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// loopState is the simulation's side of the closed loop.
type loopState struct {
	be       BackEnd
	finishes floatHeap // pending primary completions (kFinish)
	// bfEnd is the end of each worker's last back-end task (−Inf: none);
	// bfOpen that the line after it (Sleeping, unless another task
	// follows back to back or the primary takes the worker) is not
	// written yet: it is, once the launches up to its time are known.
	bfEnd   []float64
	bfOpen  []bool
	lastEnd float64
	starts  []float64
	defined bool // the Backfill state value's definition line is written
	written float64
	sum     LoopSummary
}

func newLoopState(be BackEnd, workers, tasks int, start float64) *loopState {
	l := &loopState{be: be, bfEnd: make([]float64, workers), bfOpen: make([]bool, workers),
		lastEnd: math.Inf(-1), starts: make([]float64, tasks), written: math.Inf(-1)}
	for w := range l.bfEnd {
		l.bfEnd[w] = math.Inf(-1)
	}
	be.Begin(start, workers)
	return l
}

// nextFinish is the time of the next primary completion, if any.
func (l *loopState) nextFinish() (float64, bool) {
	if len(l.finishes) == 0 {
		return 0, false
	}
	return l.finishes[0], true
}

// finished pops the completion the simulation just processed.
func (l *loopState) finished() { heap.Pop(&l.finishes) }

// monotone keeps the written times in order: a launch the engine runs
// lazily within 1 ns before the time it was advanced to can come after
// lines at that time.
func (l *loopState) monotone(t float64) float64 {
	if t < l.written {
		return l.written
	}
	l.written = t
	return t
}

// claim gives a ready task a worker at now: the lowest-numbered free one,
// else the one whose back-end task ends first; it returns the worker and
// when the primary can start there.
func (l *loopState) claim(idle *intHeap, now float64) (int, float64) {
	best := -1
	for i, w := range *idle {
		if best < 0 {
			best = i
			continue
		}
		b := (*idle)[best]
		fw, fb := l.bfEnd[w] <= now+loopEps, l.bfEnd[b] <= now+loopEps
		switch {
		case fw && !fb, fw == fb && fw && w < b:
			best = i
		case !fw && !fb && (l.bfEnd[w] < l.bfEnd[b] || l.bfEnd[w] == l.bfEnd[b] && w < b):
			best = i
		}
	}
	w := int(heap.Remove(idle, best).(int32))
	l.be.Idle(now, w, false)
	l.bfOpen[w] = false // the primary's lines follow the back-end task
	t := now
	if l.bfEnd[w] > now+loopEps {
		t = l.bfEnd[w]
		l.sum.Held++
	}
	return w, t
}

// launched writes the back-end's launches (their lines go into pending),
// and the Sleeping line after each back-end task that ended before
// horizon − 1 ns with no task after it (every launch before horizon is
// known).
func (l *loopState) launched(ls []Launch, horizon float64, push func(float64, int, uint8, string, int), pending evHeap) {
	for _, b := range ls {
		w := b.Worker
		if l.bfOpen[w] && b.Start > l.bfEnd[w]+loopEps {
			push(l.bfEnd[w], w, kSet, "Sl", -1)
		}
		// The worker was going to sleep: the back-end task replaces the
		// rest of that.
		for i := range pending {
			if e := &pending[i]; int(e.w) == w && e.kind == kSet && e.task < 0 && e.t >= b.Start-loopEps {
				e.dead = true
			}
		}
		push(b.Start, w, kBackfill, "", -1)
		l.bfOpen[w], l.bfEnd[w] = true, b.End
		l.lastEnd = math.Max(l.lastEnd, b.End)
		l.sum.Launches++
		l.sum.BackEndMS += b.End - b.Start
	}
	for w, open := range l.bfOpen {
		if open && l.bfEnd[w] < horizon-loopEps {
			push(l.bfEnd[w], w, kSet, "Sl", -1)
			l.bfOpen[w] = false
		}
	}
}
