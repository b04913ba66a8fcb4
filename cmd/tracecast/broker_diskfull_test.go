//go:build chaos && linux

package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/internal/fulldisk"
	"github.com/tracecast/tracecast/live"
)

// TestChaosBrokerDiskFull fills the broker's data directory for 8 s (a
// tmpfs filled to its last byte as root; otherwise the broker runs in the
// test with its free space injected) under a live service starting on
// four published runs: the broker answers produce
// requests KAFKA_STORAGE_ERROR and logs why, once; the live service keeps
// its input position and waits — /readyz 503 naming the cause,
// tracecast_kafka_write_outage 1, a few warnings rather than one per
// record — and once there is room again every prediction, verdict and
// forecast of the offline replay is on the topics, none changed. Before,
// the pipeline died after 165 × "Kafka write errors … [-1] Unknown" in one
// log line, and nothing said the disk was full.
func TestChaosBrokerDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the live setup as processes for a minute (-short)")
	}
	e := newLiveEnv(t)
	e.stopBroker()
	d, mounted := fulldisk.Mount(t, 128<<20)
	var full atomic.Bool
	if mounted {
		e.brokerDir = d.Dir
		e.startBroker()
	} else {
		log, err := os.Create(filepath.Join(e.dir, "broker.log"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := live.StartBroker(live.BrokerOptions{Addr: e.addr, DataDir: filepath.Join(e.dir, "broker2"), Topics: []string{live.Topics},
			Partitions: 4, MinSessionTimeout: time.Second, Logger: zerolog.New(log),
			FreeSpace: func(string) (int64, error) {
				if full.Load() {
					return 0, nil
				}
				return 1 << 30, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	maddr := l.Addr().String()
	l.Close()
	// The runs are on the topic; the disk fills; the service starts on
	// them: its sinks meet the full disk with their first records.
	e.publish("max")()
	if mounted {
		d.Fill()
	} else {
		full.Store(true)
	}
	e.pipeline("pipeline", "--metrics-addr", maddr)
	defer func() {
		if t.Failed() {
			for _, l := range []string{"pipeline", "broker"} {
				t.Logf("%s:\n%s", l, e.logTail(l))
			}
		}
	}()
	why := waitReady(t, maddr, false, 30*time.Second)
	failing := time.Now() // the service's first failed write
	if !strings.Contains(why, "KAFKA_STORAGE_ERROR") || !strings.Contains(why, "no space left on device") {
		t.Errorf("/readyz while the disk is full: %q, want the cause", why)
	}
	if m := scrape(t, maddr); !regexp.MustCompile(`tracecast_kafka_write_outage\{[^}]*\} 1`).MatchString(m) {
		t.Errorf("no kafka_write_outage 1 while the disk is full")
	}
	time.Sleep(8 * time.Second)
	if mounted {
		d.Free()
	} else {
		full.Store(false)
	}
	freed := time.Now()
	t.Logf("out of space for the service for %v", freed.Sub(failing).Round(time.Millisecond))
	waitReady(t, maddr, true, 60*time.Second)
	t.Logf("ready again %v after room was made", time.Since(freed).Round(time.Millisecond))
	counts := e.measure(t, e.offline(), nil, 120*time.Second, "pipeline", "broker")
	t.Logf("lost/changed/duplicates: predictions %d/%d/%d of %d, verdicts %d/%d/%d of %d, forecasts %d/%d/%d of %d",
		counts[0].lost, counts[0].changed, counts[0].dups, counts[0].want, counts[1].lost, counts[1].changed, counts[1].dups, counts[1].want,
		counts[2].lost, counts[2].changed, counts[2].dups, counts[2].want)

	plog, blog := readLog(e, "pipeline"), readLog(e, "broker")
	warnings := 0
	for _, l := range strings.Split(plog, "\n") {
		if strings.Contains(l, `"level":"warn"`) && strings.Contains(l, "cannot store messages") {
			warnings++
		}
	}
	const sinks = 7 // live-kafka's kafka sinks
	if warnings == 0 || warnings > sinks {
		t.Errorf("%d storage warnings from the pipeline's %d sinks in 8 s, want at most one each", warnings, sinks)
	}
	if !strings.Contains(plog, "sent again after") {
		t.Errorf("the pipeline did not say it sent again:\n%s", e.logTail("pipeline"))
	}
	if n := strings.Count(blog, "no space left on device"); n == 0 || n > 5 {
		t.Errorf("%d broker warnings naming the full disk, want 1 (or a few)\n%s", n, blog)
	}
	t.Logf("pipeline: %d storage warnings; broker: %d", warnings, strings.Count(blog, "no space left on device"))
	for _, l := range strings.Split(blog, "\n") {
		if strings.Contains(l, "no space left") || strings.Contains(l, "room again") {
			t.Logf("broker: %s", l)
		}
	}
	for _, what := range []string{`"level":"warn"`, "sent again after"} {
		for _, l := range strings.Split(plog, "\n") {
			if strings.Contains(l, what) {
				t.Logf("pipeline: %s", l)
				break
			}
		}
	}
}

// waitReady polls the pipeline's /readyz until it is ready (or not, as
// want says) and returns its body.
func waitReady(t *testing.T, addr string, want bool, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if (resp.StatusCode == http.StatusOK) == want {
				return strings.TrimSpace(string(b))
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not %v within %v (last: %v)", map[bool]string{true: "ready", false: "unready"}[want], within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
