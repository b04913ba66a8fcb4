package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/tracecast/tracecast/pipelines"
)

// ServeOptions configure Serve: the live setup in one process.
type ServeOptions struct {
	// Kafka are the brokers, TLS and SASL (the --brokers flags); without
	// brokers Serve starts one on Addr, persisting to DataDir.
	Kafka   *Kafka
	Addr    string `flag:"addr" help:"where the broker listens (loopback only)"`
	DataDir string `flag:"data-dir" help:"persist the broker's topics and offsets in DIR"`
	// Trace, when set, is the file a live-tail pipeline follows.
	Trace string `flag:"trace" help:"follow this trace file (live-tail) instead of reading traces from Kafka"`
	// Demo publishes the trace built into the binary to tracecast.traces,
	// paced by Speed.
	Demo   bool   `flag:"demo" help:"publish the built-in StarPU trace to tracecast.traces, paced by --speed"`
	Speed  string `flag:"speed" help:"pace of the --demo run: realtime, Nx or max"`
	Logger zerolog.Logger
	// Ready gets "READY broker ADDR" once a started broker listens.
	Ready io.Writer
	// Metrics, when set, gets the started broker's metrics (the pipeline's
	// endpoint then serves both).
	Metrics prometheus.Registerer
}

// Serve runs a live pipeline (live-kafka or live-tail, loaded by the
// caller) with run, after pointing it at its brokers and trace, starting a
// broker when none is given and, with Demo, publishing the demo run.
func Serve(ctx context.Context, cfg *pipelines.Config, o ServeOptions, run func(context.Context, *pipelines.Config) error) error {
	if o.Demo && o.Trace != "" {
		return &OptionError{Option: "demo", Err: errors.New("cannot be used with --trace: --demo replays the built-in trace through Kafka, --trace follows a file")}
	}
	if err := o.Kafka.Resolve(); err != nil {
		return err
	}
	if len(o.Kafka.Brokers) == 0 {
		if o.Kafka.Secure() {
			return &OptionError{Option: "tls", Err: errors.New("needs --brokers (as --sasl-* do): the broker live starts has neither TLS nor SASL")}
		}
		c, stop, err := startBroker(BrokerOptions{Addr: o.Addr, DataDir: o.DataDir, Topics: []string{Topics}, Partitions: 4, MinSessionTimeout: time.Second,
			Logger: o.Logger, Metrics: o.Metrics})
		if err != nil {
			return err
		}
		defer stop()
		o.Kafka.Brokers = c.ListenAddrs()
		fmt.Fprintf(o.Ready, "READY broker %s\n", strings.Join(o.Kafka.Brokers, ","))
	}
	for _, c := range cfg.Components() {
		if c.Type == "tail" {
			c.SetOption("path", o.Trace)
		}
	}
	if err := o.Kafka.Apply(cfg); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Demo {
		p := PublishOptions{Topic: "tracecast.traces", Speed: o.Speed, Logger: o.Logger}
		var err error
		if p.Brokers, p.TLS, p.SASL, err = o.Kafka.Connect(); err != nil {
			return err
		}
		go func() {
			if err := PublishDemo(ctx, p); err != nil && ctx.Err() == nil {
				o.Logger.Error().Err(err).Msg("publishing the demo run")
			}
		}()
	}
	return run(ctx, cfg)
}

// ServeBroker runs a broker until SIGINT or SIGTERM (or ctx's end),
// telling ready its addresses once it accepts connections.
func ServeBroker(ctx context.Context, o BrokerOptions, log zerolog.Logger, ready func(addrs []string)) error {
	o.Logger = log
	c, closeBroker, err := startBroker(o)
	if err != nil {
		return err
	}
	defer closeBroker()
	ready(c.ListenAddrs())
	log.Info().Strs("addrs", c.ListenAddrs()).Str("data_dir", o.DataDir).Msg("broker ready")
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	log.Info().Msg("broker stopping")
	return nil
}

// startBroker starts a broker with o, its collector registered on
// o.Metrics when set; stop unregisters it and closes the broker.
func startBroker(o BrokerOptions) (c *kfake.Cluster, stop func(), err error) {
	if c, err = StartBroker(o); err != nil {
		return nil, nil, err
	}
	if o.Metrics == nil {
		return c, c.Close, nil
	}
	col := NewBrokerCollector(c)
	if err := o.Metrics.Register(col); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, func() { o.Metrics.Unregister(col); c.Close() }, nil
}
