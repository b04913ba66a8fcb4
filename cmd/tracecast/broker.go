package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/live"
)

func newBrokerCmd() *cobra.Command {
	var o live.BrokerOptions
	var metricsAddr string
	cmd := &cobra.Command{
		Use:   "broker [--addr 127.0.0.1:9092] [--data-dir DIR] [--topics NAME[:PARTITIONS],...]",
		Short: "Run a Kafka-protocol broker for development, tests, CI and the demo",
		Long: `broker runs franz-go's kfake, a Kafka-protocol broker written in Go, as a
process: no Java, no Docker. It listens on loopback only. With --data-dir it
persists topics, messages and consumer-group offsets, so it can be stopped and
restarted mid-stream. Topics listed with --topics exist from the start (kfake
does not create topics on first use). It prints "READY ADDR" on standard
output when it accepts connections and stops on SIGINT/SIGTERM.

It is a faithful fake for tests and demos, not a production Kafka.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := startMetrics(metricsAddr)
			if err != nil {
				return err
			}
			defer m.Stop()
			c, err := live.StartBroker(o)
			if err != nil {
				return optionErr(err)
			}
			defer c.Close()
			m.SetReady(true)
			fmt.Printf("READY %s\n", strings.Join(c.ListenAddrs(), ","))
			log.Info().Strs("addrs", c.ListenAddrs()).Str("data_dir", o.DataDir).Msg("broker ready")
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			select {
			case s := <-sig:
				log.Info().Str("signal", s.String()).Msg("broker stopping")
			case <-cmd.Context().Done():
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:9092", "listen address (loopback only)")
	f.StringVar(&metricsAddr, "metrics-addr", "", metricsHelp)
	f.StringVar(&o.DataDir, "data-dir", "", "persist topics, messages and offsets in DIR (survives restarts)")
	f.StringSliceVar(&o.Topics, "topics", nil, "topics to create at start: NAME or NAME:PARTITIONS, comma-separated or repeated")
	f.Int32Var(&o.Partitions, "partitions", 4, "default number of partitions")
	f.DurationVar(&o.MinSessionTimeout, "min-session-timeout", time.Second, "shortest consumer-group session timeout accepted (Kafka's default is 6s; shorter lets tests and demos notice a dead member sooner)")
	return cmd
}

// optionErr makes a bad option of package live a usage error naming its
// flag: --addr "x": reason.
func optionErr(err error) error {
	var oe *live.OptionError
	if errors.As(err, &oe) {
		return usageErr(fmt.Errorf("--%w", oe))
	}
	return err
}
