package arrow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

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
				e.Extra = []tracecast.Field{{Name: "a", Value: "b"}}
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
