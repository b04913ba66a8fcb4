package pjdump

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/internal/sinktest"
)

func TestSink(t *testing.T) {
	ents := []tracecast.Entity{
		{Nature: tracecast.NatureContainer, Container: "0", Type: "T", Start: 0, End: 12.5, Value: "c"},
		{Nature: tracecast.NatureState, Container: "c", Type: "S", Start: 1, End: 2.5, Imbrication: 1, Value: "run",
			Ext: &tracecast.EntityExt{Extra: []tracecast.Field{{Name: "JobId", Value: "42"}}}},
	}
	want := "Container, 0, T, 0, 12.5, 12.5, c\nState, c, S, 1.000000, 2.500000, 1.500000, 1.000000, run, 42\n"
	for _, tc := range []struct {
		name    string
		batches []any
		want    string
		wantErr string
	}{
		{name: "entities, user-defined fields when they have some", batches: []any{ents[:1], nil, ents[1:]}, want: want},
		{name: "nothing", want: ""},
		{name: "other records", batches: []any{[]tracecast.Sample{{}}}, wantErr: "writes entities, not []tracecast.Sample"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			s, err := NewSink("-", output.Options{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			if !sinktest.WriteThenClose(t, s, tc.batches, tc.wantErr, nil) {
				return
			}
			if got := out.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if err := s.Write(context.Background(), tracecast.Batch{Items: ents}); err == nil {
				t.Error("write after close: no error")
			}
		})
	}
}

func TestSinkFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out", "run.pjdump")
	s, err := NewSink(path, output.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), tracecast.Batch{Items: []tracecast.Entity{{Nature: tracecast.NatureEvent, Container: "c", Type: "E", Start: 2, Value: "v"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "Event, c, E, 2.000000, v\n" {
		t.Fatalf("%q, %v", data, err)
	}
	if (&SinkConfig{}).Validate() == nil {
		t.Error("no path: no error")
	}
}
