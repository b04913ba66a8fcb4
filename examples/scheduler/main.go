// Command scheduler is a backfilling scheduler driven by tracecast's plans
// (docs/backfill.md, "A scheduler acting on the plans"). It reads the
// forecast policy's plans (tracecast.plan/1: for each idle worker, the
// windows of idle time in which a back-end task is worth launching), puts
// back-end tasks on the workers by them, and publishes what it launched as
// decisions (tracecast.decision/1), each once its outcome is known. Start
// from it to plug tracecast into a scheduler: replace `emit` by your
// runtime's launch and kill.
//
//	go run ./examples/scheduler -brokers 127.0.0.1:9092            # plans from tracecast.plans, decisions to tracecast.decisions
//	go run ./examples/scheduler -from out/bf/plans.jsonl           # plans from a file, decisions on standard output
//
// Each run's plans come in the order they were issued (they are keyed by
// run: one partition), and delivery is at least once: a plan seen again
// (same id) is skipped. The scheduler acts on every (task length, α) the
// plans carry.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "comma-separated Kafka brokers")
	group := flag.String("group", "backfill-scheduler", "consumer group")
	plans := flag.String("plans", "tracecast.plans", "topic of the plans")
	decisions := flag.String("decisions", "tracecast.decisions", "topic the decisions go to")
	from := flag.String("from", "", "read the plans from this JSON lines file (- for standard input) instead of Kafka; decisions to standard output")
	runs := flag.Int("runs", 0, "stop once this many runs have ended (0: never)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if *from != "" {
		err = fromFile(*from, os.Stdout)
	} else {
		err = fromKafka(ctx, strings.Split(*brokers, ","), *group, *plans, *decisions, *runs)
	}
	if err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}

// fromFile follows the plans of a file and writes the decisions as JSON
// lines.
func fromFile(path string, out io.Writer) error {
	in := os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	fl := newFollower(func(d decision) { _ = enc.Encode(d) })
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var p plan
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if err := fl.apply(p); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return w.Flush()
}

// fromKafka follows the plans topic as a consumer group and publishes the
// decisions, committing a plan once the decisions it led to are written.
func fromKafka(ctx context.Context, brokers []string, group, plans, decisions string, runs int) error {
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, GroupID: group, Topic: plans, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: decisions, Balancer: &kafka.Hash{}, BatchTimeout: 5 * time.Millisecond, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	var out []kafka.Message
	fl := newFollower(func(d decision) {
		v, _ := json.Marshal(struct {
			Schema string `json:"schema"`
			decision
		}{"tracecast.decision/1", d})
		out = append(out, kafka.Message{Key: []byte(d.Run), Value: v})
	})
	seen := map[string]bool{} // plan ids of the runs not ended yet
	ended := 0
	for runs == 0 || ended < runs {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			log.Printf("fetch: %v (retrying)", err) // broker restarts are transient
			continue
		}
		var p plan
		if err := json.Unmarshal(m.Value, &p); err != nil || p.Schema != "tracecast.plan/1" {
			log.Printf("offset %d: not a plan, skipped", m.Offset)
		} else if !seen[p.ID] {
			seen[p.ID] = true
			if err := fl.apply(p); err != nil {
				return err
			}
			if p.Event == "end" {
				ended++
				for id := range seen { // the run is over: its ids cannot come back but as duplicates of the end
					if strings.HasPrefix(id, p.Run+"/") && id != p.ID {
						delete(seen, id)
					}
				}
			}
		}
		for len(out) > 0 {
			err := w.WriteMessages(ctx, out...)
			if err == nil {
				out = out[:0]
				break
			}
			if ctx.Err() != nil {
				return nil
			}
			log.Printf("publish: %v (retrying)", err)
			time.Sleep(time.Second)
		}
		// Commit after acting: a crash before this line re-delivers the
		// plan; its id makes the second delivery harmless.
		if err := r.CommitMessages(ctx, m); err != nil && !errors.Is(err, context.Canceled) {
			log.Printf("commit: %v", err)
		}
	}
	return nil
}
