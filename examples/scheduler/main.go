// Command scheduler is the smallest scheduler-side consumer of tracecast's
// predictions: it joins a consumer group on the predictions and alerts
// topics, de-duplicates records on their deterministic id (delivery is at
// least once: a record may come twice, always with the same id), and acts
// on idle opportunities. Start from it to plug tracecast into a scheduler.
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

// record holds the fields a scheduler needs from predictions and alerts
// (schemas tracecast.prediction/1 and tracecast.alert/1).
type record struct {
	Schema     string  `json:"schema"`
	ID         string  `json:"id"`
	Trace      string  `json:"trace"`
	Window     int64   `json:"window"`
	Query      string  `json:"query"`
	Likelihood float64 `json:"likelihood"`
	HorizonS   float64 `json:"horizon_s"`
	Kind       string  `json:"kind"`
	Message    string  `json:"message"`
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
		GroupTopics: []string{"tracecast.predictions", "tracecast.alerts"},
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
			case strings.HasPrefix(rec.Schema, "tracecast.alert/") && rec.Kind == "idle-opportunity":
				log.Printf("%s: schedule more work now: %s", rec.Trace, rec.Message)
			case strings.HasPrefix(rec.Schema, "tracecast.prediction/"):
				log.Printf("%s window %d: P(%s) = %.2f over the next %.3g s", rec.Trace, rec.Window, rec.Query, rec.Likelihood, rec.HorizonS)
			}
		}
		// Commit after acting: a crash before this line re-delivers the
		// record, and the id makes the second delivery harmless.
		if err := r.CommitMessages(ctx, m); err != nil && ctx.Err() == nil {
			log.Printf("commit: %v", err)
		}
	}
}
