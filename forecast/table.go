package forecast

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/tracecast/tracecast"
)

// WriteTable prints scores as a table for people: per (query, horizon), the
// forecasts scored, the MSE of p and of mean, the skill against each
// baseline (1 − MSE/MSE_baseline: above 0 beats it) and the interval
// coverage and interval score.
func WriteTable(w io.Writer, scores []Score) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "query\thorizon\tforecasts\tmse_p\tskill_vs_ks-paper\tskill_vs_persistence\tskill_vs_climatology\tcoverage\tinterval_score\tmse_mean\t\n")
	for _, s := range scores {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.5f\t%s\t%s\t%s\t%.3f\t%.4f\t%.5f\t\n", s.Query, HorizonLabel(s.Horizon), s.N, s.MSEP,
			pct(s.SkillKSPaper), pct(s.SkillPersistence), pct(s.SkillClimatology), s.Coverage, s.IntervalScore, s.MSEMean)
	}
	return tw.Flush()
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

// MarshalJSON writes a score with snake_case names, "record": "score"
// first, null for a skill against an exact baseline, and no HTML escaping.
func (s Score) MarshalJSON() ([]byte, error) {
	num := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	type bin struct {
		Lo          float64  `json:"lo"`
		Hi          float64  `json:"hi"`
		N           int      `json:"n"`
		MeanP       *float64 `json:"mean_p"`
		MeanOutcome *float64 `json:"mean_outcome"`
	}
	out := struct {
		Record           string   `json:"record"`
		Run              string   `json:"run"`
		Query            string   `json:"query"`
		Horizon          float64  `json:"horizon"`
		Method           string   `json:"method"`
		N                int      `json:"n"`
		MSEP             float64  `json:"mse_p"`
		MSEMean          float64  `json:"mse_mean"`
		MSEPersistence   float64  `json:"mse_persistence"`
		MSEClimatology   float64  `json:"mse_climatology"`
		MSEKSPaper       float64  `json:"mse_ks_paper"`
		SkillPersistence *float64 `json:"skill_persistence"`
		SkillClimatology *float64 `json:"skill_climatology"`
		SkillKSPaper     *float64 `json:"skill_ks_paper"`
		Coverage         *float64 `json:"coverage"`
		IntervalScore    *float64 `json:"interval_score"`
		Reliability      []bin    `json:"reliability"`
	}{"score", s.Run, s.Query, s.Horizon, s.Method, s.N, s.MSEP, s.MSEMean, s.MSEPersistence, s.MSEClimatology, s.MSEKSPaper,
		num(s.SkillPersistence), num(s.SkillClimatology), num(s.SkillKSPaper), num(s.Coverage), num(s.IntervalScore), nil}
	for _, b := range s.Reliability {
		// hi as a tenth written out (Lo + 0.1 is 0.30000000000000004).
		out.Reliability = append(out.Reliability, bin{b.Lo, math.Round(10*b.Lo+1) / 10, b.N, num(b.MeanP), num(b.MeanOutcome)})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // queries hold >=
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// WriteScores writes scores as JSON lines (score records).
func WriteScores(w io.Writer, scores []Score) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, s := range scores {
		if err := enc.Encode(s); err != nil {
			return err
		}
	}
	return nil
}

// ReadForecasts reads the forecast records of JSON lines (other records are
// skipped); name is for errors (FILE:LINE: reason).
func ReadForecasts(r io.Reader, name string) ([]tracecast.Forecast, error) {
	var fs []tracecast.Forecast
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		// A forecast record holds the string "forecast" however its
		// writer spaces it ("record": "forecast" from Python's json);
		// the lines without it are skipped unparsed.
		if !bytes.Contains(line, []byte(`"forecast"`)) {
			continue
		}
		var rec struct {
			Record string `json:"record"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if rec.Record != "forecast" {
			continue
		}
		var f tracecast.Forecast
		if err := json.Unmarshal(line, &f); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if err := checkForecast(line, f); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		fs = append(fs, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(fs) == 0 {
		return nil, fmt.Errorf("%s: no forecast record", name)
	}
	return fs, nil
}

// forecastFields are the fields of a forecast record
// (docs/schemas/forecast.json); lo and hi may be null (an empty interval).
var forecastFields = []string{"id", "run", "class", "query", "threshold", "workers", "issued_at", "horizon", "p", "mean", "worker_seconds", "lo", "hi", "method"}

// checkForecast says what makes f, read from line, a forecast that cannot
// be scored: a field missing (or null), a probability or a fraction out of
// [0, 1], a horizon that is not positive, a negative count.
func checkForecast(line []byte, f tracecast.Forecast) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return err
	}
	var missing []string
	for _, k := range forecastFields {
		v, ok := fields[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case string(v) == "null" && k != "lo" && k != "hi":
			return fmt.Errorf("%s is null", k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no %s", strings.Join(missing, ", "))
	}
	if !(f.Horizon > 0) || math.IsInf(f.Horizon, 0) {
		return fmt.Errorf("horizon %g is not a positive number of seconds", f.Horizon)
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"p", f.P}, {"mean", f.Mean}, {"lo", f.Lo}, {"hi", f.Hi}} {
		if !math.IsNaN(v.x) && (v.x < 0 || v.x > 1) || math.IsNaN(v.x) && v.name != "lo" && v.name != "hi" {
			return fmt.Errorf("%s %g is not in [0, 1]", v.name, v.x)
		}
	}
	if math.IsNaN(f.Lo) != math.IsNaN(f.Hi) {
		return fmt.Errorf("lo %g and hi %g: both null (an empty interval) or neither", f.Lo, f.Hi)
	}
	if f.Lo > f.Hi {
		return fmt.Errorf("lo %g is above hi %g", f.Lo, f.Hi)
	}
	if f.Threshold < 0 {
		return fmt.Errorf("threshold %d is negative", f.Threshold)
	}
	if f.Workers < 0 {
		return fmt.Errorf("workers %d is negative", f.Workers)
	}
	if f.WorkerSeconds < 0 {
		return fmt.Errorf("worker_seconds %g is negative", f.WorkerSeconds)
	}
	return nil
}

// Summary is what a run's forecasts come to, for a person: how many, of
// which run and method, their scores and the alert episodes opened.
type Summary struct {
	Forecasts   int
	Run, Method string
	Scores      []Score
	// Threshold opens idle-opportunity episodes; Opened counts the episodes
	// per kind.
	Threshold float64
	Opened    map[string]int
}

// WriteSummary writes the summary the predict command prints on a
// terminal: a line on the forecasts, the score table and the episodes.
func WriteSummary(w io.Writer, s Summary) error {
	fmt.Fprintf(w, "%d forecasts of run %s (method %s), scored against what happened:\n\n", s.Forecasts, s.Run, s.Method)
	if err := WriteTable(w, s.Scores); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nalerts: %d idle-opportunity episodes (p ≥ %g), %d regime-change episodes\n", s.Opened["idle-opportunity"], s.Threshold, s.Opened["regime-change"])
	_, err := fmt.Fprintf(w, "skill = 1 − MSE/MSE(baseline): above 0 beats the baseline. --format jsonl for the records; docs/forecasts.md.\n")
	return err
}
