package csv

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/internal/sinktest"
)

func TestSink(t *testing.T) {
	ents := []tracecast.Entity{{Nature: tracecast.NatureState, Container: "c", Type: "S", Start: 1, End: 2.5, Value: "run"}}
	smps := []tracecast.Sample{{K: 0, T: 0.5, X: 2}, {K: 1, T: 1.25, X: 0}}
	failed, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		samples bool // records: samples
		batches []any
		closeIn context.Context
		want    string
		wantErr string
	}{
		{name: "entities", batches: []any{ents}, want: strings.Join(Header, ",") + "\nState,c,S,1,2.5,1.5,0,run,,,,,\n"},
		{name: "samples", batches: []any{smps, []tracecast.Sample{}}, want: "k,t,x\n0,0.5,2\n1,1.25,0\n"},
		{name: "empty output: the entities' header", want: strings.Join(Header, ",") + "\n"},
		{name: "empty output of samples", samples: true, want: "k,t,x\n"},
		{name: "empty signal: its header", samples: true, batches: []any{[]tracecast.Sample{}}, want: "k,t,x\n"},
		{name: "failed run, nothing received: the header", samples: true, closeIn: failed, want: "k,t,x\n"},
		{name: "failed run: what was received", batches: []any{smps}, closeIn: failed, want: "k,t,x\n0,0.5,2\n1,1.25,0\n"},
		{name: "two record types", batches: []any{ents, smps}, wantErr: "samples after entities"},
		{name: "other records", batches: []any{[]tracecast.Line{{Data: []byte("x")}}}, wantErr: "writes entities or samples, not []tracecast.Line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			s, err := NewSink("-", tc.samples, output.Options{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			if !sinktest.WriteThenClose(t, s, tc.batches, tc.wantErr, tc.closeIn) {
				return
			}
			if got := out.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSinkConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  SinkConfig
		want string
	}{
		{SinkConfig{Path: "-"}, ""},
		{SinkConfig{Path: "x.csv", Records: "samples"}, ""},
		{SinkConfig{}, "path: required"},
		{SinkConfig{Path: "-", Records: "windows"}, `records: "windows": the csv sink writes entities or samples`},
	} {
		err := tc.cfg.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
