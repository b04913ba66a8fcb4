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
	ID        string `json:"id" desc:"RUN/QUERY/HORIZON/N: unique, N counts the issue times"`
	Run       string `json:"run" desc:"the run id"`
	Class     string `json:"class" desc:"the class forecast (idle)"`
	Query     string `json:"query" desc:"the query, e.g. idle>=25%"`
	Threshold int    `json:"threshold" desc:"k, in containers" schema:"minimum=0"`
	Workers   int    `json:"workers" desc:"R, the selected containers at issued_at" schema:"minimum=0"`
	// IssuedAt and Horizon are seconds on the trace's own clock.
	IssuedAt float64 `json:"issued_at" desc:"issue time t, seconds on the trace's clock"`
	Horizon  float64 `json:"horizon" desc:"H, seconds" schema:"exclusiveMinimum=0"`
	P        float64 `json:"p" desc:"forecast of the fraction of [t, t+H) during which at least k containers are in the class" schema:"minimum=0,maximum=1"`
	Mean     float64 `json:"mean" desc:"forecast of the mean fraction of containers in the class over [t, t+H)" schema:"minimum=0,maximum=1"`
	// WorkerSeconds = Mean·Workers·Horizon: the expected idle worker-seconds.
	WorkerSeconds float64 `json:"worker_seconds" desc:"mean·R·H: expected idle worker-seconds" schema:"minimum=0"`
	// Lo and Hi are NaN (null) for an empty interval.
	Lo     float64 `json:"lo" tracecast:"nullable" desc:"lower bound of the interval meant to contain the outcome of p; null: an empty interval" schema:"minimum=0,maximum=1"`
	Hi     float64 `json:"hi" tracecast:"nullable" desc:"upper bound; null: an empty interval" schema:"minimum=0,maximum=1"`
	Method string  `json:"method" desc:"the forecaster (auto, ks-paper, persistence, climatology, markov)"`
}

// Outcome is what happened over a forecast's interval, published once the
// interval is over (its own id: the forecast's id with "/outcome").
type Outcome struct {
	ID         string  `json:"id" desc:"the forecast's id with /outcome"`
	ForecastID string  `json:"forecast_id" desc:"the forecast scored"`
	Run        string  `json:"run" desc:"the run id"`
	Query      string  `json:"query" desc:"the query"`
	Threshold  int     `json:"threshold" desc:"k" schema:"minimum=0"`
	Workers    int     `json:"workers" desc:"R" schema:"minimum=0"`
	IssuedAt   float64 `json:"issued_at" desc:"the forecast's issue time, seconds"`
	Horizon    float64 `json:"horizon" desc:"H, seconds" schema:"exclusiveMinimum=0"`
	// P, Lo, Hi and Mean are the forecast's; ObservedP and ObservedMean
	// what happened; Inside says whether ObservedP fell in [Lo, Hi].
	P            float64 `json:"p" desc:"the forecast's p" schema:"minimum=0,maximum=1"`
	Lo           float64 `json:"lo" tracecast:"nullable" desc:"the forecast's lower bound; null: an empty interval" schema:"minimum=0,maximum=1"`
	Hi           float64 `json:"hi" tracecast:"nullable" desc:"the forecast's upper bound; null: an empty interval" schema:"minimum=0,maximum=1"`
	Mean         float64 `json:"mean" desc:"the forecast's mean" schema:"minimum=0,maximum=1"`
	ObservedP    float64 `json:"observed_p" desc:"the fraction of [t, t+H) during which at least k containers were in the class" schema:"minimum=0,maximum=1"`
	ObservedMean float64 `json:"observed_mean" desc:"the mean fraction of containers in the class over [t, t+H)" schema:"minimum=0,maximum=1"`
	Inside       bool    `json:"inside" desc:"whether observed_p fell in [lo, hi]"`
	Method       string  `json:"method" desc:"the forecaster"`
}

func appendStr(b []byte, k, v string) []byte {
	b = appendKey(b, k)
	// strconv.AppendQuote escapes like Go, which JSON reads except for
	// \x.. and \a-style escapes of control bytes and invalid UTF-8: those
	// strings go through encoding/json (without its HTML escaping).
	plain := true // printable ASCII but quote and backslash: written as is
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(v)
			return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
		} else if c == '"' || c == '\\' {
			plain = false
		}
	}
	if plain { // what AppendQuote writes, without its per-rune work (4% of predict's time)
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"')
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
	ID        string  `json:"id" desc:"unique; the closing announcement's ends with /closed"`
	Run       string  `json:"run" desc:"the run id"`
	Kind      string  `json:"kind" desc:"what the episode is" schema:"enum=idle-opportunity|regime-change"`
	Query     string  `json:"query" desc:"the query (idle-opportunity) or the class watched"`
	Horizon   float64 `json:"horizon" desc:"the horizon or window length, seconds" schema:"minimum=0"`
	State     string  `json:"state" desc:"open or closed" schema:"enum=open|closed"`
	Start     float64 `json:"start" desc:"when the episode started, seconds on the trace's clock"`
	End       float64 `json:"end" tracecast:"nullable" nullif:"state=open" desc:"when it ended; null while open"` // NaN (null) while open
	Value     float64 `json:"value" desc:"the highest p of the episode (idle-opportunity) or the change of occupancy (regime-change)"`
	Threshold float64 `json:"threshold" desc:"the threshold (p) or the test level (regime-change)"`
	Message   string  `json:"message" desc:"the episode in words"`
}

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
	ID               string  `json:"id" desc:"RUN/QUERY/HORIZON/skill/N"`
	Run              string  `json:"run" desc:"the run id"`
	Query            string  `json:"query" desc:"the query"`
	Horizon          float64 `json:"horizon" desc:"H, seconds" schema:"exclusiveMinimum=0"`
	Method           string  `json:"method" desc:"the forecaster"`
	Until            float64 `json:"until" desc:"end of the last interval scored, seconds"`
	N                int     `json:"n" desc:"outcomes scored" schema:"minimum=0"`
	MSEP             float64 `json:"mse_p" tracecast:"nullable" desc:"mean squared error of p; null when nothing is scored" schema:"minimum=0"`
	MSEMean          float64 `json:"mse_mean" tracecast:"nullable" desc:"mean squared error of mean; null when nothing is scored" schema:"minimum=0"`
	MSEPersistence   float64 `json:"mse_persistence" tracecast:"nullable" desc:"persistence's MSE of p at the same issue times" schema:"minimum=0"`
	MSEClimatology   float64 `json:"mse_climatology" tracecast:"nullable" desc:"climatology's MSE of p" schema:"minimum=0"`
	MSEKSPaper       float64 `json:"mse_ks_paper" tracecast:"nullable" desc:"the seed's (ks-paper) MSE of p" schema:"minimum=0"`
	SkillPersistence float64 `json:"skill_persistence" tracecast:"nullable" desc:"1 − mse_p/mse_persistence; null when the baseline is exact"`
	SkillClimatology float64 `json:"skill_climatology" tracecast:"nullable" desc:"1 − mse_p/mse_climatology; null when the baseline is exact"`
	SkillKSPaper     float64 `json:"skill_ks_paper" tracecast:"nullable" desc:"1 − mse_p/mse_ks_paper; null when the baseline is exact"`
	Coverage         float64 `json:"coverage" tracecast:"nullable" desc:"fraction of outcomes inside [lo, hi]; null when nothing is scored" schema:"minimum=0,maximum=1"`
	// IntervalScore is the mean interval score of [lo, hi] at the run's
	// coverage (forecast.IntervalScore): lower is better.
	IntervalScore float64 `json:"interval_score" tracecast:"nullable" desc:"mean interval score of [lo, hi] (Gneiting and Raftery 2007) at the run's coverage: width plus 2/(1 − coverage) times the distance of an outcome outside; lower is better; null when nothing is scored" schema:"minimum=0"`
	// End is "" (null) on the rolling records, while the run is open; on
	// the last records of a run, how it ended: EndMarker (its end marker,
	// or the end of a file) or EndTimeout (silent for the Kafka source's
	// trace_timeout: a producer that died, the records from the lines
	// received).
	End string `json:"end" tracecast:"nullable" desc:"null while the run is open (rolling records); on the run's last records, how it ended: marker (its end marker, or the end of a file) or timeout (silent for trace_timeout: a producer that died; the records are those of the lines received)" schema:"enum=marker|timeout"`
}

// UnmarshalJSON reads a forecast written by AppendJSON (null bounds: an
// empty interval, NaN).
func (f *Forecast) UnmarshalJSON(b []byte) error {
	type fields Forecast // its fields and tags, not this method
	var r struct {
		Record string `json:"record"`
		fields
		// Shallower than fields' lo and hi: encoding/json fills these.
		Lo *float64 `json:"lo"`
		Hi *float64 `json:"hi"`
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
	*f = Forecast(r.fields)
	f.Lo, f.Hi = orNaN(r.Lo), orNaN(r.Hi)
	return nil
}
