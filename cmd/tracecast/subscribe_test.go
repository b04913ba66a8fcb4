package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/sinks/arrow"
	kafkasink "github.com/tracecast/tracecast/sinks/kafka"
)

// TestPrintArrowRecords: an Arrow message (kafka sink format arrow) is
// printed as one JSON line per record, with its schema, and filtered.
func TestPrintArrowRecords(t *testing.T) {
	enc := arrow.NewStreamEncoder([]arrow.Table{arrow.StructTable[tracecast.Prediction]("tracecast.prediction/1", nil)})
	defer enc.Release()
	v, err := enc.Encode([]tracecast.Prediction{{ID: "a/w1/idle>=25%", Trace: "a", Window: 1, Query: "idle>=25%", Likelihood: 0.25},
		{ID: "a/w1/idle>=50%", Trace: "a", Window: 1, Query: "idle>=50%", Likelihood: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	m := kafkago.Message{Key: []byte("a"), Value: v, Headers: []kafkago.Header{
		{Key: "schema", Value: []byte("tracecast.prediction/1")}, {Key: "content-type", Value: []byte(kafkasink.ArrowContentType)}}}
	var buf bytes.Buffer
	out := bufio.NewWriter(&buf)
	if n := printRecords(out, m, "idle>=50%", ""); n != 1 {
		t.Fatalf("%d records printed, want 1:\n%s", n, buf.String())
	}
	var rec struct {
		Schema, ID string
		Likelihood float64
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(buf.String())), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Schema != "tracecast.prediction/1" || rec.ID != "a/w1/idle>=50%" || rec.Likelihood != 0.5 {
		t.Fatalf("%+v", rec)
	}
}
