package csv

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/tracecast/tracecast"
)

func TestRoundTrip(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	es := []tracecast.Entity{
		{Nature: tracecast.NatureState, Container: "CPU, 0", Type: "Worker State", Start: 1.5, End: 2, Imbrication: 1, Value: `say "hi"`,
			Ext: &tracecast.EntityExt{Extra: []tracecast.Field{{Name: "JobId", Value: "42"}}}},
		{Nature: tracecast.NatureVariable, Container: "c", Type: "v", Start: 0, End: 1e-7, Number: 3.25},
		{Nature: tracecast.NatureLink, Container: "0", Type: "L", Start: 1, End: 3, Value: "v", Ext: &tracecast.EntityExt{StartContainer: "a", EndContainer: "b", Key: "k1"}},
	}
	if err := w.Write(es); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		Header,
		{"State", "CPU, 0", "Worker State", "1.5", "2", "0.5", "1", `say "hi"`, "", "", "", "", `{"JobId":"42"}`},
		{"Variable", "c", "v", "0", "0.0000001", "0.0000001", "", "", "3.25", "", "", "", ""},
		{"Link", "0", "L", "1", "3", "2", "", "v", "", "a", "b", "k1", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i := range want {
		for j := range want[i] {
			if rows[i][j] != want[i][j] {
				t.Errorf("row %d col %s: %q, want %q", i, Header[j], rows[i][j], want[i][j])
			}
		}
	}
}

func TestEmptyHasHeader(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "nature,container,type,start,end,duration,imbrication,value,number,start_container,end_container,key,extra\n" {
		t.Fatalf("got %q", got)
	}
}
