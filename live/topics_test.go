package live

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// TestBrokerRefusesInvalidTopics: the broker refuses, as Kafka does, a
// client's CreateTopics for a name Kafka does not allow (more than 249
// characters, characters outside [a-zA-Z0-9._-], "." and ".."), with
// INVALID_TOPIC_EXCEPTION and a message quoting at most ~100 bytes of it.
// A 300-character topic was created, and the broker then failed on restart
// (snapshot.json: file name too long).
func TestBrokerRefusesInvalidTopics(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	start := func() (string, func()) {
		t.Helper()
		c, err := StartBroker(BrokerOptions{Addr: "127.0.0.1:0", DataDir: dir, Partitions: 1})
		if err != nil {
			t.Fatalf("broker start: %v", err)
		}
		return c.ListenAddrs()[0], c.Close
	}
	addr, stop := start()
	tr := &kafkago.Transport{}
	defer tr.CloseIdleConnections()
	cl := &kafkago.Client{Addr: kafkago.TCP(addr), Transport: tr, Timeout: 10 * time.Second}
	long := strings.Repeat("x", 300)
	for _, name := range []string{long, "a/b", "..", "has space"} {
		res, err := cl.CreateTopics(context.Background(), &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{{Topic: name, NumPartitions: 1, ReplicationFactor: 1}}})
		if err != nil {
			t.Fatalf("%.20q: %v", name, err)
		}
		terr := res.Errors[name]
		if !errors.Is(terr, kafkago.InvalidTopic) {
			t.Errorf("%.20q: created or refused with %v, want INVALID_TOPIC_EXCEPTION", name, terr)
		}
	}
	// A valid name still works, in a request of its own.
	res, err := cl.CreateTopics(context.Background(), &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{{Topic: "ok.topic", NumPartitions: 1, ReplicationFactor: 1}}})
	if err != nil || res.Errors["ok.topic"] != nil {
		t.Fatalf("ok.topic: %v %v", err, res.Errors)
	}
	tr.CloseIdleConnections()
	stop()
	// The broker starts again on its data, with the valid topic.
	addr, stop = start()
	defer stop()
	conn, err := kafkago.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if parts, err := conn.ReadPartitions("ok.topic"); err != nil || len(parts) != 1 {
		t.Fatalf("ok.topic after the restart: %v, %v", parts, err)
	}
}

// TestPublishSubscribeCheckTopicNames: publish and subscribe refuse a
// topic name Kafka does not allow before connecting, quoting at most ~100
// bytes of it.
func TestPublishSubscribeCheckTopicNames(t *testing.T) {
	long := strings.Repeat("y", 5000)
	for _, name := range []string{long, "a b", "."} {
		_, perr := Publish(context.Background(), "no-such.trace", PublishOptions{Topic: name, Brokers: []string{"127.0.0.1:1"}})
		serr := Subscribe(context.Background(), SubscribeOptions{Topic: name, Brokers: []string{"127.0.0.1:1"}}, func([][]byte) error { return nil })
		for what, err := range map[string]error{"publish": perr, "subscribe": serr} {
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Option != "topic" {
				t.Errorf("%s %.20q: %v, want an OptionError on --topic", what, name, err)
				continue
			}
			if len(err.Error()) > 200 {
				t.Errorf("%s: a %d-byte message: %.120s...", what, len(err.Error()), err)
			}
		}
	}
}
