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
	ID       string
	Policy   string
	Run      string
	Worker   string          `tracecast:"nullable"`
	Workers  json.RawMessage `tracecast:"nullable"`
	Start    float64
	D        float64
	Overhead float64
	Mode     string
	Alpha    float64 `tracecast:"nullable"`
	Timeout  float64 `tracecast:"nullable"`
	Outcome  string
	P        float64 `tracecast:"nullable"`
}

// AppendJSON writes the decision as one JSON object, "record" first.
func (d Decision) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"decision"`...)
	b = appendStr(b, "id", d.ID)
	b = appendStr(b, "policy", d.Policy)
	b = appendStr(b, "run", d.Run)
	b = appendStrOrNull(b, "worker", d.Worker)
	if len(d.Workers) == 0 {
		b = appendNull(b, "workers")
	} else {
		b = append(appendKey(b, "workers"), d.Workers...)
	}
	b = appendF(b, "start", d.Start)
	b = appendF(b, "d", d.D)
	b = appendF(b, "overhead", d.Overhead)
	b = appendStr(b, "mode", d.Mode)
	b = appendF(b, "alpha", d.Alpha)
	b = appendF(b, "timeout", d.Timeout)
	b = appendStr(b, "outcome", d.Outcome)
	b = appendF(b, "p", d.P)
	return append(b, '}')
}

// MarshalJSON is AppendJSON, for encoding/json users.
func (d Decision) MarshalJSON() ([]byte, error) { return d.AppendJSON(nil), nil }

// SpellForecast is a forecast of how much longer an idle worker stays idle
// (docs/backfill.md), issued at IssuedAt when its spell had lasted Elapsed
// seconds: P that it lasts at least D more, and the 10% and 50% quantiles
// of its remaining idle time (Q10, Q50; null beyond the model's range).
type SpellForecast struct {
	ID       string
	Run      string
	Worker   string
	IssuedAt float64
	Elapsed  float64
	D        float64
	P        float64
	Q10      float64 `tracecast:"nullable"`
	Q50      float64 `tracecast:"nullable"`
	Method   string
}

// AppendJSON writes the forecast as one JSON object, "record" first.
func (s SpellForecast) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"spell"`...)
	b = appendStr(b, "id", s.ID)
	b = appendStr(b, "run", s.Run)
	b = appendStr(b, "worker", s.Worker)
	b = appendF(b, "issued_at", s.IssuedAt)
	b = appendF(b, "elapsed", s.Elapsed)
	b = appendF(b, "d", s.D)
	b = appendF(b, "p", s.P)
	b = appendF(b, "q10", s.Q10)
	b = appendF(b, "q50", s.Q50)
	b = appendStr(b, "method", s.Method)
	return append(b, '}')
}

// MarshalJSON is AppendJSON, for encoding/json users.
func (s SpellForecast) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }
