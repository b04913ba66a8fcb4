package live

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/internal/kafkaname"
	kafkasink "github.com/tracecast/tracecast/sinks/kafka"
)

// SubscribeOptions say what Subscribe reads and keeps.
type SubscribeOptions struct {
	Brokers []string
	// TLS (nil: plaintext) and SASL (nil: none) secure the connections.
	TLS   *tls.Config
	SASL  sasl.Mechanism
	Topic string `flag:"topic" help:"topic to read"`
	// Group, when set, joins that consumer group and commits each message
	// once its records are handled (members share the partitions);
	// without it every partition is read from the start.
	Group string `flag:"group" help:"consumer group (commits what was printed); empty: read every partition from the start"`
	// FromStart starts a group without committed offsets at the oldest
	// message (else at the newest).
	FromStart bool `flag:"from-start" help:"with --group, start at the oldest message when the group has no committed offset"`
	// Query and Kind keep only the records of one query (idle>=25%, case
	// insensitive) and the alerts of one kind.
	Query string `flag:"query" help:"keep only the records of this query (idle>=25%)"`
	Kind  string `flag:"kind" help:"keep only alerts of this kind (idle-opportunity, regime-change)"`
	// Limit stops after this many records (0: none); the records of the
	// message that reaches it are all handled.
	Limit int `flag:"limit" help:"stop after this many records (0: no limit)"`
	// IdleExit stops when no message came for this long (0: never).
	IdleExit time.Duration `flag:"idle-exit" help:"stop when no message came for this long (0: wait forever)"`
	// Logger receives retried fetch errors and undecodable messages.
	Logger zerolog.Logger
}

// Subscribe reads the topic until ctx ends, the limit is reached or the
// topic stays silent for IdleExit, and calls handle with the records of
// each message that pass the filters (JSON objects, see Records). An error
// from handle stops it, as does a broker that refuses the connection (wrong
// password, untrusted certificate).
func Subscribe(ctx context.Context, o SubscribeOptions, handle func(records [][]byte) error) error {
	if len(o.Brokers) == 0 {
		return &OptionError{Option: "brokers", Err: errors.New("at least one")}
	}
	if err := kafkaname.Topic(o.Topic); err != nil {
		return &OptionError{Option: "topic", Err: err}
	}
	client := kafkaconn.Client{TLS: o.TLS, SASL: o.SASL}
	if err := client.Check(ctx, o.Brokers); err != nil {
		return err
	}
	if why := client.MissingTopic(ctx, o.Brokers, o.Topic); why != "" {
		if o.Group == "" {
			return errors.New(why)
		}
		o.Logger.Warn().Str("topic", o.Topic).Msg(why + ": nothing to read until then; waiting")
	}
	cfg := kafkago.ReaderConfig{Brokers: o.Brokers, Topic: o.Topic, GroupID: o.Group, MaxWait: 250 * time.Millisecond, Dialer: client.Dialer()}
	if o.FromStart || o.Group == "" {
		cfg.StartOffset = kafkago.FirstOffset
	}
	n := 0
	take := func(m kafkago.Message) error {
		recs := o.keep(m)
		n += len(recs)
		return handle(recs)
	}
	done := func() bool { return o.Limit > 0 && n >= o.Limit }
	fails := &fetchFails{log: o.Logger, topic: o.Topic, brokers: o.Brokers}
	if o.Group == "" {
		return subscribeAll(ctx, cfg, o.IdleExit, take, done, fails)
	}
	r := kafkago.NewReader(cfg)
	defer r.Close()
	for !done() {
		fctx, cancel := withIdle(ctx, o.IdleExit)
		m, err := r.FetchMessage(fctx)
		cancel()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				return nil
			}
			if !fails.failed(ctx, -1, err) {
				return nil
			}
			continue
		}
		fails.over(-1)
		if err := take(m); err != nil {
			return err
		}
		// Commit what was printed even when a stop came meanwhile.
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err = r.CommitMessages(cctx, m)
		ccancel()
		if err != nil {
			return err
		}
	}
	return nil
}

func withIdle(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// subscribeAll reads every partition from the start, without a group,
// until done.
func subscribeAll(ctx context.Context, cfg kafkago.ReaderConfig, idle time.Duration, take func(kafkago.Message) error, done func() bool, fails *fetchFails) error {
	conn, err := cfg.Dialer.DialContext(ctx, "tcp", cfg.Brokers[0])
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
	var readers sync.WaitGroup
	defer readers.Wait() // after cancel (deferred last, runs first)
	defer cancel()
	for _, p := range parts {
		c := cfg
		c.Partition = p.ID
		r := kafkago.NewReader(c)
		readers.Go(func() {
			defer r.Close()
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					if ctx.Err() != nil || !fails.failed(ctx, c.Partition, err) {
						return
					}
					continue
				}
				fails.over(c.Partition)
				select {
				case msgs <- m:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	for !done() {
		var timeout <-chan time.Time
		if idle > 0 {
			timeout = time.After(idle)
		}
		select {
		case m := <-msgs:
			if err := take(m); err != nil {
				return err
			}
		case <-timeout:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// fetchFails reports a subscriber's failed fetches — a broker restarting,
// say — once, then once per 30 s with the count (kafkaconn.Repeats), and
// when fetching works again; a failure is retried after 500 ms. (A
// group's failed fetch was warned about at every retry, and a partition
// reader's retried at once, silently, in a loop.)
type fetchFails struct {
	log     zerolog.Logger
	topic   string
	brokers []string
	r       kafkaconn.Repeats
}

// failed books a failed fetch (partition -1: the group's) and waits
// before the retry; false when ctx ended meanwhile.
func (f *fetchFails) failed(ctx context.Context, partition int, err error) bool {
	if warn, n := f.r.Note(); warn {
		f.log.Warn().Err(err).Str("topic", f.topic).Int("partition", partition).Strs("brokers", f.brokers).Int("failed_attempts", n).
			Msg("subscribe: fetching failed (the brokers are down or restarting?): retrying; warning every 30s while it lasts")
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(500 * time.Millisecond):
		return true
	}
}

// over logs that fetching works again after failures.
func (f *fetchFails) over(partition int) {
	if n, lasted := f.r.Over(); n > 0 {
		f.log.Info().Str("topic", f.topic).Int("partition", partition).Int("failed_attempts", n).Dur("after", lasted.Round(time.Millisecond)).
			Msg("subscribe: fetching again")
	}
}

// keep returns the records of m that pass the filters; an undecodable
// Arrow message is logged and skipped.
func (o SubscribeOptions) keep(m kafkago.Message) [][]byte {
	recs, err := Records(m)
	if err != nil {
		o.Logger.Warn().Err(err).Int64("offset", m.Offset).Msg("undecodable Arrow message: skipped")
		return nil
	}
	kept := recs[:0]
	for _, r := range recs {
		if Match(r, o.Query, o.Kind) {
			kept = append(kept, r)
		}
	}
	return kept
}

// Records returns the records a message of the kafka sink carries, each a
// JSON object with "schema" (tracecast.prediction/1, ...): the message's
// value for a JSON message; for an Arrow message (format arrow: header
// content-type application/vnd.apache.arrow.stream) one object per row,
// "schema" first, from the message's schema header.
func Records(m kafkago.Message) ([][]byte, error) {
	var schema, ctype string
	for _, h := range m.Headers {
		switch h.Key {
		case "schema":
			schema = string(h.Value)
		case "content-type":
			ctype = string(h.Value)
		}
	}
	if ctype != kafkasink.ArrowContentType {
		return [][]byte{m.Value}, nil
	}
	r, err := ipc.NewReader(bytes.NewReader(m.Value))
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

// Match reports whether a JSON record passes the filters: its query is
// query (case-insensitive) and its kind is kind, each when not empty. A
// record that is not JSON passes only without filters.
func Match(rec []byte, query, kind string) bool {
	if query == "" && kind == "" {
		return true
	}
	var m struct{ Query, Kind string }
	if json.Unmarshal(rec, &m) != nil {
		return false
	}
	return (query == "" || strings.EqualFold(m.Query, query)) && (kind == "" || m.Kind == kind)
}

// SubscribeLines is Subscribe writing every record to w as a line, flushed
// after each batch: what the subscribe command prints.
func SubscribeLines(ctx context.Context, o SubscribeOptions, w io.Writer) error {
	out := bufio.NewWriter(w)
	defer out.Flush()
	return Subscribe(ctx, o, func(recs [][]byte) error {
		for _, r := range recs {
			out.Write(r)
			out.WriteByte('\n')
		}
		return out.Flush()
	})
}
