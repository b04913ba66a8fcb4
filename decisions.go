package tracecast

import "encoding/json"

// Decision is one back-end task a backfill policy launched
// (docs/backfill.md): on Worker (a gang's Workers, a JSON list, for
// `--gang K`), at Start for D seconds of work after Overhead seconds of
// set-up, times on the trace's clock in seconds, and what became of it:
// Outcome is "completed", "killed" (kill mode: the primary took the worker
// back first) or "overran" (wait mode: the primary waited for it). P is the
// probability the policy acted on (that the spell outlasts the task), when
// it had one; Alpha the cost ratio it decided for and Timeout its τ, when
// it depends on them.
type Decision struct {
	ID       string          `json:"id" desc:"unique: RUN/POLICY/D[/aALPHA][/tTAU]/N"`
	Policy   string          `json:"policy" desc:"the policy that launched it" schema:"enum=greedy|timeout|online-timeout|residual|forecast|hindsight-timeout|oracle"`
	Run      string          `json:"run" desc:"the run id"`
	Worker   string          `json:"worker" tracecast:"nullable" desc:"the container's name as tracecast states prints it; null for a gang task"`
	Workers  json.RawMessage `json:"workers" tracecast:"nullable" desc:"a gang task's workers; null otherwise" schema:"type=array,items=string"`
	Start    float64         `json:"start" desc:"launch time, seconds on the trace's clock"`
	D        float64         `json:"d" desc:"the task's length (seconds of work)" schema:"minimum=0"`
	Overhead float64         `json:"overhead" desc:"its set-up cost o, seconds, spent before its work starts" schema:"minimum=0"`
	Mode     string          `json:"mode" desc:"kill: the task is killed when the primary takes its worker back; wait: it completes and the primary waits" schema:"enum=kill|wait"`
	Alpha    float64         `json:"alpha" tracecast:"nullable" desc:"the cost ratio α the policy decided for; null for policies that do not depend on it" schema:"minimum=0"`
	Timeout  float64         `json:"timeout" tracecast:"nullable" desc:"the timeout τ (timeout and hindsight-timeout), seconds; null otherwise" schema:"minimum=0"`
	Outcome  string          `json:"outcome" desc:"completed within the spell, killed at its end (kill mode), or overran it (wait mode)" schema:"enum=completed|killed|overran"`
	P        float64         `json:"p" tracecast:"nullable" desc:"the probability the policy acted on (the spell outlasts the task), when it had one" schema:"minimum=0,maximum=1"`
}

// SpellForecast is a forecast of how much longer an idle worker stays idle,
// or a busy one busy (State; docs/backfill.md), issued at IssuedAt when its
// spell had lasted Elapsed seconds: P that it lasts at least D more, and
// the 10% and 50% quantiles of its remaining time in that state (Q10, Q50;
// null beyond the model's range).
type SpellForecast struct {
	ID       string  `json:"id" desc:"unique: RUN/WORKER/D/N, N counting the run's issues"`
	Run      string  `json:"run" desc:"the run id"`
	Worker   string  `json:"worker" desc:"the container's name as tracecast states prints it"`
	State    string  `json:"state" desc:"the spell's: idle, or busy (not idle: computing or communicating)" schema:"enum=idle|busy"`
	IssuedAt float64 `json:"issued_at" desc:"issue time, seconds on the trace's clock"`
	Elapsed  float64 `json:"elapsed" desc:"how long the spell has lasted at issued_at, seconds" schema:"minimum=0"`
	D        float64 `json:"d" desc:"the length asked about, seconds" schema:"minimum=0"`
	P        float64 `json:"p" desc:"P(the spell lasts at least d more)" schema:"minimum=0,maximum=1"`
	Q10      float64 `json:"q10" tracecast:"nullable" desc:"10% quantile of the spell's remaining time, seconds, calibrated online so that 90% of the remaining times reach it; at most q50; null beyond the model's range" schema:"minimum=0"`
	Q50      float64 `json:"q50" tracecast:"nullable" desc:"median remaining time of the spell, seconds (the model's, never below q10); null beyond the model's range" schema:"minimum=0"`
	Method   string  `json:"method" desc:"the forecaster (spell)"`
}
