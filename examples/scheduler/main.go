// Command scheduler is the smallest scheduler-side consumer of tracecast's
// forecasts: it joins a consumer group on the forecasts and alerts topics,
// de-duplicates records on their id (delivery is at least once: a record
// may come twice, always with the same id; a forecast, its outcome and an
// episode's opening and closing each have their own), and acts on idle
// opportunities. Start from it to plug tracecast into a scheduler.
//
//	go run ./examples/scheduler -brokers 127.0.0.1:9092
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

// record holds the fields a scheduler needs from forecasts and alert
// episodes (schemas tracecast.forecast/1 and tracecast.episode/1; see
// docs/forecasts.md).
type record struct {
	Schema        string   `json:"schema"`
	ID            string   `json:"id"`
	Run           string   `json:"run"`
	Query         string   `json:"query"`
	IssuedAt      float64  `json:"issued_at"`
	Horizon       float64  `json:"horizon"`
	P             float64  `json:"p"`
	Lo            *float64 `json:"lo"` // null: an empty interval
	Hi            *float64 `json:"hi"`
	WorkerSeconds float64  `json:"worker_seconds"`
	Kind          string   `json:"kind"`
	State         string   `json:"state"`
	Message       string   `json:"message"`
}

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "comma-separated Kafka brokers")
	group := flag.String("group", "scheduler", "consumer group")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:     strings.Split(*brokers, ","),
		GroupID:     *group,
		GroupTopics: []string{"tracecast.forecasts", "tracecast.alerts"},
		MaxWait:     250 * time.Millisecond,
	})
	defer r.Close()
	seen := map[string]bool{} // a real scheduler bounds this (an LRU keyed by id)
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Printf("fetch: %v (retrying)", err) // broker restarts are transient
			continue
		}
		var rec record
		if err := json.Unmarshal(m.Value, &rec); err == nil && !seen[rec.ID] {
			seen[rec.ID] = true
			switch {
			case strings.HasPrefix(rec.Schema, "tracecast.episode/") && rec.Kind == "idle-opportunity" && rec.State == "open":
				log.Printf("%s: schedule more work now: %s", rec.Run, rec.Message)
			case strings.HasPrefix(rec.Schema, "tracecast.forecast/"):
				log.Printf("%s at %.3f s: %s during %.0f%% of the next %g s (%.3g idle worker-seconds)", rec.Run, rec.IssuedAt, rec.Query, 100*rec.P, rec.Horizon, rec.WorkerSeconds)
			}
		}
		// Commit after acting: a crash before this line re-delivers the
		// record, and the id makes the second delivery harmless.
		if err := r.CommitMessages(ctx, m); err != nil && ctx.Err() == nil {
			log.Printf("commit: %v", err)
		}
	}
}
