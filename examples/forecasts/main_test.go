package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/kafkatest"
	kafkasink "github.com/tracecast/tracecast/sinks/kafka"
)

// TestREADME: the page for schedulers (docs/schedulers.md, which the
// README links to) shows this program as it is.
func TestREADME(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "schedulers.md"))
	if err != nil {
		t.Fatal(err)
	}
	code := string(src[strings.Index(string(src), "package main"):])
	if !strings.Contains(string(readme), "```go\n"+code+"```\n") {
		t.Errorf("docs/schedulers.md does not show examples/forecasts/main.go from `package main` on in a go block:\n%s", code)
	}
}

// TestReadsForecasts builds the program and runs it against a broker where
// the kafka sink published a forecast and an alert episode: it prints both.
func TestReadsForecasts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example and starts a broker (-short)")
	}
	bin := filepath.Join(t.TempDir(), "forecasts")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr := kafkatest.Start(t, 2, "tracecast.forecasts", "tracecast.alerts")
	for _, rec := range []struct {
		topic string
		items any
	}{
		{"tracecast.forecasts", []tracecast.Forecast{{ID: "run/idle>=25%/10ms/0", Run: "run", Query: "idle>=25%", Horizon: 0.01, P: 0.83}}},
		{"tracecast.alerts", []tracecast.Episode{{ID: "run/idle-opportunity/idle>=25%/10ms/0", Run: "run", Kind: "idle-opportunity", State: "open", End: math.NaN()}}},
	} {
		s, err := kafkasink.New(kafkasink.Options{Brokers: []string{addr}, Topic: rec.topic})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(t.Context(), tracecast.Batch{Items: rec.items}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	got := map[string]bool{}
	timeout := time.After(60 * time.Second)
	for len(got) < 2 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the program stopped; got %v", got)
			}
			var rec struct{ Schema string }
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			got[rec.Schema] = true
		case <-timeout:
			t.Fatalf("60 s: got %v, want a forecast and an episode", got)
		}
	}
	if !got["tracecast.forecast/1"] || !got["tracecast.episode/1"] {
		t.Errorf("schemas %v", got)
	}
}
