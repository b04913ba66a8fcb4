// Package kafka reads raw trace lines from a Kafka topic with a consumer
// group, at least once: offsets are committed only when everything derived
// from the lines before them is durable in the pipeline's sinks.
//
// # Messages
//
// Key: the trace id. All of a trace's messages share it, so they stay in one
// partition, in order; a partition interleaves many traces.
//
// Value: one or more complete trace lines separated by '\n' (a trailing
// newline is optional). `tracecast publish` sends the header first, then
// chunks of lines, then an end marker.
//
// Headers:
//   - tracecast-seq: the 0-based index of the message's first line in its
//     trace. "0" starts a trace. Lines numbered below the lines already read
//     are repeats (a producer's retry after a write it could not confirm):
//     they are dropped and counted. A number above them means lines were
//     lost: the trace is dropped (tracecast.StreamDrop, logged, counted), so
//     that its records are missing rather than wrong, and its later messages
//     are skipped until it starts again. Without it, a message whose first line begins
//     with '%' starts a trace when the trace is unknown or already had event
//     lines (a producer that knows nothing of tracecast, e.g. kcat sending a
//     file line by line).
//   - tracecast-end: "1" on the (empty) end-of-trace marker. The stages then
//     flush the trace's final windows and verdicts.
//
// # Commits and rebuilds
//
// A trace's results depend on all its lines since its header (open states,
// the current window), so the source never commits past the first message
// of a trace that has not ended: the committed offset of a partition is the
// smallest of its next offset and the first offsets of its open traces, as
// of a checkpoint barrier (tracecast.Barrier) that every sink has released.
// A member that gets the partition after a rebalance, a crash or a restart
// starts there, finds the header of every unfinished trace and rebuilds its
// windows from it. The outputs it emits again carry the same deterministic
// ids, so subscribers de-duplicate them. Messages of a trace whose start
// lies before the start position belong to a trace that had ended and
// whose results were committed: they are skipped (and counted).
//
// On every new group generation, the state of the traces left unfinished
// is dropped (a tracecast.StreamReset for each) and each assigned partition
// is read again from its committed offset.
package kafka

import (
	"bytes"
	"container/list"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tracecast/tracecast/pipelines/component"

	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/internal/kafkaname"

	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"github.com/tracecast/tracecast"
)

// Message headers of the trace-line topic.
const (
	HeaderSeq = "tracecast-seq"
	HeaderEnd = "tracecast-end"
)

// Options configure a Source.
type Options struct {
	Brokers []string
	Topic   string
	// Group is the consumer group; members share the topic's partitions.
	Group string
	// Start is where a partition without a committed offset starts:
	// "earliest" (default) or "latest".
	Start string
	// CommitInterval is how often a checkpoint barrier is sent (default 1 s).
	CommitInterval time.Duration
	// MaxWait bounds a fetch's long poll (default 250 ms). The broker
	// answers as soon as data arrives, so it does not add latency; it bounds
	// how long a stop waits. (Below ~50 ms kafka-go gives up on replies
	// that are merely late and reconnects: latency spikes.)
	MaxWait time.Duration
	// SessionTimeout: a member silent that long leaves the group (default 6 s,
	// the broker's usual minimum). HeartbeatInterval defaults to a third of it.
	SessionTimeout    time.Duration
	HeartbeatInterval time.Duration
	// BatchLines bounds the lines of one emitted batch (default 4096).
	BatchLines int
	// StopCommitTimeout is how long a graceful stop waits for its last
	// barrier to be released before leaving the group (default 5 s).
	StopCommitTimeout time.Duration
	// TraceTimeout ends a trace that sent nothing for that long (wall
	// clock) as if its end marker had come: a run that died without one
	// would otherwise hold its partition's commits back forever, and every
	// restart would read the partition again from its start. The end is
	// marked (StreamEnd.Reason tracecast.EndTimeout), logged and counted
	// (Stats.TimedOut). Later messages of that trace are skipped. 0 waits
	// forever (the kafka component defaults to DefaultTraceTimeout).
	TraceTimeout time.Duration
	// MaxOpenTraces bounds the traces open at once (begun, not ended):
	// one more evicts the least recently active, for good, as a stage
	// evicts beyond its max_streams — dropped downstream (its records
	// missing, never changed), its later messages skipped, counted
	// (Stats.Evicted) — and its partition's commits go on past it.
	// TraceTimeout ends dead runs too, but with TraceTimeout 0 this is the
	// only bound on a service that sees runs die without their end marker
	// for days. Default DefaultMaxOpenTraces.
	MaxOpenTraces int
	// TLS (nil: plaintext) and SASL (nil: none) secure the connections to
	// the brokers (see internal/kafkaconn for building them from options).
	TLS    *tls.Config
	SASL   sasl.Mechanism
	Logger zerolog.Logger
}

func (o *Options) client() kafkaconn.Client {
	return kafkaconn.Client{TLS: o.TLS, SASL: o.SASL}
}

func (o *Options) defaults() error {
	if len(o.Brokers) == 0 || o.Topic == "" || o.Group == "" {
		return errors.New("kafka source: brokers, topic and group are required")
	}
	if err := kafkaname.Topic(o.Topic); err != nil {
		return fmt.Errorf("kafka source: %w", err)
	}
	switch o.Start {
	case "":
		o.Start = "earliest"
	case "earliest", "latest":
	default:
		return fmt.Errorf("kafka source: start %q is not earliest or latest", o.Start)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.CommitInterval, time.Second)
	def(&o.MaxWait, 250*time.Millisecond)
	def(&o.SessionTimeout, 6*time.Second)
	def(&o.HeartbeatInterval, o.SessionTimeout/3)
	def(&o.StopCommitTimeout, 5*time.Second)
	if o.BatchLines <= 0 {
		o.BatchLines = 4096
	}
	if o.MaxOpenTraces <= 0 {
		o.MaxOpenTraces = DefaultMaxOpenTraces
	}
	return nil
}

// DefaultMaxOpenTraces is Options.MaxOpenTraces's default: 16 times the
// stages' max_streams (4096), so that the stages, which hold far more per
// trace, evict first; an open trace costs the source about 200 bytes.
const DefaultMaxOpenTraces = 65536

// Stats counts what a Source consumed.
type Stats struct {
	Messages, Lines, Bytes int64
	// Skipped counts messages of traces that started before the start
	// position (already committed) and messages without a key.
	Skipped int64
	// Commits counts successful offset commits; Generations the group
	// generations joined.
	Commits, Generations int64
	// TimedOut counts the traces ended by TraceTimeout (no end marker).
	TimedOut int64
	// Repeated counts the lines read again (a producer's retry), dropped
	// by their tracecast-seq; LinesLost the traces dropped because lines
	// were missing before a message.
	Repeated, LinesLost int64
	// Evicted counts the traces dropped for room (MaxOpenTraces).
	Evicted int64
}

// Source is a tracecast.Source reading trace lines from a topic.
type Source struct {
	o                                              Options
	messages, lines, bytes, skipped, commits, gens atomic.Int64
	timedOut, repeated, linesLost, evicted         atomic.Int64

	// open lists the traces the last generation left unfinished.
	open []string
	// joinFails and fetchFails collapse the warnings of a broker outage:
	// the group's join retried every 500 ms, each partition's fetch too.
	joinFails, fetchFails kafkaconn.Repeats
	// evictWarned is when evictions were last warned about, at which
	// count (evictWarnedAt); used by the Run goroutine only.
	evictWarned   time.Time
	evictWarnedAt int64

	// acked is the newest released checkpoint, for the Run loop to commit.
	mu      sync.Mutex
	acked   *checkpoint
	ackedCh chan struct{}

	// parts are the positions of the partitions of the current
	// generation, for the consumer lag computed when scraped (LiveMetrics);
	// started is when Run started and lastCommit when offsets were last
	// committed (unix nanoseconds).
	lagMu      sync.Mutex
	parts      map[int]*partPosition
	started    atomic.Int64
	lastCommit atomic.Int64
}

// partPosition is how far the source is in an assigned partition, and how
// far the partition goes.
type partPosition struct {
	// start is the offset the generation started from: a committed offset,
	// or kafka-go's FirstOffset or LastOffset when none was committed.
	start int64
	// next is the offset after the last message handled, -1 before one.
	next int64
	// hwm is the partition's high watermark (the offset of its next
	// message) and logStart its first offset, as last fetched or polled;
	// -1 when unknown. latest is the first hwm polled (where a start at
	// LastOffset began).
	hwm, logStart, latest int64
}

// offset is the source's position in the partition: the offset of the
// next message it will handle, and whether it is known.
func (p *partPosition) offset() (int64, bool) {
	pos := p.next
	switch {
	case pos >= 0:
	case p.start >= 0:
		pos = p.start
	case p.start == kafkago.FirstOffset && p.logStart >= 0:
		pos = p.logStart
	case p.start == kafkago.LastOffset && p.latest >= 0:
		pos = p.latest
	default:
		return 0, false
	}
	return pos, true
}

// lag is how many messages of the partition the source has not handled
// yet, and whether it is known.
func (p *partPosition) lag() (int64, bool) {
	pos, ok := p.offset()
	if p.hwm < 0 || !ok {
		return 0, false
	}
	return max(0, p.hwm-pos), true
}

// offsetsPoll is how often a generation asks the brokers for its
// partitions' high watermarks: the lag grows while the pipeline holds the
// source back, when no fetch tells them.
const offsetsPoll = time.Second

// New checks the options and returns a Source; it connects in Run.
func New(o Options) (*Source, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	return &Source{o: o, ackedCh: make(chan struct{}, 1)}, nil
}

// Stats returns the counts so far.
func (s *Source) Stats() Stats {
	return Stats{Messages: s.messages.Load(), Lines: s.lines.Load(), Bytes: s.bytes.Load(), Skipped: s.skipped.Load(),
		Commits: s.commits.Load(), Generations: s.gens.Load(), TimedOut: s.timedOut.Load(),
		Repeated: s.repeated.Load(), LinesLost: s.linesLost.Load(), Evicted: s.evicted.Load()}
}

// checkpoint is what a barrier commits once released.
type checkpoint struct {
	gen     *kafkago.Generation
	seq     int64
	offsets map[int]int64
}

// Run consumes until ctx is cancelled or the group fails for good: a broker
// that refuses the connection (a wrong password, an untrusted certificate,
// TLS or SASL missing) is an error; one that cannot be reached is retried.
func (s *Source) Run(ctx context.Context, emit tracecast.Emit) error {
	s.started.Store(time.Now().UnixNano())
	start := kafkago.FirstOffset
	if s.o.Start == "latest" {
		start = kafkago.LastOffset
	}
	client := s.o.client()
	if err := client.Check(ctx, s.o.Brokers); err != nil {
		return fmt.Errorf("kafka source: %w", err)
	}
	if why := client.MissingTopic(ctx, s.o.Brokers, s.o.Topic); why != "" {
		// The group reads it once it exists (it watches the partitions).
		s.o.Logger.Warn().Str("topic", s.o.Topic).Msg("kafka source: " + why + ": nothing to read until then; waiting")
	}
	// A join the brokers refuse for the group's settings never succeeds
	// however often kafka-go retries it (and it retries silently, its
	// errors at debug level): such a refusal ends Run with the setting to
	// change, as Kafka's own consumers fail on it.
	joinCtx, refuse := context.WithCancelCause(ctx)
	defer refuse(nil)
	group, err := kafkago.NewConsumerGroup(kafkago.ConsumerGroupConfig{
		ID: s.o.Group, Brokers: s.o.Brokers, Topics: []string{s.o.Topic}, Dialer: client.Dialer(),
		SessionTimeout: s.o.SessionTimeout, HeartbeatInterval: s.o.HeartbeatInterval,
		RebalanceTimeout: 2 * s.o.SessionTimeout, JoinGroupBackoff: 500 * time.Millisecond,
		WatchPartitionChanges: true, PartitionWatchInterval: 5 * time.Second,
		StartOffset: start, Timeout: 5 * time.Second,
		ErrorLogger: kafkago.LoggerFunc(func(msg string, args ...any) {
			s.o.Logger.Debug().Msgf("kafka group: "+msg, args...)
			if refused := s.refusedJoin(args); refused != nil {
				refuse(refused)
			}
		}),
	})
	if err != nil {
		return fmt.Errorf("kafka source: %w", err)
	}
	defer group.Close()
	for {
		gen, err := group.Next(joinCtx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if joinCtx.Err() != nil {
				return fmt.Errorf("kafka source: %w", context.Cause(joinCtx))
			}
			if errors.Is(err, kafkago.ErrGroupClosed) {
				return err
			}
			if err := client.Check(ctx, s.o.Brokers); err != nil {
				return fmt.Errorf("kafka source: %w", err)
			}
			if warn, n := s.joinFails.Note(); warn {
				s.o.Logger.Warn().Err(err).Str("group", s.o.Group).Strs("brokers", s.o.Brokers).Int("failed_attempts", n).
					Msg("kafka source: cannot join the consumer group (the brokers are down or restarting?): retrying; warning every 30s while it lasts (check that a broker listens on --brokers)")
			}
			continue
		}
		if n, lasted := s.joinFails.Over(); n > 0 {
			s.o.Logger.Info().Str("group", s.o.Group).Int("failed_attempts", n).Dur("after", lasted.Round(time.Millisecond)).
				Msg("kafka source: joined the consumer group again")
		}
		s.gens.Add(1)
		stop, err := s.runGeneration(ctx, gen, emit)
		if err != nil || stop {
			return err
		}
	}
}

// refusedJoin is the error to stop on when the consumer group's join
// failed with one of args for a setting of the source, nil otherwise.
func (s *Source) refusedJoin(args []any) error {
	for _, a := range args {
		if err, ok := a.(error); ok && errors.Is(err, kafkago.InvalidSessionTimeout) {
			return fmt.Errorf("the brokers %s refuse group %s's session_timeout %v (%v): set the source's session_timeout within the brokers' group.min.session.timeout.ms to group.max.session.timeout.ms (6s to 30m by default; tracecast broker's minimum is --min-session-timeout)",
				strings.Join(s.o.Brokers, ","), s.o.Group, s.o.SessionTimeout, err)
		}
	}
	return nil
}

// partState is a partition's reading position and its open traces.
type partState struct {
	next int64            // offset after the last message handled
	open map[string]int64 // trace -> offset of its first message
}

// traceState is an open trace.
type traceState struct {
	part      int
	lines     int64
	hadEvents bool
	last      time.Time // when its last message was handled
	// repeated says a repeat was logged: once a trace, since a producer
	// that numbers its messages rather than their lines would look like
	// one that repeats them, and its lines would be dropped.
	repeated bool
	// lru is its place in genState.lru (most recently active first).
	lru *list.Element
}

// genState is everything that lives for one generation.
type genState struct {
	gen    *kafkago.Generation
	parts  map[int]*partState
	traces map[string]*traceState
	// lru orders the open traces by activity, the least recent last: the
	// one evicted beyond MaxOpenTraces, found without a scan.
	lru list.List
	// skipping holds the traces whose later messages are skipped (ended
	// by timeout, lines lost, begun before the start position) until they
	// start again or end: at most component.MaxDropped, the oldest
	// forgotten (its later messages are then skipped as begun before the
	// start position: the same), so that runs whose producer died cost
	// nothing for ever.
	skipping component.Bounded[struct{}]
	pending  map[string][]tracecast.Line
	order    []string // traces with pending lines, in arrival order
	npending int
	dirty    bool // consumed since the last barrier
	seq      int64
}

// runGeneration reads the generation's partitions until it ends (returns
// false, to join the next) or ctx is cancelled (returns true).
func (s *Source) runGeneration(ctx context.Context, gen *kafkago.Generation, emit tracecast.Emit) (stop bool, err error) {
	g := &genState{gen: gen, parts: map[int]*partState{}, traces: map[string]*traceState{},
		skipping: component.Bounded[struct{}]{Max: component.MaxDropped}, pending: map[string][]tracecast.Line{}}
	// The traces left open by the previous generation will be read again
	// from their partition's committed offset (here or by another member):
	// forget them. (Only them: a stage may also read other sources.)
	for _, id := range s.open {
		if err := emit(ctx, tracecast.Batch{Stream: id, Items: tracecast.StreamReset{}, Watermark: math.NaN()}); err != nil {
			return true, nil
		}
	}
	s.open = s.open[:0]
	defer func() {
		for id := range g.traces {
			s.open = append(s.open, id)
		}
		sort.Strings(s.open)
	}()
	msgs := make(chan kafkago.Message, 1024) // this generation's
	genDone := make(chan struct{})
	gen.Start(func(gctx context.Context) { <-gctx.Done(); close(genDone) })
	var assigned []int
	positions := map[int]*partPosition{}
	for _, pa := range gen.Assignments[s.o.Topic] {
		assigned = append(assigned, pa.ID)
		g.parts[pa.ID] = &partState{next: -1, open: map[string]int64{}}
		positions[pa.ID] = &partPosition{start: pa.Offset, next: -1, hwm: -1, logStart: -1, latest: -1}
		gen.Start(func(gctx context.Context) { s.readPartition(gctx, pa, msgs) })
	}
	s.lagMu.Lock()
	s.parts = positions
	s.lagMu.Unlock()
	defer func() {
		s.lagMu.Lock()
		s.parts = nil
		s.lagMu.Unlock()
	}()
	if len(assigned) > 0 {
		gen.Start(func(gctx context.Context) { s.pollOffsets(gctx, assigned) })
	}
	s.o.Logger.Info().Int32("generation", gen.ID).Ints("partitions", assigned).Str("topic", s.o.Topic).
		Msg("consumer group generation: reading assigned partitions from their committed offsets")

	tick := time.NewTicker(s.o.CommitInterval)
	defer tick.Stop()
	for {
		select {
		case m := <-msgs:
			if err := s.handle(g, m, ctx, emit); err != nil {
				return true, ignoreStop(ctx, err)
			}
			// Drain what is already fetched before emitting, so that a
			// busy topic gives big batches and a quiet one no delay.
			if len(msgs) == 0 || g.npending >= s.o.BatchLines {
				if err := s.flush(ctx, g, emit); err != nil {
					return true, ignoreStop(ctx, err)
				}
			}
		case <-tick.C:
			if err := s.expire(ctx, g, emit); err != nil {
				return true, ignoreStop(ctx, err)
			}
			if g.dirty {
				if _, err := s.barrier(ctx, g, emit); err != nil {
					return true, ignoreStop(ctx, err)
				}
			}
		case <-s.ackedCh:
			s.commit(gen)
		case <-genDone:
			s.o.Logger.Info().Int32("generation", gen.ID).Msg("consumer group generation ended (rebalance); rejoining")
			return false, nil
		case <-ctx.Done():
			s.stopCommit(ctx, g, emit)
			// The unfinished traces are not flushed at a stop: their last
			// windows are incomplete, and a prediction sent now would carry
			// the id of the right one sent after the restart. Forget them.
			ids := make([]string, 0, len(g.traces))
			for id := range g.traces {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				if err := emit(context.WithoutCancel(ctx), tracecast.Batch{Stream: id, Items: tracecast.StreamReset{}, Watermark: math.NaN()}); err != nil {
					break
				}
			}
			return true, nil
		}
	}
}

// ignoreStop turns the error of an emit cut short by a stop into nil.
func ignoreStop(ctx context.Context, err error) error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	return err
}

// readPartition fetches one partition from its committed offset until the
// generation ends. Fetch errors are transient (a broker restart): it keeps
// trying, since returning would end the generation for every partition.
func (s *Source) readPartition(ctx context.Context, pa kafkago.PartitionAssignment, out chan<- kafkago.Message) {
	r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: s.o.Brokers, Topic: s.o.Topic, Partition: pa.ID, Dialer: s.o.client().Dialer(),
		MinBytes: 1, MaxBytes: 16 << 20, MaxWait: s.o.MaxWait, ReadBackoffMin: 50 * time.Millisecond, ReadBackoffMax: time.Second,
		ErrorLogger: kafkago.LoggerFunc(func(msg string, args ...any) {
			s.o.Logger.Debug().Int("partition", pa.ID).Msgf("kafka reader: "+msg, args...)
		})})
	defer r.Close()
	if err := r.SetOffset(pa.Offset); err != nil {
		s.o.Logger.Error().Err(err).Int("partition", pa.ID).Msg("setting the start offset")
		<-ctx.Done()
		return
	}
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if warn, n := s.fetchFails.Note(); warn {
				s.o.Logger.Warn().Err(err).Str("topic", s.o.Topic).Int("partition", pa.ID).Strs("brokers", s.o.Brokers).Int("failed_attempts", n).
					Msg("kafka source: fetching failed (the brokers are down or restarting?): retrying; warning every 30s for all partitions while it lasts")
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		if n, lasted := s.fetchFails.Over(); n > 0 {
			s.o.Logger.Info().Str("topic", s.o.Topic).Int("partition", pa.ID).Int("failed_attempts", n).Dur("after", lasted.Round(time.Millisecond)).
				Msg("kafka source: fetching again")
		}
		s.position(pa.ID, func(p *partPosition) { p.hwm = max(p.hwm, m.HighWaterMark) })
		select {
		case out <- m:
		case <-ctx.Done():
			return
		}
	}
}

// position updates the position of partition p of the current generation
// (none when it is not assigned).
func (s *Source) position(p int, update func(*partPosition)) {
	s.lagMu.Lock()
	if pp := s.parts[p]; pp != nil {
		update(pp)
	}
	s.lagMu.Unlock()
}

// pollOffsets asks the brokers for the first and next offsets of the
// generation's partitions every offsetsPoll until the generation ends.
// Failures are left to the next poll: the lag then stays as last known.
func (s *Source) pollOffsets(ctx context.Context, parts []int) {
	tr := s.o.client().Transport()
	defer tr.CloseIdleConnections()
	c := &kafkago.Client{Addr: kafkago.TCP(s.o.Brokers...), Transport: tr, Timeout: 5 * time.Second}
	reqs := make([]kafkago.OffsetRequest, 0, 2*len(parts))
	for _, p := range parts {
		reqs = append(reqs, kafkago.FirstOffsetOf(p), kafkago.LastOffsetOf(p))
	}
	t := time.NewTicker(offsetsPoll)
	defer t.Stop()
	for {
		resp, err := c.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{s.o.Topic: reqs}})
		if err == nil {
			for _, po := range resp.Topics[s.o.Topic] {
				if po.Error != nil {
					continue
				}
				s.position(po.Partition, func(p *partPosition) {
					p.hwm, p.logStart = max(p.hwm, po.LastOffset), po.FirstOffset
					if p.latest < 0 {
						p.latest = po.LastOffset
					}
				})
			}
		} else if ctx.Err() == nil {
			s.o.Logger.Debug().Err(err).Msg("polling the partitions' offsets (consumer lag)")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// LiveMetrics reports, as of the scrape, the consumer lag of every
// assigned partition, the age of the last commit and the counts
// (component.LiveMetricsReporter: safe while the source runs, and current
// while the pipeline holds it back).
func (s *Source) LiveMetrics(add func(component.Metric)) {
	type lag struct {
		p             int
		n, pos        int64
		lagOK, offset bool
	}
	var lags []lag
	s.lagMu.Lock()
	for p, pp := range s.parts {
		l := lag{p: p}
		l.n, l.lagOK = pp.lag()
		l.pos, l.offset = pp.offset()
		if l.lagOK || l.offset {
			lags = append(lags, l)
		}
	}
	s.lagMu.Unlock()
	sort.Slice(lags, func(i, j int) bool { return lags[i].p < lags[j].p })
	for _, l := range lags {
		labels := []string{"topic", s.o.Topic, "partition", strconv.Itoa(l.p)}
		if l.lagOK {
			add(component.Metric{Name: "kafka_consumer_lag", Help: "messages of an assigned partition not read yet: its high watermark minus the source's position",
				Labels: labels, Value: float64(l.n)})
		}
		// The position itself, so that whoever watches the topic can tell
		// the lag against its own, fresher, high watermark: the one above
		// is as of the last poll, and stays as last known while the
		// brokers cannot be asked.
		if l.offset {
			add(component.Metric{Name: "kafka_consumer_offset", Help: "the offset of the next message of an assigned partition the source will handle",
				Labels: labels, Value: float64(l.pos)})
		}
	}
	since := s.lastCommit.Load()
	if since == 0 {
		since = s.started.Load()
	}
	if since > 0 {
		add(component.Metric{Name: "kafka_last_commit_age_seconds", Help: "seconds since offsets were last committed (since the source started before its first commit)",
			Labels: []string{"topic", s.o.Topic}, Value: time.Since(time.Unix(0, since)).Seconds()})
	}
	add(component.Metric{Name: "kafka_messages_total", Help: "messages read", Labels: []string{"topic", s.o.Topic}, Value: float64(s.messages.Load()), Counter: true})
	add(component.Metric{Name: "kafka_commits_total", Help: "offset commits", Labels: []string{"topic", s.o.Topic}, Value: float64(s.commits.Load()), Counter: true})
	add(component.Metric{Name: "kafka_traces_timed_out_total", Help: "traces ended by trace_timeout, without their end marker", Labels: []string{"topic", s.o.Topic}, Value: float64(s.timedOut.Load()), Counter: true})
	add(component.Metric{Name: "kafka_repeated_lines_total", Help: "trace lines read again (a producer's retry after a broker failure), dropped by their tracecast-seq", Labels: []string{"topic", s.o.Topic}, Value: float64(s.repeated.Load()), Counter: true})
	add(component.Metric{Name: "kafka_traces_evicted_total", Help: "open traces dropped for room beyond max_open_traces (their records missing downstream, their later messages skipped)", Labels: []string{"topic", s.o.Topic}, Value: float64(s.evicted.Load()), Counter: true})
	add(component.Metric{Name: "kafka_traces_lines_lost_total", Help: "traces dropped because lines were missing before a message (tracecast-seq ahead of the lines read)", Labels: []string{"topic", s.o.Topic}, Value: float64(s.linesLost.Load()), Counter: true})
}

func header(m *kafkago.Message, key string) ([]byte, bool) {
	for _, h := range m.Headers {
		if h.Key == key {
			return h.Value, true
		}
	}
	return nil, false
}

// handle books one message and queues its lines.
func (s *Source) handle(g *genState, m kafkago.Message, ctx context.Context, emit tracecast.Emit) error {
	s.messages.Add(1)
	s.bytes.Add(int64(len(m.Value)))
	g.dirty = true
	ps := g.parts[m.Partition]
	if ps == nil {
		return nil // not ours (cannot happen: readers are per assigned partition)
	}
	ps.next = m.Offset + 1
	s.position(m.Partition, func(p *partPosition) { p.next = m.Offset + 1 })
	id := string(m.Key)
	if id == "" {
		s.skipped.Add(1)
		s.o.Logger.Warn().Int("partition", m.Partition).Int64("offset", m.Offset).Msg("message without a key (trace id): skipped")
		return nil
	}
	if v, ok := header(&m, HeaderEnd); ok && string(v) == "1" {
		if g.skipping.Has(id) {
			g.skipping.Delete(id)
			return nil
		}
		if g.traces[id] != nil {
			return s.endTrace(ctx, g, id, "", emit)
		}
		return nil
	}
	tr := g.traces[id]
	if s.startsTrace(&m, tr) {
		if tr != nil { // the producer started the trace over: forget the old run
			if err := s.flush(ctx, g, emit); err != nil {
				return err
			}
			if err := emit(ctx, tracecast.Batch{Stream: id, Items: tracecast.StreamReset{}, Watermark: math.NaN()}); err != nil {
				return err
			}
			s.o.Logger.Warn().Str("trace", id).Msg("trace started again before its end marker: previous run dropped")
		}
		g.skipping.Delete(id)
		if tr != nil {
			g.forget(id)
		} else if len(g.traces) >= s.o.MaxOpenTraces {
			if err := s.evict(ctx, g, id, emit); err != nil {
				return err
			}
		}
		tr = &traceState{part: m.Partition}
		tr.lru = g.lru.PushFront(id)
		g.traces[id] = tr
		ps.open[id] = m.Offset
	}
	if tr == nil {
		s.skipped.Add(1)
		if !g.skipping.Has(id) {
			g.skipping.Set(id, struct{}{})
			s.o.Logger.Info().Str("trace", id).Int("partition", m.Partition).Int64("offset", m.Offset).
				Msg("trace began before the start position (its results were committed): skipping its messages")
		}
		return nil
	}
	tr.last = time.Now()
	g.lru.MoveToFront(tr.lru)
	data := m.Value
	if v, ok := header(&m, HeaderSeq); ok {
		if seq, err := strconv.ParseInt(string(v), 10, 64); err == nil && seq != tr.lines {
			if seq > tr.lines {
				return s.linesMissing(ctx, g, id, seq, emit)
			}
			// Lines read already: a producer sent the message again after
			// a write it could not confirm.
			if !tr.repeated {
				tr.repeated = true
				s.o.Logger.Warn().Str("trace", id).Int64("lines_read", tr.lines).Int64("message_seq", seq).
					Msg("message numbered below the lines already read: its lines read before are dropped (a producer's retry; tracecast-seq must number lines, not messages); logged once a trace, counted in kafka_repeated_lines_total")
			}
			for n := tr.lines - seq; n > 0 && len(data) > 0; n-- {
				if i := bytes.IndexByte(data, '\n'); i >= 0 {
					data = data[i+1:]
				} else {
					data = nil
				}
				s.repeated.Add(1)
			}
			if len(data) == 0 {
				return nil
			}
		}
	}
	n := 0
	if _, ok := g.pending[id]; !ok {
		g.order = append(g.order, id)
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		tr.lines++
		if len(line) > 0 && line[0] != '%' {
			tr.hadEvents = true
		}
		g.pending[id] = append(g.pending[id], tracecast.Line{Data: line, Num: tr.lines, End: m.Offset + 1})
		g.npending++
		n++
	}
	s.lines.Add(int64(n))
	return nil
}

// linesMissing drops trace id, whose message numbered seq comes after
// fewer lines: its results would be those of a trace with lines missing.
// Like an evicted trace (component.PerStream), its records are then
// missing, never changed: a StreamDrop goes downstream, and its later
// messages are skipped until it starts again or ends.
func (s *Source) linesMissing(ctx context.Context, g *genState, id string, seq int64, emit tracecast.Emit) error {
	tr := g.traces[id]
	if err := s.flush(ctx, g, emit); err != nil {
		return err
	}
	n := s.linesLost.Add(1)
	s.o.Logger.Error().Str("trace", id).Int64("lines_read", tr.lines).Int64("message_seq", seq).Int64("traces_lines_lost", n).
		Msg("lines missing in a trace (its producer lost messages): the trace is dropped, its records will be missing downstream, and its later messages skipped")
	g.forget(id)
	g.skipping.Set(id, struct{}{})
	return emit(ctx, tracecast.Batch{Stream: id, Items: tracecast.StreamDrop{Reason: tracecast.DropLinesLost}, Watermark: math.NaN()})
}

// forget removes an open trace from the generation's books: the open
// traces, their order of activity, its partition's open list.
func (g *genState) forget(id string) {
	tr := g.traces[id]
	if tr == nil {
		return
	}
	delete(g.traces, id)
	delete(g.parts[tr.part].open, id)
	g.lru.Remove(tr.lru)
}

// evict drops the least recently active open trace to make room for
// trace id (MaxOpenTraces), as linesMissing drops one: downstream drops
// it too, its later messages are skipped, and its partition's commits no
// longer wait for it. Warned once, then once per evictWarnEvery with the
// count, since a flood of dead runs would log a line each.
func (s *Source) evict(ctx context.Context, g *genState, id string, emit tracecast.Emit) error {
	old := g.lru.Back().Value.(string)
	if err := s.flush(ctx, g, emit); err != nil {
		return err
	}
	g.forget(old)
	g.skipping.Set(old, struct{}{})
	n := s.evicted.Add(1)
	if now := time.Now(); n == 1 || now.Sub(s.evictWarned) >= evictWarnEvery {
		s.o.Logger.Warn().Str("evicted", old).Str("for", id).Int("max_open_traces", s.o.MaxOpenTraces).Int64("evicted_total", n).
			Int64("since_last_warning", n-s.evictWarnedAt).
			Msg("too many traces open (begun, no end marker yet): the least recently active is dropped for good, its records missing downstream and its later messages skipped (raise max_open_traces, or set a trace_timeout so that dead runs end); warned once per 30s, counted in kafka_traces_evicted_total")
		s.evictWarned, s.evictWarnedAt = now, n
	}
	return emit(ctx, tracecast.Batch{Stream: old, Items: tracecast.StreamDrop{Reason: tracecast.DropEvicted}, Watermark: math.NaN()})
}

// evictWarnEvery is how often evictions are warned about while they go on.
const evictWarnEvery = 30 * time.Second

// endTrace flushes a trace's lines and sends its end marker, with why
// (tracecast.StreamEnd.Reason): it no longer holds its partition's commits
// back.
func (s *Source) endTrace(ctx context.Context, g *genState, id, reason string, emit tracecast.Emit) error {
	if err := s.flush(ctx, g, emit); err != nil {
		return err
	}
	g.forget(id)
	return emit(ctx, tracecast.Batch{Stream: id, Items: tracecast.StreamEnd{Reason: reason}, Watermark: math.NaN()})
}

// expire ends the traces silent for longer than TraceTimeout, marked as
// ended by the timeout (tracecast.EndTimeout) and counted.
func (s *Source) expire(ctx context.Context, g *genState, emit tracecast.Emit) error {
	if s.o.TraceTimeout <= 0 {
		return nil
	}
	var ids []string
	for id, tr := range g.traces {
		if time.Since(tr.last) > s.o.TraceTimeout {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		n := s.timedOut.Add(1)
		s.o.Logger.Warn().Str("trace", id).Str("end", tracecast.EndTimeout).Dur("trace_timeout", s.o.TraceTimeout).Int64("timed_out", n).
			Msg("trace silent for too long: ended by timeout, without its end marker (its records are flushed as final; later messages are skipped)")
		g.skipping.Set(id, struct{}{})
		g.dirty = true
		if err := s.endTrace(ctx, g, id, tracecast.EndTimeout, emit); err != nil {
			return err
		}
	}
	return nil
}

// startsTrace reports whether m is the first message of a trace run.
func (s *Source) startsTrace(m *kafkago.Message, tr *traceState) bool {
	if v, ok := header(m, HeaderSeq); ok {
		n, err := strconv.ParseInt(string(v), 10, 64)
		return err == nil && n == 0
	}
	if len(m.Value) == 0 || m.Value[0] != '%' {
		return false
	}
	return tr == nil || tr.hadEvents
}

// flush emits the queued lines, one batch per trace.
func (s *Source) flush(ctx context.Context, g *genState, emit tracecast.Emit) error {
	for _, id := range g.order {
		lines := g.pending[id]
		delete(g.pending, id)
		if len(lines) == 0 {
			continue
		}
		if err := emit(ctx, tracecast.Batch{Stream: id, Items: lines, Watermark: math.NaN()}); err != nil {
			return err
		}
	}
	g.order, g.npending = g.order[:0], 0
	return nil
}

// barrier emits a checkpoint: once every sink releases it, each partition
// can be committed up to its next offset, but not past the start of an
// open trace.
func (s *Source) barrier(ctx context.Context, g *genState, emit tracecast.Emit) (sent bool, err error) {
	if err := s.flush(ctx, g, emit); err != nil {
		return false, err
	}
	offsets := map[int]int64{}
	for p, ps := range g.parts {
		if ps.next < 0 {
			continue
		}
		off := ps.next
		for _, first := range ps.open {
			off = min(off, first)
		}
		offsets[p] = off
	}
	g.dirty = false
	if len(offsets) == 0 {
		return false, nil
	}
	g.seq++
	cp := &checkpoint{gen: g.gen, seq: g.seq, offsets: offsets}
	b := tracecast.NewBarrier(func() {
		s.mu.Lock()
		if s.acked == nil || s.acked.gen != cp.gen || s.acked.seq < cp.seq {
			s.acked = cp
		}
		s.mu.Unlock()
		select {
		case s.ackedCh <- struct{}{}:
		default:
		}
	})
	defer b.Release()
	return true, emit(ctx, tracecast.Batch{Items: b, Watermark: math.NaN()})
}

// commit commits the newest released checkpoint of gen. A checkpoint of an
// earlier generation is dropped: its partitions may have moved.
func (s *Source) commit(gen *kafkago.Generation) {
	s.mu.Lock()
	cp := s.acked
	s.acked = nil
	s.mu.Unlock()
	if cp == nil || cp.gen != gen {
		return
	}
	if err := gen.CommitOffsets(map[string]map[int]int64{s.o.Topic: cp.offsets}); err != nil {
		s.o.Logger.Warn().Err(err).Msg("committing offsets (they will be committed with the next checkpoint)")
		return
	}
	s.commits.Add(1)
	s.lastCommit.Store(time.Now().UnixNano())
	s.o.Logger.Debug().Interface("offsets", cp.offsets).Msg("committed")
}

// stopCommit, on a graceful stop, sends a last barrier and commits it if
// the sinks release it in time.
func (s *Source) stopCommit(ctx context.Context, g *genState, emit tracecast.Emit) {
	ctx = context.WithoutCancel(ctx)
	if sent, err := s.barrier(ctx, g, emit); err != nil || !sent {
		return
	}
	t := time.NewTimer(s.o.StopCommitTimeout)
	defer t.Stop()
	for {
		select {
		case <-s.ackedCh:
			s.mu.Lock()
			last := s.acked != nil && s.acked.seq == g.seq
			s.mu.Unlock()
			s.commit(g.gen)
			if last {
				return
			}
		case <-t.C:
			s.o.Logger.Warn().Dur("timeout", s.o.StopCommitTimeout).Msg("stopping without committing the last checkpoint (sinks not durable yet)")
			return
		}
	}
}
