package component

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/tracecast/tracecast"
)

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	err := WriteTable(&b, []Description{{Kind: "stage", Name: "x", Doc: "does x",
		Options: []OptionDescription{{Key: "window", Type: "int", Default: "100"}, {Key: "class", Type: "string"}}}})
	want := "stage x   does x\n  window  int     default 100\n  class   string  \n\n"
	if err != nil || b.String() != want {
		t.Errorf("%v\n%q\nwant\n%q", err, b.String(), want)
	}
}

func TestDurationTypeNames(t *testing.T) {
	cfg := struct {
		Period tracecast.TraceTime `yaml:"period"`
		Min    tracecast.TraceTime `yaml:"min"`
		MaxGap tracecast.Seconds   `yaml:"max_gap"`
		Offset tracecast.Seconds   `yaml:"offset"`
	}{Min: tracecast.TraceUnits(5), MaxGap: 5}
	got := describeFields(reflect.ValueOf(&cfg).Elem())
	if len(got) != 4 || got[0].Type != "duration or trace units" || got[0].Default != "" || got[1].Default != "\"5\"" ||
		got[2].Type != "duration" || got[2].Default != "5s" || got[3].Default != "" {
		t.Errorf("%+v", got)
	}
}
