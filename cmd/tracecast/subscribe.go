package main

import (
	"bufio"
	"os"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/live"
)

func newSubscribeCmd() *cobra.Command {
	var o live.SubscribeOptions
	var kafka *live.Kafka
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
			out := bufio.NewWriter(os.Stdout)
			defer out.Flush()
			o.Logger = log
			var err error
			if o.Brokers, o.TLS, o.SASL, err = kafka.Connect(); err != nil {
				return optionErr(err)
			}
			return live.Subscribe(cmd.Context(), o, func(recs [][]byte) error {
				for _, r := range recs {
					out.Write(r)
					out.WriteByte('\n')
				}
				return out.Flush()
			})
		},
	}
	f := cmd.Flags()
	kafka = live.AddKafkaFlags(f, "Kafka brokers", "127.0.0.1:9092")
	f.StringVar(&o.Topic, "topic", "tracecast.predictions", "topic to read")
	f.StringVar(&o.Group, "group", "", "consumer group (commits what was printed); empty: read every partition from the start")
	f.BoolVar(&o.FromStart, "from-start", false, "with --group, start at the oldest message when the group has no committed offset")
	f.StringVar(&o.Query, "query", "", "keep only the records of this query (idle>=25%)")
	f.StringVar(&o.Kind, "kind", "", "keep only alerts of this kind (idle-opportunity, regime-change)")
	f.IntVar(&o.Limit, "limit", 0, "stop after this many records (0: no limit)")
	f.DurationVar(&o.IdleExit, "idle-exit", 0, "stop when no message came for this long (0: wait forever)")
	return cmd
}
