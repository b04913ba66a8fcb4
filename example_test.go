package tracecast_test

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/tracecast/tracecast"
)

// A record's JSON — what the JSON-lines files and the Kafka topics carry —
// is written by its AppendJSON (into a reused buffer, no allocation) and
// read back by encoding/json: "record" says which type a line holds.
func Example_records() {
	f := tracecast.Forecast{ID: "run-1/idle>=25%/50ms/7", Run: "run-1", Class: "idle", Query: "idle>=25%",
		Threshold: 1, Workers: 2, IssuedAt: 0.07, Horizon: 0.05, P: 0.8, Mean: 0.45, WorkerSeconds: 0.045,
		Lo: math.NaN(), Hi: math.NaN(), Method: "auto"} // an empty interval: null
	line := f.AppendJSON(nil)
	fmt.Println(string(line))

	var head struct{ Record string }
	if err := json.Unmarshal(line, &head); err != nil {
		panic(err)
	}
	rt, err := tracecast.LookupRecordType(head.Record + "s")
	if err != nil {
		panic(err)
	}
	fmt.Println(rt.Name, rt.Schema, rt.Items)
	var back tracecast.Forecast
	if err := json.Unmarshal(line, &back); err != nil {
		panic(err)
	}
	fmt.Println(back.ID, back.P, math.IsNaN(back.Lo))

	// Every record type: its name, the plural a sink's records: option
	// takes, its versioned schema (docs/schemas/NAME.json).
	for _, t := range tracecast.RecordTypes()[:4] {
		fmt.Println(t.Name, t.Plural, t.Schema)
	}
	// Output:
	// {"record":"forecast","id":"run-1/idle>=25%/50ms/7","run":"run-1","class":"idle","query":"idle>=25%","threshold":1,"workers":2,"issued_at":0.07,"horizon":0.05,"p":0.8,"mean":0.45,"worker_seconds":0.045,"lo":null,"hi":null,"method":"auto"}
	// forecast tracecast.forecast/1 []tracecast.Forecast
	// run-1/idle>=25%/50ms/7 0.8 true
	// entity entities tracecast.entity/1
	// sample samples tracecast.signal/1
	// window windows tracecast.window/1
	// prediction predictions tracecast.prediction/1
}
