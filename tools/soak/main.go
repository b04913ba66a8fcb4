//go:build linux

// Command soak runs tracecast's live service for a long time under a
// stream of short runs and scheduled faults, and says whether it leaks or
// loses anything (make soak; docs/live.md, "Soak").
//
// It starts, as an operator would, `tracecast broker --data-dir` on a
// tmpfs of its own and `tracecast run live-kafka --metrics-addr`, warms
// the service up with one run of each trace, then for -duration publishes
// runs in a loop (-streams `tracecast publish` at once, each run under a
// new run id: three short synthetic StarPU runs in turn and the real
// StarPU trace one run in ten, so that different traces interleave on
// the topic), restarts the broker and fills its disk in turn every
// -fault-every for -fault-length, and samples every -interval the
// service's resident set, goroutines, open descriptors, consumer lag and
// records out. It reads the output topics all along and compares every
// run's predictions, verdicts and forecasts with the offline replay of
// its trace under the run's id. It writes OUT/soak.csv, OUT/soak.svg and
// OUT/summary.txt and exits 1 unless every criterion holds:
//
//   - the last third's mean resident set, goroutines and open descriptors
//     at most the first third's + 10 %;
//   - every run's records those of the offline replay: none missing, none
//     changed, none unexpected (duplicates equal to the first);
//   - after each fault, the service has read every message on the input
//     topic within 10 s (its positions, tracecast_kafka_consumer_offset,
//     against the topic's high watermarks read just before);
//   - the service ran throughout, one process.
//
// Filling the broker's disk needs root (a tmpfs mount); without it the
// full-disk faults are broker restarts and the summary says so.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.binary, "binary", "bin/tracecast", "the tracecast binary (make build)")
	flag.StringVar(&cfg.out, "out", "out/soak", "directory of soak.csv, soak.svg and summary.txt")
	flag.StringVar(&cfg.dir, "dir", "", "work directory: logs, traces, the broker's data (default: a new temporary directory, removed unless the soak fails)")
	flag.DurationVar(&cfg.duration, "duration", 30*time.Minute, "how long the runs stream in, after the warm-up")
	flag.DurationVar(&cfg.interval, "interval", 0, "sampling period (default: 10 s, or a 30th of the duration if shorter)")
	flag.DurationVar(&cfg.faultEvery, "fault-every", 0, "a fault every this long, broker restart and full disk in turn (default: 3 min, or a quarter of the duration if shorter)")
	flag.DurationVar(&cfg.faultLength, "fault-length", 0, "how long each fault lasts (default: 10 s, or a twelfth of the duration if shorter)")
	flag.IntVar(&cfg.streams, "streams", 4, "runs published at once")
	flag.DurationVar(&cfg.gap, "gap", 500*time.Millisecond, "pause between a stream's runs")
	flag.StringVar(&cfg.speed, "speed", "realtime", "publish --speed of the runs")
	flag.StringVar(&cfg.realTrace, "real-trace", "pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "a real StarPU trace published one run in -real-every (empty: none)")
	flag.IntVar(&cfg.realEvery, "real-every", 10, "one run in this many is the real trace")
	flag.Parse()
	cfg.log = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly}).With().Timestamp().Logger()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(soakMain(ctx, cfg))
}

func soakMain(ctx context.Context, cfg config) int {
	keep := cfg.dir != ""
	if !keep {
		d, err := os.MkdirTemp("", "tracecast-soak-")
		if err != nil {
			cfg.log.Error().Err(err).Msg("soak")
			return 1
		}
		cfg.dir = d
	}
	if abs, err := filepath.Abs(cfg.binary); err == nil {
		cfg.binary = abs
	}
	res, err := run(ctx, cfg)
	if err != nil {
		cfg.log.Error().Err(err).Str("dir", cfg.dir).Msg("soak: could not run")
		return 1
	}
	sum := res.summary()
	fmt.Print(sum)
	if err := os.WriteFile(filepath.Join(cfg.out, "summary.txt"), []byte(sum), 0o644); err != nil {
		cfg.log.Error().Err(err).Msg("soak")
	}
	if !res.passed() {
		cfg.log.Error().Str("logs", cfg.dir).Msg("soak failed: the logs are kept")
		return 1
	}
	if !keep {
		os.RemoveAll(cfg.dir)
	}
	return 0
}
