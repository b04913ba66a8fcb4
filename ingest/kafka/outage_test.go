package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/internal/logtest"
)

// TestBrokerOutageWarnedOnce: the broker down for 4 s under a reading
// source gives one warning per kind of failure (the partitions' fetches,
// the group's join), each naming the topic or group, the brokers and the
// count, not one per retry; the recovery is logged. Before, each of the
// four partitions warned "fetching; retrying" every 500 ms and the group
// "joining the consumer group; retrying" every 500 ms: about 40 lines for
// 4 s.
func TestBrokerOutageWarnedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a broker, 4 s of outage (-short)")
	}
	b := kafkatest.StartRestartable(t, 4, "lines")
	var logs logtest.Buffer
	c := &collector{release: true, lines: map[string][]string{}, ends: map[string]int{}, reasons: map[string]string{}, drops: map[string]string{}}
	s, err := New(Options{Brokers: []string{b.Addr}, Topic: "lines", Group: "g", CommitInterval: 50 * time.Millisecond,
		MaxWait: 50 * time.Millisecond, SessionTimeout: 6 * time.Second, StopCommitTimeout: time.Second, Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, c.emit) }()
	for deadline := time.Now().Add(15 * time.Second); s.Stats().Generations == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no generation joined in 15 s\n%s", logs.String())
		}
	}
	time.Sleep(500 * time.Millisecond) // fetching
	b.Stop()
	time.Sleep(4 * time.Second)
	b.Start()
	// The source reads again: the join or the fetches say so.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), "again"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no recovery logged 20 s after the broker came back\n%s", logs.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	warnings := map[string]int{}
	for _, l := range strings.Split(logs.String(), "\n") {
		if !strings.Contains(l, `"level":"warn"`) {
			continue
		}
		switch {
		case strings.Contains(l, "fetching failed"):
			warnings["fetch"]++
			if !strings.Contains(l, `"topic":"lines"`) || !strings.Contains(l, b.Addr) || !strings.Contains(l, `"failed_attempts":1`) {
				t.Errorf("the fetch warning does not name the topic, the brokers and the count: %s", l)
			}
		case strings.Contains(l, "cannot join the consumer group"):
			warnings["join"]++
		default:
			warnings["other"]++
			t.Logf("other warning: %s", l)
		}
	}
	if warnings["fetch"] > 1 || warnings["join"] > 1 || warnings["fetch"]+warnings["join"] == 0 {
		t.Errorf("warnings over a 4 s outage: %v, want one per kind of failure\n%s", warnings, logs.String())
	}
	t.Logf("warnings over a 4 s outage: %v", warnings)
}

// TestSessionTimeoutRefused: a session_timeout the broker refuses (2 s
// against kfake's 6 s minimum) ends Run with the setting to change.
// Before, kafka-go retried the join for ever, its "Invalid Session
// Timeout" logged at debug level: the service read nothing and said
// nothing.
func TestSessionTimeoutRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker (-short)")
	}
	b := kafkatest.StartRestartable(t, 4, "lines")
	s, err := New(Options{Brokers: []string{b.Addr}, Topic: "lines", Group: "g", SessionTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := &collector{lines: map[string][]string{}, ends: map[string]int{}, reasons: map[string]string{}, drops: map[string]string{}}
	err = s.Run(ctx, c.emit)
	if ctx.Err() != nil {
		t.Fatal("still joining 20 s later")
	}
	if err == nil || !strings.Contains(err.Error(), "session_timeout 2s") || !strings.Contains(err.Error(), "Invalid Session Timeout") {
		t.Fatalf("Run: %v, want the refused session_timeout named", err)
	}
	t.Log(err)
}
