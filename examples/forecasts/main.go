// Command forecasts prints what tracecast publishes for schedulers, one
// JSON record a line: forecasts, their outcomes and the rolling skill
// records from tracecast.forecasts, alert episodes from tracecast.alerts.
// It is the example of docs/schedulers.md (a test checks that the page
// shows this file and that it reads a broker); examples/scheduler acts on
// the records.
//
//	go run ./examples/forecasts 127.0.0.1:9092
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/segmentio/kafka-go"
)

func main() {
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: os.Args[1:], GroupID: "my-scheduler",
		GroupTopics: []string{"tracecast.forecasts", "tracecast.alerts"}})
	for {
		m, err := r.ReadMessage(context.Background()) // commits the group's offset
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s\n", m.Value) // {"schema":"tracecast.forecast/1","record":"forecast","id":...,"p":0.83,...}
	}
}
