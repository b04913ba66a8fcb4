package live_test

import (
	"context"
	"fmt"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/live"
	"github.com/tracecast/tracecast/sinks/kafka"
)

// A scheduler subscribes to the topics the live service publishes to
// (tracecast.forecasts, tracecast.episodes, ...; docs/schedulers.md) and
// gets each record as one JSON object, "schema" first. Here a broker in
// the process stands for the cluster, and two forecasts are written to it
// as the live pipeline's kafka sink writes them.
func ExampleSubscribe() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	broker, err := live.StartBroker(live.BrokerOptions{Addr: "127.0.0.1:0", Topics: []string{"tracecast.forecasts"}, Partitions: 1, MinSessionTimeout: time.Second})
	if err != nil {
		panic(err)
	}
	defer broker.Close()
	addr := broker.ListenAddrs()[0]

	rt, _ := tracecast.LookupRecordType("forecasts")
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "tracecast.forecasts"}
	for _, q := range []string{"idle>=25%", "idle>=50%"} {
		value, err := kafka.Encode(rt.Schema, tracecast.Forecast{ID: "run-1/" + q + "/50ms/0", Run: "run-1", Class: "idle", Query: q,
			Threshold: 1, Workers: 2, Horizon: 0.05, P: 0.75, Mean: 0.5, WorkerSeconds: 0.05, Lo: 0.5, Hi: 1, Method: "auto"})
		if err != nil {
			panic(err)
		}
		if err := w.WriteMessages(ctx, kafkago.Message{Key: []byte("run-1"), Value: value, Headers: kafka.Headers(rt, "application/json")}); err != nil {
			panic(err)
		}
	}
	w.Close()

	// The scheduler's side: every partition from the start (Group: join a
	// consumer group and commit instead), the records of one query, and
	// stop after one (a scheduler runs until its context ends).
	err = live.Subscribe(ctx, live.SubscribeOptions{Brokers: []string{addr}, Topic: "tracecast.forecasts", Query: "idle>=50%", Limit: 1},
		func(records [][]byte) error {
			for _, r := range records {
				fmt.Println(string(r))
			}
			return nil
		})
	if err != nil {
		panic(err)
	}
	// Output:
	// {"schema":"tracecast.forecast/1","record":"forecast","id":"run-1/idle>=50%/50ms/0","run":"run-1","class":"idle","query":"idle>=50%","threshold":1,"workers":2,"issued_at":0,"horizon":0.05,"p":0.75,"mean":0.5,"worker_seconds":0.05,"lo":0.5,"hi":1,"method":"auto"}
}
