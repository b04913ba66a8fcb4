package tracecast

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A forecast's JSON has the contract's names, "record" first, null for an
// empty interval, no HTML escaping, and reads back as it was.
func TestForecastJSON(t *testing.T) {
	f := Forecast{ID: "r/idle>=25%/10ms/3", Run: "r", Class: "idle", Query: "idle>=25%", Threshold: 3, Workers: 12,
		IssuedAt: 0.5, Horizon: 0.01, P: 0.75, Mean: 0.4, WorkerSeconds: 0.048, Lo: math.NaN(), Hi: math.NaN(), Method: "auto"}
	b := f.AppendJSON(nil)
	want := `{"record":"forecast","id":"r/idle>=25%/10ms/3","run":"r","class":"idle","query":"idle>=25%","threshold":3,"workers":12,` +
		`"issued_at":0.5,"horizon":0.01,"p":0.75,"mean":0.4,"worker_seconds":0.048,"lo":null,"hi":null,"method":"auto"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var g Forecast
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(g.Lo) || !math.IsNaN(g.Hi) {
		t.Fatalf("bounds %v %v", g.Lo, g.Hi)
	}
	g.Lo, g.Hi, f.Lo, f.Hi = 0, 0, 0, 0
	if g != f {
		t.Fatalf("read back %+v, wrote %+v", g, f)
	}
	// Strings with control or non-ASCII bytes stay valid JSON.
	f.Run = "run\x01é<"
	var m map[string]any
	if err := json.Unmarshal(f.AppendJSON(nil), &m); err != nil || m["run"] != f.Run || strings.Contains(string(f.AppendJSON(nil)), `\u003c`) {
		t.Fatalf("%s: %v", f.AppendJSON(nil), err)
	}
	if err := json.Unmarshal([]byte(`{"record":"outcome"}`), &g); err == nil {
		t.Fatal("an outcome read as a forecast")
	}
}
