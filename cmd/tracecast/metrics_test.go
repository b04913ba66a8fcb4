package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startReady starts the binary with args and waits for its first line of
// output, which must begin with ready; it is stopped (SIGTERM) at the
// test's end.
func startReady(t *testing.T, ready string, args ...string) {
	t.Helper()
	c := exec.Command(binary, args...)
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, ready) {
		t.Fatalf("%s: %q %v", args[0], line, err)
	}
}

// TestBrokerMetricsAddr: `tracecast broker --metrics-addr` serves the
// broker's topics, partitions, messages and bytes besides the Go and
// process metrics, and /readyz once it listens.
func TestBrokerMetricsAddr(t *testing.T) {
	addr, maddr := freeAddr(t), freeAddr(t)
	startReady(t, "READY", "broker", "--addr", addr, "--metrics-addr", maddr, "--topics", "traces:3")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "traces", Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond, RequiredAcks: kafkago.RequireAll}
	if err := w.WriteMessages(ctx, kafkago.Message{Key: []byte("a"), Value: []byte("x")}, kafkago.Message{Key: []byte("b"), Value: []byte("y")}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + maddr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz: %d", code)
	}
	_, body := get("/metrics")
	for _, want := range []string{"go_goroutines ", "tracecast_broker_topics 1\n", `tracecast_broker_partitions{topic="traces"} 3` + "\n",
		`tracecast_broker_messages_total{topic="traces"} 2` + "\n", `tracecast_broker_bytes{topic="traces"} `} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestLiveServesBrokerMetrics: `tracecast live --metrics-addr`, which
// starts its own broker, serves the broker's metrics beside the
// pipeline's on the one endpoint; it served only the pipeline's before.
func TestLiveServesBrokerMetrics(t *testing.T) {
	addr, maddr := freeAddr(t), freeAddr(t)
	startReady(t, "READY broker", "--log-format", "json", "live", "--no-progress", "--addr", addr, "--metrics-addr", maddr)
	want := []string{"tracecast_broker_topics ", `tracecast_broker_partitions{topic="tracecast.traces"} 4` + "\n", `tracecast_kafka_consumer_lag{component="traces"`}
	deadline := time.Now().Add(30 * time.Second)
	for {
		body := ""
		if resp, err := http.Get("http://" + maddr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
		missing := ""
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = w
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %q 30 s after the start:\n%s", missing, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
