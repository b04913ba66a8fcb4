package main

import (
	"strings"
	"testing"
	"time"

	"github.com/tracecast/tracecast/live"
)

// TestTopicsCommand: against a broker that does not create topics on
// first use, publish exits 1 after --delivery-timeout saying the topic
// does not exist on the broker (it retried for ever, "the broker is not
// reachable"); `tracecast topics create` creates the live setup's topics,
// `tracecast topics` lists them, and publish then succeeds. A plain
// broker creates the topic on first use.
func TestTopicsCommand(t *testing.T) {
	trace := "../../testdata/smpi/ring-8.trace"
	strict, err := live.StartBroker(live.BrokerOptions{Addr: "127.0.0.1:0", Partitions: 4, NoAutoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	addr := strict.ListenAddrs()[0]
	start := time.Now()
	r := run(t, nil, "publish", "--brokers", addr, "--topic", "tracecast.traces", "--delivery-timeout", "2s", trace)
	want := "topic tracecast.traces does not exist on " + addr
	if r.code != 1 || !strings.Contains(lastLine(r.stderr), want) || strings.Contains(r.stderr, "not reachable") {
		t.Fatalf("publish to a missing topic: exit %d after %v, want 1 and %q:\n%s", r.code, time.Since(start), want, r.stderr)
	}
	t.Logf("%s", lastLine(r.stderr))
	if r := run(t, nil, "publish", "--brokers", addr, "--topic", "x", "--delivery-timeout", "0s", trace); r.code != 2 {
		t.Errorf("--delivery-timeout 0s: exit %d, want 2: %s", r.code, r.stderr)
	}
	r = run(t, nil, "topics", "--brokers", addr)
	if r.code != 0 || strings.Count(r.stdout, "missing: tracecast topics create") != 4 {
		t.Fatalf("topics: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, nil, "topics", "create", "--brokers", addr)
	if r.code != 0 || strings.Count(r.stdout, "created tracecast.") != 4 {
		t.Fatalf("topics create: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, nil, "topics", "create", "--brokers", addr, "tracecast.traces", "other:2")
	if r.code != 0 || !strings.Contains(r.stdout, "exists  tracecast.traces") || !strings.Contains(r.stdout, "created other") {
		t.Fatalf("topics create again: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, nil, "topics", "list", "--brokers", addr)
	for _, line := range []string{"tracecast.traces       4           1         live setup", "other                  2           1"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("topics list lacks %q:\n%s", line, r.stdout)
		}
	}
	if r := run(t, nil, "publish", "--brokers", addr, "--topic", "tracecast.traces", trace); r.code != 0 {
		t.Fatalf("publish once created: exit %d: %s", r.code, r.stderr)
	}

	plain, err := live.StartBroker(live.BrokerOptions{Addr: "127.0.0.1:0", Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if r := run(t, nil, "publish", "--brokers", plain.ListenAddrs()[0], "--topic", "tracecast.traces", trace); r.code != 0 {
		t.Fatalf("publish to a plain broker: exit %d: %s", r.code, r.stderr)
	}
	if ps := plain.PartitionInfos("tracecast.traces"); len(ps) != 4 {
		t.Errorf("created with %d partitions, want 4", len(ps))
	}
}
