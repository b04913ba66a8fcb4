package live

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

var smallTrace, _ = filepath.Abs("../testdata/smpi/ring-8.trace")

// TestPublishCreatesTopic: a plain broker (no --topics) creates
// tracecast.traces on its first use, with its default partition count,
// as Kafka does by default (auto.create.topics.enable). publish used to
// retry for ever, logging "the broker is not reachable" with "Unknown
// Topic Or Partition".
func TestPublishCreatesTopic(t *testing.T) {
	c, err := StartBroker(BrokerOptions{Addr: "127.0.0.1:0", Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	n, err := Publish(ctx, smallTrace, PublishOptions{Brokers: c.ListenAddrs(), Topic: "tracecast.traces", Logger: zerolog.New(&logs)})
	if err != nil || n == 0 {
		t.Fatalf("publish: %d lines, %v\n%s", n, err, logs.String())
	}
	if ps := c.PartitionInfos("tracecast.traces"); len(ps) != 4 {
		t.Errorf("tracecast.traces has %d partitions, want 4", len(ps))
	}
	if strings.Contains(logs.String(), "not reachable") {
		t.Errorf("warned of an unreachable broker:\n%s", logs.String())
	}
}

// TestPublishToMissingTopic: against a broker that does not create topics
// (--no-auto-create-topics), publish says the topic does not exist on the
// broker — not that the broker is not reachable — and gives up after its
// delivery timeout instead of retrying for ever.
func TestPublishToMissingTopic(t *testing.T) {
	c, err := StartBroker(BrokerOptions{Addr: "127.0.0.1:0", Partitions: 4, NoAutoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	start := time.Now()
	_, err = Publish(ctx, smallTrace, PublishOptions{Brokers: c.ListenAddrs(), Topic: "tracecast.traces",
		DeliveryTimeout: 3 * time.Second, Logger: zerolog.New(&logs)})
	took := time.Since(start)
	want := "topic tracecast.traces does not exist on " + c.ListenAddrs()[0]
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("publish: %v, want %q\n%s", err, want, logs.String())
	}
	if ctx.Err() != nil || took > 20*time.Second {
		t.Errorf("gave up after %v, want about the 3 s delivery timeout", took)
	}
	if strings.Contains(logs.String(), "not reachable") {
		t.Errorf("warned of an unreachable broker:\n%s", logs.String())
	}
	if c.TopicInfo("tracecast.traces") != nil {
		t.Error("the topic was created")
	}
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
}

// TestSubscribeToMissingTopic: subscribe (without a group) to a topic the
// broker does not have says so, naming the broker and what to do, rather
// than Kafka's bare "[3] Unknown Topic Or Partition"; with a group it
// warns and waits for the topic.
func TestSubscribeToMissingTopic(t *testing.T) {
	c, err := StartBroker(BrokerOptions{Addr: "127.0.0.1:0", Partitions: 4, NoAutoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	err = Subscribe(t.Context(), SubscribeOptions{Brokers: []string{addr}, Topic: "nope"}, func([][]byte) error { return nil })
	if want := "topic nope does not exist on " + addr; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("subscribe: %v, want %q", err, want)
	}
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	err = Subscribe(ctx, SubscribeOptions{Brokers: []string{addr}, Topic: "nope", Group: "g", Logger: zerolog.New(&logs)}, func([][]byte) error { return nil })
	if err != nil || !strings.Contains(logs.String(), "topic nope does not exist on "+addr) {
		t.Errorf("subscribe with a group: %v, logs:\n%s", err, logs.String())
	}
}
