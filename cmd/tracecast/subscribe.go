package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/spf13/cobra"
	kafkasink "github.com/tracecast/tracecast/sinks/kafka"
)

func newSubscribeCmd() *cobra.Command {
	var brokers []string
	var topic, group, query, kind string
	var fromStart bool
	var limit int
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "subscribe [--topic tracecast.predictions] [--query Q] [--brokers ADDR]",
		Short: "Show what a scheduler receives: predictions, verdicts and alerts from Kafka",
		Long: `subscribe reads tracecast's records from a Kafka topic and prints them as JSON
lines: what a scheduler subscribed to idle-likelihood predictions receives.
Each message is a JSON object with "schema" (tracecast.prediction/1,
tracecast.verdict/1, tracecast.alert/1, ...) and "id" (deterministic: the same
prediction delivered twice has the same id; de-duplicate on it). Messages are
keyed by trace id, so one trace's records arrive in order.

--query keeps the records of one query (idle>=25%); --kind keeps one alert
kind. With --group the subscriber joins a consumer group and commits what it
printed (several subscribers share the partitions); without it, it reads every
partition. examples/scheduler is the same loop as a Go program to start
from.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := kafkago.ReaderConfig{Brokers: brokers, Topic: topic, GroupID: group, MaxWait: 250 * time.Millisecond}
			if fromStart || group == "" {
				cfg.StartOffset = kafkago.FirstOffset
			}
			if group == "" {
				return subscribeAll(cmd.Context(), cfg, query, kind, limit, idle)
			}
			r := kafkago.NewReader(cfg)
			defer r.Close()
			out := bufio.NewWriter(os.Stdout)
			defer out.Flush()
			n := 0
			for limit == 0 || n < limit {
				ctx, cancel := deadline(cmd.Context(), idle)
				m, err := r.FetchMessage(ctx)
				cancel()
				if err != nil {
					if errors.Is(err, context.DeadlineExceeded) || cmd.Context().Err() != nil {
						return nil
					}
					log.Warn().Err(err).Msg("fetch (retrying)")
					continue
				}
				n += printRecords(out, m, query, kind)
				if err := r.CommitMessages(cmd.Context(), m); err != nil {
					return err
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&brokers, "brokers", []string{"127.0.0.1:9092"}, "Kafka brokers")
	f.StringVar(&topic, "topic", "tracecast.predictions", "topic to read")
	f.StringVar(&group, "group", "", "consumer group (commits what was printed); empty: read every partition from the start")
	f.BoolVar(&fromStart, "from-start", false, "with --group, start at the oldest message when the group has no committed offset")
	f.StringVar(&query, "query", "", "keep only the records of this query (idle>=25%)")
	f.StringVar(&kind, "kind", "", "keep only alerts of this kind (idle-opportunity, regime-change)")
	f.IntVar(&limit, "limit", 0, "stop after this many records (0: no limit)")
	f.DurationVar(&idle, "idle-exit", 0, "stop when no message came for this long (0: wait forever)")
	return cmd
}

func deadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// printRecords writes the records of a message that pass the filters as
// JSON lines and returns how many. An Arrow message (kafka sink format
// arrow) holds a batch of records: each row is printed with its schema.
func printRecords(out *bufio.Writer, m kafkago.Message, query, kind string) int {
	recs := [][]byte{m.Value}
	var schema, ctype string
	for _, h := range m.Headers {
		switch h.Key {
		case "schema":
			schema = string(h.Value)
		case "content-type":
			ctype = string(h.Value)
		}
	}
	if ctype == kafkasink.ArrowContentType {
		var err error
		if recs, err = arrowRows(m.Value, schema); err != nil {
			log.Warn().Err(err).Int64("offset", m.Offset).Msg("undecodable Arrow message: skipped")
			return 0
		}
	}
	n := 0
	for _, r := range recs {
		if keep(r, query, kind) {
			out.Write(append(r, '\n'))
			n++
		}
	}
	out.Flush()
	return n
}

// arrowRows decodes an Arrow IPC stream into one JSON object per row, with
// "schema" first as in JSON messages.
func arrowRows(value []byte, schema string) ([][]byte, error) {
	r, err := ipc.NewReader(bytes.NewReader(value))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	var buf bytes.Buffer
	for r.Next() {
		if err := array.RecordToJSON(r.Record(), &buf); err != nil {
			return nil, err
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	prefix, _ := json.Marshal(schema)
	var rows [][]byte
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if len(line) < 2 || line[0] != '{' {
			continue
		}
		row := append([]byte(`{"schema":`), prefix...)
		if len(line) > 2 {
			row = append(row, ',')
		}
		rows = append(rows, append(row, line[1:]...))
	}
	return rows, nil
}

func keep(value []byte, query, kind string) bool {
	if query == "" && kind == "" {
		return true
	}
	var m struct{ Query, Kind string }
	if json.Unmarshal(value, &m) != nil {
		return false
	}
	return (query == "" || strings.EqualFold(m.Query, query)) && (kind == "" || m.Kind == kind)
}

// subscribeAll reads every partition from the start, without a group.
func subscribeAll(ctx context.Context, cfg kafkago.ReaderConfig, query, kind string, limit int, idle time.Duration) error {
	conn, err := kafkago.DialContext(ctx, "tcp", cfg.Brokers[0])
	if err != nil {
		return err
	}
	parts, err := conn.ReadPartitions(cfg.Topic)
	conn.Close()
	if err != nil {
		return fmt.Errorf("topic %s: %w", cfg.Topic, err)
	}
	msgs := make(chan kafkago.Message)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, p := range parts {
		c := cfg
		c.Partition = p.ID
		r := kafkago.NewReader(c)
		go func() {
			defer r.Close()
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					continue
				}
				select {
				case msgs <- m:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	n := 0
	for limit == 0 || n < limit {
		var timeout <-chan time.Time
		if idle > 0 {
			timeout = time.After(idle)
		}
		select {
		case m := <-msgs:
			n += printRecords(out, m, query, kind)
		case <-timeout:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}
