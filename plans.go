package tracecast

import "encoding/json"

// Plan is the forecast backfill policy's plan for one idle worker and one
// task length (docs/backfill.md, "A scheduler acting on the plans"): while
// the worker's spell, which started at SpellStart, has lasted an elapsed
// time inside one of the Launch windows ([from, to) in seconds of idle, to
// null for no end), a task of D seconds of work (after Overhead seconds of
// set-up) is worth launching at once and back to back, at Alpha's cost of
// waste or delay in Mode; outside them it is worth waiting for the next
// window. P holds P(the spell outlasts o + d) at each window's start.
//
// Event says why the record was issued at IssuedAt: "idle" (the worker's
// spell started), "update" (the plan changed: the model learnt, the
// features moved), "busy" (the spell ended: stop launching; a running task
// is killed or overruns), "end" (the run ended: Worker is empty). A
// scheduler that applies the windows to the records in order, with what it
// knows of its own tasks, launches exactly what `tracecast backfill
// --policy forecast` launches on the same trace.
type Plan struct {
	ID         string          `json:"id" desc:"unique: RUN/plan/D/aALPHA/N, N counting the lane's plans"`
	Run        string          `json:"run" desc:"the run id"`
	Worker     string          `json:"worker" desc:"the container's name as tracecast states prints it; empty for the run's end"`
	IssuedAt   float64         `json:"issued_at" desc:"issue time, seconds on the trace's clock"`
	Event      string          `json:"event" desc:"idle: the spell started; update: the windows changed; busy: the spell ended; end: the run ended" schema:"enum=idle|update|busy|end"`
	SpellStart float64         `json:"spell_start" tracecast:"nullable" desc:"when the worker's spell started, seconds on the trace's clock; null at the run's end"`
	D          float64         `json:"d" desc:"the back-end task's length (seconds of work)" schema:"minimum=0"`
	Overhead   float64         `json:"overhead" desc:"its set-up cost o, seconds" schema:"minimum=0"`
	Mode       string          `json:"mode" desc:"kill or wait, as in decisions" schema:"enum=kill|wait"`
	Alpha      float64         `json:"alpha" desc:"the cost ratio α the plan is made for" schema:"minimum=0"`
	Launch     json.RawMessage `json:"launch" tracecast:"nullable" desc:"the launch windows [from, to) of elapsed idle, seconds (to null: no end); null when the spell or the run ended" schema:"type=array"`
	P          json.RawMessage `json:"p" tracecast:"nullable" desc:"P(the spell outlasts o + d) at each window's start; null with launch" schema:"type=array,items=number"`
}
