package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/sinks/arrow"
	kafkasink "github.com/tracecast/tracecast/sinks/kafka"
)

func TestRecords(t *testing.T) {
	enc := arrow.NewStreamEncoder([]arrow.Table{arrow.StructTable[tracecast.Prediction]("tracecast.prediction/1", nil)})
	defer enc.Release()
	v, err := enc.Encode([]tracecast.Prediction{{ID: "a/w1/idle>=25%", Trace: "a", Window: 1, Query: "idle>=25%", Likelihood: 0.25},
		{ID: "a/w1/idle>=50%", Trace: "a", Window: 1, Query: "idle>=50%", Likelihood: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	arrowMsg := kafkago.Message{Key: []byte("a"), Value: v, Headers: []kafkago.Header{
		{Key: "schema", Value: []byte("tracecast.prediction/1")}, {Key: "content-type", Value: []byte(kafkasink.ArrowContentType)}}}
	jsonMsg := kafkago.Message{Value: []byte(`{"schema":"tracecast.alert/1","kind":"regime-change"}`)}
	for _, tc := range []struct {
		name    string
		m       kafkago.Message
		want    []string // ids, or the values of JSON messages
		wantErr bool
	}{
		{name: "JSON message", m: jsonMsg, want: []string{string(jsonMsg.Value)}},
		{name: "Arrow message: a record per row, with its schema", m: arrowMsg, want: []string{"a/w1/idle>=25%", "a/w1/idle>=50%"}},
		{name: "undecodable Arrow message", m: kafkago.Message{Value: []byte("junk"), Headers: arrowMsg.Headers}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := Records(tc.m)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != len(tc.want) {
				t.Fatalf("%d records, want %d", len(recs), len(tc.want))
			}
			for i, r := range recs {
				var rec struct{ Schema, ID string }
				if err := json.Unmarshal(r, &rec); err != nil {
					t.Fatalf("%s: %v", r, err)
				}
				if got := rec.ID; got != tc.want[i] && string(r) != tc.want[i] {
					t.Errorf("record %d: %s, want %s", i, r, tc.want[i])
				}
				if !strings.HasPrefix(string(r), `{"schema":"tracecast.`) {
					t.Errorf("record %d does not start with its schema: %s", i, r)
				}
			}
		})
	}
}

func TestMatch(t *testing.T) {
	pred := []byte(`{"schema":"tracecast.prediction/1","query":"idle>=25%"}`)
	alert := []byte(`{"schema":"tracecast.alert/1","query":"idle>=25%","kind":"idle-opportunity"}`)
	for _, tc := range []struct {
		rec         []byte
		query, kind string
		want        bool
	}{
		{pred, "", "", true},
		{pred, "IDLE>=25%", "", true},
		{pred, "idle>=50%", "", false},
		{pred, "", "idle-opportunity", false},
		{alert, "idle>=25%", "idle-opportunity", true},
		{alert, "", "regime-change", false},
		{[]byte("not json"), "", "", true},
		{[]byte("not json"), "idle>=25%", "", false},
	} {
		if got := Match(tc.rec, tc.query, tc.kind); got != tc.want {
			t.Errorf("Match(%s, %q, %q) = %v", tc.rec, tc.query, tc.kind, got)
		}
	}
}

func TestBrokerOptions(t *testing.T) {
	topics, err := ParseTopics([]string{Topics, " extra ", "one:2,two"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(topics); got != "[{tracecast.traces 4} {tracecast.predictions 4} {tracecast.forecasts 4} {tracecast.alerts 4} {extra 3} {one 2} {two 3}]" {
		t.Errorf("topics %s", got)
	}
	for _, tc := range []struct {
		o    BrokerOptions
		want string
	}{
		{BrokerOptions{Addr: "10.0.0.1:9092"}, `addr "10.0.0.1:9092": the broker listens on loopback only (127.0.0.1)`},
		{BrokerOptions{Addr: "127.0.0.1:x"}, `addr "127.0.0.1:x": bad port`},
		{BrokerOptions{Addr: "127.0.0.1"}, `addr "127.0.0.1": address 127.0.0.1: missing port in address`},
		{BrokerOptions{Addr: "127.0.0.1:0", Topics: []string{"a:0"}}, `topics "a:0": bad partition count`},
		{BrokerOptions{Addr: "127.0.0.1:0", Topics: []string{"ok,bad name:2"}}, `topics "bad name:2": topic "bad name": character ' ' at 3 is not one of a-z A-Z 0-9 . _ -`},
		{BrokerOptions{Addr: "127.0.0.1:0", Topics: []string{".."}}, `topics "..": topic "..": not a valid name`},
		{BrokerOptions{Addr: "127.0.0.1:0", Topics: []string{strings.Repeat("x", 250) + ":1"}}, `topics "` + strings.Repeat("x", 60) + `"... (252 bytes): topic "` + strings.Repeat("x", 60) + `"... (250 bytes): 250 characters, Kafka allows at most 249`},
	} {
		_, err := StartBroker(tc.o)
		var oe *OptionError
		if !errors.As(err, &oe) || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	c, err := StartBroker(BrokerOptions{Addr: "127.0.0.1:0", Topics: []string{Topics}, Partitions: 4, MinSessionTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// TestPublishSubscribe replays a trace into a topic as a live producer
// would (numbered lines, an end marker) and reads a record topic back, in
// both subscriber modes, with filters and a limit.
func TestPublishSubscribe(t *testing.T) {
	addr := kafkatest.Start(t, 2, "traces", "records")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	trace := filepath.Join(t.TempDir(), "run.trace")
	var lines []string
	for i := range 7 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	if err := os.WriteFile(trace, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(ctx, trace, PublishOptions{Brokers: []string{addr}, Topic: "traces", Speed: "fast"}); err == nil {
		t.Error("speed fast: no error")
	}
	n, err := Publish(ctx, trace, PublishOptions{Brokers: []string{addr}, Topic: "traces", LinesPerMessage: 3, Logger: zerolog.Nop()})
	if err != nil || n != 7 {
		t.Fatalf("published %d lines: %v", n, err)
	}
	// What a live producer sends: 3 messages of lines keyed by the file's
	// name, numbered from 0, then the end marker.
	var got []string
	err = Subscribe(ctx, SubscribeOptions{Brokers: []string{addr}, Topic: "traces", IdleExit: 2 * time.Second}, func(recs [][]byte) error {
		for _, r := range recs {
			got = append(got, string(r))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"line 0\nline 1\nline 2\n", "line 3\nline 4\nline 5\n", "line 6\n", ""}; fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("messages %q, want %q", got, want)
	}

	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "records", Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond, RequiredAcks: kafkago.RequireAll}
	defer w.Close()
	var msgs []kafkago.Message
	for i := range 6 {
		q := []string{"idle>=25%", "idle>=50%"}[i%2]
		msgs = append(msgs, kafkago.Message{Key: []byte(fmt.Sprint("trace", i%3)),
			Value: fmt.Appendf(nil, `{"schema":"tracecast.prediction/1","id":"trace%d/w%d/%s","query":%q}`, i%3, i, q, q)})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    SubscribeOptions
		want int
	}{
		{"every partition", SubscribeOptions{IdleExit: time.Second}, 6},
		{"a query", SubscribeOptions{Query: "idle>=50%", IdleExit: time.Second}, 3},
		{"a limit", SubscribeOptions{Limit: 2}, 2},
		{"a group from the start", SubscribeOptions{Group: "g", FromStart: true, IdleExit: 2 * time.Second}, 6},
		{"the group again: all committed", SubscribeOptions{Group: "g", FromStart: true, IdleExit: 2 * time.Second}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Brokers, o.Topic, o.Logger = []string{addr}, "records", zerolog.Nop()
			n := 0
			if err := Subscribe(ctx, o, func(recs [][]byte) error {
				for _, r := range recs {
					if !Match(r, o.Query, "") {
						t.Errorf("%s passed the filter %q", r, o.Query)
					}
				}
				n += len(recs)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if n != tc.want {
				t.Errorf("%d records, want %d", n, tc.want)
			}
		})
	}
}
