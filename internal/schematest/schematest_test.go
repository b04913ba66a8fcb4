package schematest

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/sinks/jsonl"
)

// TestSchemaPerRecordType: one schema per record type of the registry,
// named after it, whose properties are the fields the record's encoder
// writes (plus "schema", which Kafka messages add).
func TestSchemaPerRecordType(t *testing.T) {
	s := Load(t)
	if got, want := len(s.ByName), len(tracecast.RecordTypes()); got != want {
		t.Errorf("%d schemas for %d record types: %v", got, want, slices.Sorted(maps.Keys(s.ByName)))
	}
	for _, rt := range tracecast.RecordTypes() {
		doc := s.Docs[rt.Name]
		if doc == nil {
			t.Errorf("no docs/schemas/%s.json", rt.Name)
			continue
		}
		props, _ := doc["properties"].(map[string]any)
		if doc["title"] != rt.Schema || doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" || doc["additionalProperties"] != false {
			t.Errorf("%s: title %v, $schema %v, additionalProperties %v", rt.Name, doc["title"], doc["$schema"], doc["additionalProperties"])
		}
		if c, _ := props["record"].(map[string]any); c["const"] != rt.Name {
			t.Errorf("%s: record is %v", rt.Name, props["record"])
		}
		if c, _ := props["schema"].(map[string]any); c["const"] != rt.Schema {
			t.Errorf("%s: schema is %v", rt.Name, props["schema"])
		}
		// The fields of a record of this type, as the encoder writes them.
		rec := reflect.New(rt.Items.Elem()).Elem()
		if e, ok := rec.Addr().Interface().(*tracecast.Entity); ok {
			e.Ext = &tracecast.EntityExt{Extra: []tracecast.Field{{Name: "a", Value: "b"}}} // every field: an unknown nature with extra
		}
		b, err := jsonl.AppendRecord(nil, rec.Interface())
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(b, &fields); err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(maps.Keys(fields))
		got := slices.Sorted(maps.Keys(props))
		got = slices.DeleteFunc(got, func(k string) bool { return k == "schema" })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: schema properties %v\nencoder fields %v", rt.Name, got, want)
		}
	}
}

// TestSchemasReject: the schemas are strict — the records written before
// the record contract, placeholders, missing or unknown fields fail.
func TestSchemasReject(t *testing.T) {
	s := Load(t)
	for _, tt := range []struct {
		name, line string
		valid      bool
	}{
		{"window compared", `{"record":"window","trace":"t","class":"idle","index":1,"start":0,"end":1,"n":10,"d":0.1,"p":0.5,"hit":true,"compared":true}`, true},
		{"first window with nulls", `{"record":"window","trace":"t","class":"idle","index":0,"start":0,"end":1,"n":10,"d":null,"p":null,"hit":null,"compared":false}`, true},
		{"first window with placeholders", `{"record":"window","trace":"t","class":"idle","index":0,"start":0,"end":1,"n":10,"d":0,"p":0,"hit":false,"compared":false}`, false},
		{"compared window with nulls", `{"record":"window","trace":"t","class":"idle","index":1,"start":0,"end":1,"n":10,"d":null,"p":null,"hit":null,"compared":true}`, false},
		{"without record", `{"trace":"t","class":"idle","index":1,"start":0,"end":1,"n":10,"d":0.1,"p":0.5,"hit":true,"compared":true}`, false},
		{"unknown field", `{"record":"sample","k":1,"t":2,"x":3,"y":4}`, false},
		{"missing field", `{"record":"sample","k":1,"t":2}`, false},
		{"Kafka message", `{"schema":"tracecast.signal/1","record":"sample","k":1,"t":2,"x":3}`, true},
		{"Kafka message of another schema", `{"schema":"tracecast.window/1","record":"sample","k":1,"t":2,"x":3}`, false},
		{"not a date-time", `{"record":"alert","id":"a","trace":"t","window":1,"kind":"regime-change","query":"q","value":3,"threshold":3,"start":0,"end":1,"message":"m","emitted_at":"yesterday"}`, false},
		{"emission time", `{"record":"alert","id":"a","trace":"t","window":1,"kind":"regime-change","query":"q","value":3,"threshold":3,"start":0,"end":1,"message":"m","emitted_at":"2026-01-02T03:04:05.000678Z"}`, true},
		{"energy totals with -1", `{"record":"energy","node":"n","window":-1,"start":0,"end":1,"class":"idle","energy_j":1,"occupancy_s":1}`, false},
		{"energy totals", `{"record":"energy","node":"n","window":null,"start":0,"end":1,"class":"idle","energy_j":1,"occupancy_s":1}`, true},
		{"instantaneous power with since", `{"record":"power","t":1,"node":"n","watts":90,"mean":false,"since":0}`, false},
		{"unknown fd as -1", `{"record":"iocall","time":1,"pid":2,"op":"close","path":null,"fd":-1,"offset":null,"requested":null,"bytes":null,"duration":0,"err":null,"flags":null}`, false},
		{"state", `{"record":"entity","nature":"State","container":"c","type":"S","start":0,"end":1,"duration":1,"imbrication":0,"value":"a"}`, true},
		{"state without value", `{"record":"entity","nature":"State","container":"c","type":"S","start":0,"end":1,"duration":1,"imbrication":0}`, false},
		{"event with an end", `{"record":"entity","nature":"Event","container":"c","type":"E","start":0,"end":0,"value":"v"}`, false},
		{"open episode with an end", `{"record":"episode","id":"e","run":"r","kind":"idle-opportunity","query":"q","horizon":0.1,"state":"open","start":0,"end":1,"value":1,"threshold":0.8,"message":"m"}`, false},
		{"rolling skill", `{"record":"skill","id":"r/q/10ms/skill/3","run":"r","query":"q","horizon":0.01,"method":"auto","until":1,"n":3,"mse_p":0.1,"mse_mean":0.1,"mse_persistence":0.2,"mse_climatology":0.2,"mse_ks_paper":0.2,"skill_persistence":0.5,"skill_climatology":0.5,"skill_ks_paper":0.5,"coverage":0.9,"interval_score":0.3,"end":null}`, true},
		{"skill without interval_score (tracecast.skill/2)", `{"record":"skill","id":"r/q/10ms/skill/3","run":"r","query":"q","horizon":0.01,"method":"auto","until":1,"n":3,"mse_p":0.1,"mse_mean":0.1,"mse_persistence":0.2,"mse_climatology":0.2,"mse_ks_paper":0.2,"skill_persistence":0.5,"skill_climatology":0.5,"skill_ks_paper":0.5,"coverage":0.9,"end":null}`, false},
		{"last skill of a run ended by timeout", `{"record":"skill","id":"r/q/10ms/skill/3","run":"r","query":"q","horizon":0.01,"method":"auto","until":1,"n":3,"mse_p":0.1,"mse_mean":0.1,"mse_persistence":0.2,"mse_climatology":0.2,"mse_ks_paper":0.2,"skill_persistence":0.5,"skill_climatology":0.5,"skill_ks_paper":0.5,"coverage":0.9,"interval_score":0.3,"end":"timeout"}`, true},
		{"skill ended otherwise", `{"record":"skill","id":"r/q/10ms/skill/3","run":"r","query":"q","horizon":0.01,"method":"auto","until":1,"n":3,"mse_p":0.1,"mse_mean":0.1,"mse_persistence":0.2,"mse_climatology":0.2,"mse_ks_paper":0.2,"skill_persistence":0.5,"skill_climatology":0.5,"skill_ks_paper":0.5,"coverage":0.9,"end":"crash"}`, false},
		{"skill without end (tracecast.skill/1)", `{"record":"skill","id":"r/q/10ms/skill/3","run":"r","query":"q","horizon":0.01,"method":"auto","until":1,"n":3,"mse_p":0.1,"mse_mean":0.1,"mse_persistence":0.2,"mse_climatology":0.2,"mse_ks_paper":0.2,"skill_persistence":0.5,"skill_climatology":0.5,"skill_ks_paper":0.5,"coverage":0.9}`, false},
		{"Kafka skill/1 message", `{"schema":"tracecast.skill/1","record":"skill","id":"r/q/10ms/skill/3","run":"r","query":"q","horizon":0.01,"method":"auto","until":1,"n":3,"mse_p":0.1,"mse_mean":0.1,"mse_persistence":0.2,"mse_climatology":0.2,"mse_ks_paper":0.2,"skill_persistence":0.5,"skill_climatology":0.5,"skill_ks_paper":0.5,"coverage":0.9,"end":null}`, false},
		{"unknown record", `{"record":"nope"}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Validate([]byte(tt.line))
			if (err == nil) != tt.valid {
				t.Errorf("valid = %v, want %v: %v", err == nil, tt.valid, err)
			}
			if err != nil && strings.Contains(err.Error(), "no schema") && tt.name != "unknown record" && tt.name != "without record" {
				t.Errorf("%v", err)
			}
		})
	}
}
