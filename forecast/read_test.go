package forecast

import (
	"strings"
	"testing"
)

// TestReadForecastsValidates: a forecast record is checked before it is
// scored — every field of the schema there, p, mean, lo and hi in [0, 1],
// a positive horizon — and refused with FILE:LINE: reason (QA: p = 7 was
// scored, mse_p 36; a negative horizon printed as -5e+09ns; a record with
// no field gave an empty table and exit 0).
func TestReadForecastsValidates(t *testing.T) {
	good := `{"record":"forecast","id":"r/idle>=25%/10ms/0","run":"r","class":"idle","query":"idle>=25%","threshold":1,"workers":2,"issued_at":0.5,"horizon":0.01,"p":0.9,"mean":0.4,"worker_seconds":0.008,"lo":0.2,"hi":1,"method":"auto"}`
	if fs, err := ReadForecasts(strings.NewReader(`{"record":"outcome"}`+"\n"+good+"\n"), "f.jsonl"); err != nil || len(fs) != 1 || fs[0].P != 0.9 {
		t.Fatalf("%v %+v", err, fs)
	}
	nullLoHi := strings.Replace(strings.Replace(good, `"lo":0.2`, `"lo":null`, 1), `"hi":1`, `"hi":null`, 1)
	if _, err := ReadForecasts(strings.NewReader(nullLoHi+"\n"), "f.jsonl"); err != nil {
		t.Errorf("null lo and hi (an empty interval): %v", err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"p":0.9`, `"p":7`, "f.jsonl:2: p 7 is not in [0, 1]"},
		{`"p":0.9`, `"p":-0.1`, "f.jsonl:2: p -0.1 is not in [0, 1]"},
		{`"mean":0.4`, `"mean":1.5`, "f.jsonl:2: mean 1.5 is not in [0, 1]"},
		{`"lo":0.2`, `"lo":-1`, "f.jsonl:2: lo -1 is not in [0, 1]"},
		{`"hi":1`, `"hi":0.1`, "f.jsonl:2: lo 0.2 is above hi 0.1"},
		{`"horizon":0.01`, `"horizon":-5`, "f.jsonl:2: horizon -5 is not a positive number of seconds"},
		{`"horizon":0.01`, `"horizon":0`, "f.jsonl:2: horizon 0 is not a positive number of seconds"},
		{`"threshold":1`, `"threshold":-1`, "f.jsonl:2: threshold -1 is negative"},
		{`"workers":2`, `"workers":-2`, "f.jsonl:2: workers -2 is negative"},
		{`"threshold":1,`, ``, "f.jsonl:2: no threshold"},
		{`"issued_at":0.5,`, ``, "f.jsonl:2: no issued_at"},
		{`"p":0.9,`, `"p":null,`, "f.jsonl:2: p is null"},
		{good, `{"record":"forecast"}`, "f.jsonl:2: no id, run, class, query, threshold, workers, issued_at, horizon, p, mean, worker_seconds, lo, hi, method"},
	} {
		line := strings.Replace(good, tc.from, tc.to, 1)
		_, err := ReadForecasts(strings.NewReader("\n"+line+"\n"), "f.jsonl")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.to, err, tc.want)
		}
	}
}

// TestReadForecastsSpacing: a forecast record is one whatever its writer's
// spacing (Python's json.dumps writes "record": "forecast"); a record of
// another type naming a forecast is not one.
func TestReadForecastsSpacing(t *testing.T) {
	spaced := `{"record": "forecast", "id": "r/idle>=1/10ms/0", "run": "r", "class": "idle", "query": "idle>=1", "threshold": 1, "workers": 2, "issued_at": 0.5, "horizon": 0.01, "p": 0.9, "mean": 0.4, "worker_seconds": 0.008, "lo": 0.2, "hi": 1, "method": "auto"}`
	outcome := `{"record": "outcome", "forecast_id": "r/idle>=1/10ms/0", "method": "forecast"}`
	fs, err := ReadForecasts(strings.NewReader(outcome+"\n"+spaced+"\n"), "f.jsonl")
	if err != nil || len(fs) != 1 || fs[0].P != 0.9 || fs[0].ID != "r/idle>=1/10ms/0" {
		t.Fatalf("%v %+v", err, fs)
	}
}
