package tracecast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Forecast is a forecast of idle capacity issued at trace time IssuedAt for
// the next Horizon seconds (docs/forecasts.md): P is the forecast of the
// fraction of [IssuedAt, IssuedAt+Horizon) during which at least Threshold of
// the Workers selected containers are in Class, Mean the forecast of the
// mean fraction of containers in Class over that interval, and [Lo, Hi] an
// interval meant to contain the outcome of P with the run's coverage.
type Forecast struct {
	ID        string
	Run       string
	Class     string
	Query     string
	Threshold int
	Workers   int
	// IssuedAt and Horizon are seconds on the trace's own clock.
	IssuedAt float64
	Horizon  float64
	P        float64
	Mean     float64
	// WorkerSeconds = Mean·Workers·Horizon: the expected idle worker-seconds.
	WorkerSeconds float64
	// Lo and Hi are NaN (null) for an empty interval.
	Lo     float64 `tracecast:"nullable"`
	Hi     float64 `tracecast:"nullable"`
	Method string
}

// Outcome is what happened over a forecast's interval, published once the
// interval is over (its own id: the forecast's id with "/outcome").
type Outcome struct {
	ID         string
	ForecastID string
	Run        string
	Query      string
	Threshold  int
	Workers    int
	IssuedAt   float64
	Horizon    float64
	// P, Lo, Hi and Mean are the forecast's; ObservedP and ObservedMean
	// what happened; Inside says whether ObservedP fell in [Lo, Hi].
	P            float64
	Lo           float64 `tracecast:"nullable"`
	Hi           float64 `tracecast:"nullable"`
	Mean         float64
	ObservedP    float64
	ObservedMean float64
	Inside       bool
	Method       string
}

// AppendJSON writes the forecast as one JSON object with the field names of
// the forecast contract, "record" first; a non-finite number is null.
func (f Forecast) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"forecast"`...)
	b = appendStr(b, "id", f.ID)
	b = appendStr(b, "run", f.Run)
	b = appendStr(b, "class", f.Class)
	b = appendStr(b, "query", f.Query)
	b = appendI64(b, "threshold", int64(f.Threshold))
	b = appendI64(b, "workers", int64(f.Workers))
	b = appendF(b, "issued_at", f.IssuedAt)
	b = appendF(b, "horizon", f.Horizon)
	b = appendF(b, "p", f.P)
	b = appendF(b, "mean", f.Mean)
	b = appendF(b, "worker_seconds", f.WorkerSeconds)
	b = appendF(b, "lo", f.Lo)
	b = appendF(b, "hi", f.Hi)
	b = appendStr(b, "method", f.Method)
	return append(b, '}')
}

// MarshalJSON is AppendJSON, for encoding/json users (the Kafka sink).
func (f Forecast) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// AppendJSON writes the outcome as one JSON object, "record" first.
func (o Outcome) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"outcome"`...)
	b = appendStr(b, "id", o.ID)
	b = appendStr(b, "forecast_id", o.ForecastID)
	b = appendStr(b, "run", o.Run)
	b = appendStr(b, "query", o.Query)
	b = appendI64(b, "threshold", int64(o.Threshold))
	b = appendI64(b, "workers", int64(o.Workers))
	b = appendF(b, "issued_at", o.IssuedAt)
	b = appendF(b, "horizon", o.Horizon)
	b = appendF(b, "p", o.P)
	b = appendF(b, "lo", o.Lo)
	b = appendF(b, "hi", o.Hi)
	b = appendF(b, "mean", o.Mean)
	b = appendF(b, "observed_p", o.ObservedP)
	b = appendF(b, "observed_mean", o.ObservedMean)
	b = appendBool(b, "inside", o.Inside)
	b = appendStr(b, "method", o.Method)
	return append(b, '}')
}

// MarshalJSON is AppendJSON, for encoding/json users.
func (o Outcome) MarshalJSON() ([]byte, error) { return o.AppendJSON(nil), nil }

func appendStr(b []byte, k, v string) []byte {
	b = appendKey(b, k)
	// strconv.AppendQuote escapes like Go, which JSON reads except for
	// \x.. and \a-style escapes of control bytes and invalid UTF-8: those
	// strings go through encoding/json (without its HTML escaping).
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(v)
			return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
		}
	}
	return strconv.AppendQuote(b, v)
}

// Episode is an alert that lasts: it is announced when it opens (State
// "open", End null) and again, under its own id, when it closes (State
// "closed", with End), so a scheduler can act at once and a subscriber that
// de-duplicates on id keeps both.
//
// Kinds: "idle-opportunity" (a query's forecast p over Horizon reached
// Threshold; Value is the highest p of the episode) and "regime-change"
// (the class's mean occupancy moved between two consecutive windows of
// Horizon seconds more than the run's own past moves, at level Threshold;
// Value is the change).
type Episode struct {
	ID        string
	Run       string
	Kind      string
	Query     string
	Horizon   float64
	State     string
	Start     float64
	End       float64 `tracecast:"nullable"` // NaN (null) while open
	Value     float64
	Threshold float64
	Message   string
}

// AppendJSON writes the episode as one JSON object, "record" first.
func (e Episode) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"episode"`...)
	b = appendStr(b, "id", e.ID)
	b = appendStr(b, "run", e.Run)
	b = appendStr(b, "kind", e.Kind)
	b = appendStr(b, "query", e.Query)
	b = appendF(b, "horizon", e.Horizon)
	b = appendStr(b, "state", e.State)
	b = appendF(b, "start", e.Start)
	b = appendF(b, "end", e.End)
	b = appendF(b, "value", e.Value)
	b = appendF(b, "threshold", e.Threshold)
	b = appendStr(b, "message", e.Message)
	return append(b, '}')
}

// MarshalJSON is AppendJSON, for encoding/json users.
func (e Episode) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// Skill is a run's rolling verification of one (query, horizon), from the
// outcomes known so far (Until: the end of the last interval scored): the
// MSE of p and mean, the baselines' MSE of p at the same issue times, the
// skills 1 − MSE/MSE_baseline (NaN, null, when the baseline is exact) and
// the interval coverage. A live pipeline publishes it as the run goes; the
// last one of a run covers all its outcomes, and says how the run ended
// (End).
//
// The json tags name the fields as AppendJSON does, and so the Arrow and
// Parquet columns, where the Go names' initialisms (MSEP) would not split.
type Skill struct {
	ID               string  `json:"id"`
	Run              string  `json:"run"`
	Query            string  `json:"query"`
	Horizon          float64 `json:"horizon"`
	Method           string  `json:"method"`
	Until            float64 `json:"until"`
	N                int     `json:"n"`
	MSEP             float64 `json:"mse_p" tracecast:"nullable"`
	MSEMean          float64 `json:"mse_mean" tracecast:"nullable"`
	MSEPersistence   float64 `json:"mse_persistence" tracecast:"nullable"`
	MSEClimatology   float64 `json:"mse_climatology" tracecast:"nullable"`
	MSEKSPaper       float64 `json:"mse_ks_paper" tracecast:"nullable"`
	SkillPersistence float64 `json:"skill_persistence" tracecast:"nullable"`
	SkillClimatology float64 `json:"skill_climatology" tracecast:"nullable"`
	SkillKSPaper     float64 `json:"skill_ks_paper" tracecast:"nullable"`
	Coverage         float64 `json:"coverage" tracecast:"nullable"`
	// End is "" (null) on the rolling records, while the run is open; on
	// the last records of a run, how it ended: EndMarker (its end marker,
	// or the end of a file) or EndTimeout (silent for the Kafka source's
	// trace_timeout: a producer that died, the records from the lines
	// received).
	End string `json:"end" tracecast:"nullable"`
}

// AppendJSON writes the skill as one JSON object, "record" first.
func (s Skill) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"skill"`...)
	b = appendStr(b, "id", s.ID)
	b = appendStr(b, "run", s.Run)
	b = appendStr(b, "query", s.Query)
	b = appendF(b, "horizon", s.Horizon)
	b = appendStr(b, "method", s.Method)
	b = appendF(b, "until", s.Until)
	b = appendI64(b, "n", int64(s.N))
	b = appendF(b, "mse_p", s.MSEP)
	b = appendF(b, "mse_mean", s.MSEMean)
	b = appendF(b, "mse_persistence", s.MSEPersistence)
	b = appendF(b, "mse_climatology", s.MSEClimatology)
	b = appendF(b, "mse_ks_paper", s.MSEKSPaper)
	b = appendF(b, "skill_persistence", s.SkillPersistence)
	b = appendF(b, "skill_climatology", s.SkillClimatology)
	b = appendF(b, "skill_ks_paper", s.SkillKSPaper)
	b = appendF(b, "coverage", s.Coverage)
	b = appendStrOrNull(b, "end", s.End)
	return append(b, '}')
}

// MarshalJSON is AppendJSON, for encoding/json users.
func (s Skill) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// UnmarshalJSON reads a forecast written by AppendJSON (null bounds: an
// empty interval, NaN).
func (f *Forecast) UnmarshalJSON(b []byte) error {
	var r struct {
		Record        string   `json:"record"`
		ID            string   `json:"id"`
		Run           string   `json:"run"`
		Class         string   `json:"class"`
		Query         string   `json:"query"`
		Threshold     int      `json:"threshold"`
		Workers       int      `json:"workers"`
		IssuedAt      float64  `json:"issued_at"`
		Horizon       float64  `json:"horizon"`
		P             float64  `json:"p"`
		Mean          float64  `json:"mean"`
		WorkerSeconds float64  `json:"worker_seconds"`
		Lo            *float64 `json:"lo"`
		Hi            *float64 `json:"hi"`
		Method        string   `json:"method"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	if r.Record != "" && r.Record != "forecast" {
		return fmt.Errorf("a %q record, not a forecast", r.Record)
	}
	orNaN := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*f = Forecast{ID: r.ID, Run: r.Run, Class: r.Class, Query: r.Query, Threshold: r.Threshold, Workers: r.Workers,
		IssuedAt: r.IssuedAt, Horizon: r.Horizon, P: r.P, Mean: r.Mean, WorkerSeconds: r.WorkerSeconds,
		Lo: orNaN(r.Lo), Hi: orNaN(r.Hi), Method: r.Method}
	return nil
}
