package arrow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/sinks/jsonl"
)

// jsonKeys returns the keys of a JSON object, in order.
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not an object", b)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestColumnsAreJSONFields: one record contract — the Arrow (and Parquet)
// columns of every record type are the fields of its JSON object, in the
// same order, after "record".
func TestColumnsAreJSONFields(t *testing.T) {
	for _, table := range RecordTables("") {
		rt, ok := tracecast.RecordTypeOf(reflect.MakeSlice(table.ItemsType(), 0, 0).Interface())
		if !ok {
			t.Fatalf("%v: not a registered record type", table.ItemsType())
		}
		t.Run(rt.Name, func(t *testing.T) {
			rec := reflect.New(rt.Items.Elem()).Elem()
			if e, ok := rec.Addr().Interface().(*tracecast.Entity); ok {
				// An unknown nature gets every field; extra when set.
				e.Ext = &tracecast.EntityExt{Extra: []tracecast.Field{{Name: "a", Value: "b"}}}
			}
			b, err := jsonl.AppendRecord(nil, rec.Interface())
			if err != nil {
				t.Fatal(err)
			}
			keys := jsonKeys(t, b)
			var cols []string
			for _, f := range table.Schema().Fields() {
				cols = append(cols, f.Name)
			}
			if len(keys) == 0 || keys[0] != "record" || fmt.Sprint(keys[1:]) != fmt.Sprint(cols) {
				t.Errorf("JSON fields %v\nArrow columns %v", keys, cols)
			}
		})
	}
}

// TestAbsentIsNull: what does not apply to a record is null in Arrow as in
// JSON — not 0, -1, false or NaN — in the nullable columns.
func TestAbsentIsNull(t *testing.T) {
	nan := math.NaN()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name  string
		items any
		want  string // the rows, null as "null"
	}{
		{"windows", []tracecast.Window{{Trace: "t", Class: "idle", Index: 0, N: 10}, {Trace: "t", Class: "idle", Index: 1, N: 10, D: 0.2, P: 0.5, Hit: true, Compared: true}},
			"[t|idle|0|0|0|10|null|null|null|false t|idle|1|0|0|10|0.2|0.5|true|true]"},
		{"energy totals", []tracecast.EnergyRow{{Node: "n", Window: 0, End: 1, Class: "idle", EnergyJ: 2}, {Node: "n", Window: -1, End: 1, Class: "idle", EnergyJ: 2}},
			"[n|0|0|1|idle|2|0 n|null|0|1|idle|2|0]"},
		{"power", []tracecast.PowerSample{{T: 1, Node: "n", Watts: 90}, {T: 2, Node: "n", Watts: 91, Mean: true, Since: 1}},
			"[1|n|90|false|null 2|n|91|true|1]"},
		{"empty interval", []tracecast.Forecast{{ID: "f", Lo: nan, Hi: nan, P: 0.5}}, "[f||||0|0|0|0|0.5|0|0|null|null|]"},
		{"open episode", []tracecast.Episode{{ID: "e", State: "open", End: nan}}, "[e||||0|open|0|null|0|0|]"},
		{"rolling and last skill", []tracecast.Skill{{ID: "s/0", N: 1, MSEP: 0.5, End: ""}, {ID: "s/1", N: 2, MSEP: 0.5, End: tracecast.EndTimeout}},
			"[s/0|||0||0|1|0.5|0|0|0|0|0|0|0|0|0|null s/1|||0||0|2|0.5|0|0|0|0|0|0|0|0|0|timeout]"},
		{"emission time", []tracecast.Alert{{ID: "a"}, {ID: "b", EmittedAt: at}}, "[a||0|||0|0|0|0||null b||0|||0|0|0|0||2026-01-02 03:04:05Z]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.arrow")
			s, err := New(Options{Path: path, Tables: RecordTables("")})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Write(t.Context(), tracecast.Batch{Items: tt.items}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			_, rows := readAll(t, path, FormatFile)
			if got := fmt.Sprint(rows); got != tt.want {
				t.Errorf("rows\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
