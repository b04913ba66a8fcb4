package main

import (
	"fmt"
	"math"
)

// plan holds the fields of a tracecast.plan/1 record (docs/backfill.md):
// the forecast policy's launch windows for one idle worker and one task
// length, or the end of its spell ("busy") or of the run ("end").
type plan struct {
	Schema     string       `json:"schema"`
	ID         string       `json:"id"`
	Run        string       `json:"run"`
	Worker     string       `json:"worker"`
	IssuedAt   float64      `json:"issued_at"`
	Event      string       `json:"event"`
	SpellStart *float64     `json:"spell_start"`
	D          float64      `json:"d"`
	Overhead   float64      `json:"overhead"`
	Mode       string       `json:"mode"`
	Alpha      float64      `json:"alpha"`
	Launch     [][]*float64 `json:"launch"` // [from, to]; to null: no end
	P          []float64    `json:"p"`
}

// decision is a back-end task the scheduler launched, written as a
// tracecast.decision/1 record once its outcome is known.
type decision struct {
	Record   string   `json:"record"`
	ID       string   `json:"id"`
	Policy   string   `json:"policy"`
	Run      string   `json:"run"`
	Worker   string   `json:"worker"`
	Workers  []string `json:"workers"`
	Start    float64  `json:"start"`
	D        float64  `json:"d"`
	Overhead float64  `json:"overhead"`
	Mode     string   `json:"mode"`
	Alpha    float64  `json:"alpha"`
	Timeout  *float64 `json:"timeout"`
	Outcome  string   `json:"outcome"`
	P        float64  `json:"p"`
}

// eps is how close two times are to count as equal, as tracecast counts
// them: a task ending within it of the spell's end completed; a launch
// within it of the end does not happen.
const eps = 1e-9

type laneKey struct {
	run, worker string
	d, alpha    float64
}

// lane is one worker and one task length: what the scheduler knows of the
// worker (idle since start) and of its own task on it.
type lane struct {
	key             laneKey
	mode            string
	overhead        float64
	idle            bool
	start           float64
	from, to, p     []float64 // the launch windows
	running         bool
	overran         bool
	taskStart, done float64 // the running task's start and end
	taskP           float64
	next, nextP     float64 // the next launch (+Inf: none)
}

// follower applies the plans of any number of runs, in the order each
// run's records were issued, and emits a decision once its outcome is
// known.
type follower struct {
	lanes map[laneKey]*lane
	emit  func(decision)
}

func newFollower(emit func(decision)) *follower {
	return &follower{lanes: map[laneKey]*lane{}, emit: emit}
}

// apply takes the next plan record of its run.
func (f *follower) apply(p plan) error {
	if p.Event == "end" {
		for k, l := range f.lanes {
			if k.run == p.Run && k.d == p.D && k.alpha == p.Alpha {
				l.idle = false
				f.advance(l, math.Inf(1))
				delete(f.lanes, k)
			}
		}
		return nil
	}
	k := laneKey{p.Run, p.Worker, p.D, p.Alpha}
	l := f.lanes[k]
	if l == nil {
		l = &lane{key: k, mode: p.Mode, overhead: p.Overhead, next: math.Inf(1)}
		f.lanes[k] = l
	}
	t := p.IssuedAt
	f.advance(l, t) // what happened before this record
	switch p.Event {
	case "idle", "update":
		if p.SpellStart == nil || len(p.Launch) != len(p.P) {
			return fmt.Errorf("plan %s: no spell_start, or launch and p of different lengths", p.ID)
		}
		l.idle, l.start = true, *p.SpellStart
		l.from, l.to, l.p = l.from[:0], l.to[:0], p.P
		for _, w := range p.Launch {
			if len(w) != 2 || w[0] == nil {
				return fmt.Errorf("plan %s: a launch window is not [from, to]", p.ID)
			}
			to := math.Inf(1)
			if w[1] != nil {
				to = *w[1]
			}
			l.from, l.to = append(l.from, *w[0]), append(l.to, to)
		}
		if !l.running {
			l.replan(t)
		}
	case "busy":
		l.idle, l.next = false, math.Inf(1)
		if l.running && l.done > t+eps && !l.overran {
			if l.mode == "kill" { // the primary takes the worker back
				l.running = false
				f.decide(l, "killed")
			} else { // the primary waits for the task
				l.overran = true
			}
		}
	default:
		return fmt.Errorf("plan %s: unknown event %q", p.ID, p.Event)
	}
	return nil
}

// replan sets the next launch from now on: at once inside a window, else
// at the start of the next one.
func (l *lane) replan(now float64) {
	l.next = math.Inf(1)
	x := now - l.start
	for i := range l.from {
		switch {
		case l.from[i] <= x && x < l.to[i]:
			l.next, l.nextP = now, l.p[i]
			return
		case l.from[i] > x:
			l.next, l.nextP = l.start+l.from[i], l.p[i]
			return
		}
	}
}

// advance runs the lane's launches and completions before t.
func (f *follower) advance(l *lane, t float64) {
	for {
		if l.running {
			if l.done > t+eps {
				return
			}
			l.running = false
			if l.overran {
				f.decide(l, "overran")
			} else {
				f.decide(l, "completed")
			}
			if !l.idle {
				return
			}
			l.replan(l.done) // back to back
			continue
		}
		if !(l.next < t-eps) {
			return
		}
		l.running, l.overran = true, false
		l.taskStart, l.done, l.taskP = l.next, l.next+l.overhead+l.key.d, l.nextP
		l.next = math.Inf(1)
	}
}

func (f *follower) decide(l *lane, outcome string) {
	// One task at a time per worker and length: its start names it.
	id := fmt.Sprintf("%s/scheduler/%s/%g/a%g/%.9f", l.key.run, l.key.worker, l.key.d, l.key.alpha, l.taskStart)
	f.emit(decision{Record: "decision", ID: id, Policy: "forecast",
		Run: l.key.run, Worker: l.key.worker, Start: l.taskStart, D: l.key.d, Overhead: l.overhead, Mode: l.mode,
		Alpha: l.key.alpha, Outcome: outcome, P: l.taskP})
}
