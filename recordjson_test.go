package tracecast

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// TestRecordJSON: each record's JSON has "record" first, the Arrow column
// names, and null — not a placeholder — for what does not apply.
func TestRecordJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 678999, time.FixedZone("CET", 3600)) // to the microsecond: 000678
	tests := []struct {
		name string
		rec  interface{ AppendJSON([]byte) []byte }
		want string
	}{
		{"sample", Sample{K: 3, T: 1e-7, X: 2}, `{"record":"sample","k":3,"t":1e-7,"x":2}`},
		{"first window: compared with none", Window{Trace: "t", Class: "idle", Index: 0, Start: 0, End: 100, N: 100},
			`{"record":"window","trace":"t","class":"idle","index":0,"start":0,"end":100,"n":100,"d":null,"p":null,"hit":null,"compared":false}`},
		{"compared window", Window{Trace: "t", Class: "idle", Index: 1, Start: 100, End: 200, N: 100, D: 0.25, P: 0.5, Hit: true, Compared: true},
			`{"record":"window","trace":"t","class":"idle","index":1,"start":100,"end":200,"n":100,"d":0.25,"p":0.5,"hit":true,"compared":true}`},
		{"prediction", Prediction{ID: "t/w1/idle>=25%", Trace: "t", Window: 1, Start: 1, End: 2, HorizonS: 0.5, Class: "idle", Query: "idle>=25%", AtLeast: 3, R: 12, Likelihood: 0.75, EmittedAt: at},
			`{"record":"prediction","id":"t/w1/idle>=25%","trace":"t","window":1,"start":1,"end":2,"horizon_s":0.5,"class":"idle","query":"idle>=25%","at_least":3,"r":12,"likelihood":0.75,"emitted_at":"2026-01-02T02:04:05.000678Z"}`},
		{"prediction without emission time", Prediction{ID: "x", Likelihood: math.NaN()},
			`{"record":"prediction","id":"x","trace":"","window":0,"start":0,"end":0,"horizon_s":0,"class":"","query":"","at_least":0,"r":0,"likelihood":null,"emitted_at":null}`},
		{"verdict", Verdict{ID: "v", PredictionID: "p", Trace: "t", Window: 2, Query: "q", Likelihood: 1, Observed: 0.5, D: 0.1, P: 0.9, Hit: true, Method: "matlab", Start: 1, End: 2, PredictedAt: 1, AtLeast: 1, Class: "idle", HorizonS: 0.1, MissesInARow: 0},
			`{"record":"verdict","id":"v","prediction_id":"p","trace":"t","window":2,"query":"q","likelihood":1,"observed":0.5,"d":0.1,"p":0.9,"hit":true,"method":"matlab","start":1,"end":2,"predicted_at":1,"at_least":1,"class":"idle","horizon_s":0.1,"misses_in_a_row":0,"emitted_at":null}`},
		{"alert", Alert{ID: "a", Trace: "t", Window: 3, Kind: "regime-change", Query: "idle>=50%", Value: 3, Threshold: 3, Start: 1, End: 2, Message: "3 misses > 2 & <4", EmittedAt: at},
			`{"record":"alert","id":"a","trace":"t","window":3,"kind":"regime-change","query":"idle>=50%","value":3,"threshold":3,"start":1,"end":2,"message":"3 misses > 2 & <4","emitted_at":"2026-01-02T02:04:05.000678Z"}`},
		{"energy in a window", EnergyRow{Node: "n0", Window: 2, Start: 1, End: 1.5, Class: "idle", EnergyJ: 12.5, OccupancyS: 0.25},
			`{"record":"energy","node":"n0","window":2,"start":1,"end":1.5,"class":"idle","energy_j":12.5,"occupancy_s":0.25}`},
		{"energy totals", EnergyRow{Node: "n0", Window: -1, Start: 0, End: 7, Class: "storage"},
			`{"record":"energy","node":"n0","window":null,"start":0,"end":7,"class":"storage","energy_j":0,"occupancy_s":0}`},
		{"instantaneous power", PowerSample{T: 0.5, Node: "n0", Watts: 91.5, Since: 0},
			`{"record":"power","t":0.5,"node":"n0","watts":91.5,"mean":false,"since":null}`},
		{"mean power", PowerSample{T: 0.5, Node: "n0", Watts: 91.5, Mean: true, Since: 0.25},
			`{"record":"power","t":0.5,"node":"n0","watts":91.5,"mean":true,"since":0.25}`},
		{"read call", IOCall{Time: 1718000000.25, PID: 7, Op: "pread64", Path: "/d/a&b", FD: 3, Offset: 0, Req: 4096, Bytes: 4096, Dur: 2e-6, Access: AccessRandom},
			`{"record":"iocall","time":1718000000.25,"pid":7,"op":"pread64","path":"/d/a&b","fd":3,"offset":0,"requested":4096,"bytes":4096,"duration":0.000002,"err":null,"flags":null}`},
		{"failed open", IOCall{Time: 1, PID: 7, Op: "openat", Path: "", FD: -1, Offset: -1, Req: -1, Bytes: -1, Err: "ENOENT", Flags: OpenCreate | OpenTrunc},
			`{"record":"iocall","time":1,"pid":7,"op":"openat","path":null,"fd":null,"offset":null,"requested":null,"bytes":null,"duration":0,"err":"ENOENT","flags":"creat|trunc"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.rec.AppendJSON([]byte("x")))
			if got != "x"+tt.want {
				t.Errorf("got\n%s\nwant\nx%s", got, tt.want)
			}
			if !json.Valid([]byte(tt.want)) {
				t.Errorf("not JSON: %s", tt.want)
			}
		})
	}
}

func TestAppendJSONNumber(t *testing.T) {
	for f, want := range map[float64]string{0: "0", 1: "1", 0.1: "0.1", 1e-6: "0.000001", 9.99e-7: "9.99e-7", 1e21: "1e+21",
		1e20: "100000000000000000000", -2.5e-9: "-2.5e-9", 1718000000.123456: "1718000000.123456", math.Inf(1): "null", math.NaN(): "null"} {
		if got := string(AppendJSONNumber(nil, f)); got != want {
			t.Errorf("%v: %s, want %s", f, got, want)
		}
	}
}

// appendStr writes JSON that decodes to the string, plain ASCII written
// as is and the rest escaped.
func TestAppendStr(t *testing.T) {
	for _, v := range []string{"", "MPI_HPC/p2p-i-la-1-c644b599/idle>=25%/200ms/10", `a"b`, `back\slash`, "tab\there", "é", "\x7f", "\xff", "<&>"} {
		b := appendStr([]byte(`{"a":0`), "k", v) // appendKey writes the comma
		var got map[string]any
		if err := json.Unmarshal(append(b, '}'), &got); err != nil || got["k"] != strings.ToValidUTF8(v, "\uFFFD") {
			t.Fatalf("%q: wrote %s (%v)", v, b, err)
		}
	}
	if b := appendStr(nil, "k", "a/b c"); string(b) != `,"k":"a/b c"` {
		t.Fatalf("plain ASCII: %s", b)
	}
}
