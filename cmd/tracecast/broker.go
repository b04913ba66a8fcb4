package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"
)

func newBrokerCmd() *cobra.Command {
	var addr, dataDir string
	var topics []string
	var partitions int32
	var minSession time.Duration
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
			c, err := startBroker(addr, dataDir, topics, partitions, minSession)
			if err != nil {
				return err
			}
			defer c.Close()
			fmt.Printf("READY %s\n", strings.Join(c.ListenAddrs(), ","))
			log.Info().Strs("addrs", c.ListenAddrs()).Str("data_dir", dataDir).Msg("broker ready")
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
	f.StringVar(&addr, "addr", "127.0.0.1:9092", "listen address (loopback only)")
	f.StringVar(&dataDir, "data-dir", "", "persist topics, messages and offsets in DIR (survives restarts)")
	f.StringSliceVar(&topics, "topics", nil, "topics to create at start: NAME or NAME:PARTITIONS, comma-separated or repeated")
	f.Int32Var(&partitions, "partitions", 4, "default number of partitions")
	f.DurationVar(&minSession, "min-session-timeout", time.Second, "shortest consumer-group session timeout accepted (Kafka's default is 6s; shorter lets tests and demos notice a dead member sooner)")
	return cmd
}

// startBroker starts an in-process kfake cluster on a loopback address, with
// the topics (NAME or NAME:PARTITIONS, comma-separated) created.
func startBroker(addr, dataDir string, topics []string, partitions int32, minSession time.Duration) (*kfake.Cluster, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usageErr(fmt.Errorf("--addr %q: %w", addr, err))
	}
	if host != "127.0.0.1" && host != "localhost" && host != "" {
		return nil, usageErr(fmt.Errorf("--addr %q: the broker listens on loopback only (127.0.0.1)", addr))
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, usageErr(fmt.Errorf("--addr %q: bad port", addr))
	}
	opts := []kfake.Opt{kfake.Ports(port), kfake.DefaultNumPartitions(int(partitions)), kfake.GroupMinSessionTimeout(minSession)}
	if dataDir != "" {
		opts = append(opts, kfake.DataDir(dataDir))
	}
	for _, t := range topics {
		for _, one := range strings.Split(t, ",") {
			name, parts, _ := strings.Cut(strings.TrimSpace(one), ":")
			n := partitions
			if parts != "" {
				v, err := strconv.Atoi(parts)
				if err != nil || v <= 0 {
					return nil, usageErr(fmt.Errorf("--topics %q: bad partition count", one))
				}
				n = int32(v)
			}
			if name != "" {
				opts = append(opts, kfake.SeedTopics(n, name))
			}
		}
	}
	return kfake.NewCluster(opts...)
}
