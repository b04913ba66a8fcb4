package pipelines

import (
	"bytes"
	"context"
	"fmt"
	"github.com/tracecast/tracecast/internal/promexport"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/internal/gziptest"
)

// A running pipeline's metrics: records per component, queue fill, bad
// lines by reason, open traces and the forecasts' rolling skill, on a
// loopback /metrics; /readyz says whether it runs.
func TestMetrics(t *testing.T) {
	root, _ := filepath.Abs("..")
	data := gziptest.ReadFile(t, filepath.Join(root, "testdata/smpi/jacobi-8.trace.gz"))
	lines := bytes.SplitAfter(data, []byte("\n"))
	bad := append(append(lines[:len(lines)/2:len(lines)/2], []byte("99 not an event\n")), lines[len(lines)/2:]...)
	trace := filepath.Join(t.TempDir(), "run.trace")
	if err := os.WriteFile(trace, bytes.Join(bad, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: m
settings: {status_interval: 0s}
sources:
  trace: {type: tail, path: %q, poll: 10ms, parser: {type: paje, lenient: true}}
stages:
  f: {type: forecast, inputs: [trace], horizons: [10ms], skill_every: 50ms}
sinks:
  out: {type: jsonl, inputs: [f], records: skills, path: %q}
`, trace, filepath.Join(t.TempDir(), "out.jsonl")), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	h := &Health{}
	if _, _, err := promexport.Serve("0.0.0.0:0", reg, h, zerolog.Nop()); err == nil {
		t.Fatal("a non-loopback metrics address was accepted")
	}
	addr, stop, err := promexport.Serve("127.0.0.1:0", reg, h, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz before the run: %d", code)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, cfg, RunOptions{Metrics: promexport.Registry{Registerer: reg}, Health: h, Logger: zerolog.Nop()})
	}()
	want := []string{
		`tracecast_records_in_total{component="f",kind="stage",pipeline="m",type="forecast"}`,
		`tracecast_queue_capacity{component="out"`,
		`tracecast_bad_lines_total{component="trace",kind="parser",pipeline="m",reason="`,
		`tracecast_open_streams{component="f"`,
		`tracecast_forecast_skill{baseline="ks-paper",component="f",horizon="10ms",kind="stage",pipeline="m",query="idle>=25%",run="`,
		`tracecast_lines_total{component="trace"`,
	}
	var body string
	deadline := time.Now().Add(20 * time.Second)
	for {
		var code int
		code, body = get("/metrics")
		missing := ""
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = w
				break
			}
		}
		if code == 200 && missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics (%d) lacks %s:\n%s", code, missing, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, _ := get("/readyz"); code != 200 {
		t.Fatalf("/readyz while running: %d", code)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz after the run: %d", code)
	}
}
