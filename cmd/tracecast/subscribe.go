package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/spf13/cobra"
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
				if keep(m.Value, query, kind) {
					out.Write(append(m.Value, '\n'))
					out.Flush()
					n++
				}
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
			if keep(m.Value, query, kind) {
				out.Write(append(m.Value, '\n'))
				out.Flush()
				n++
			}
		case <-timeout:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}
