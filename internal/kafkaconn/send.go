package kafkaconn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"
)

// DefaultDeliveryTimeout bounds the time a message may take to be
// acknowledged, retries included, as Kafka producers' delivery.timeout.ms
// (2 minutes).
const DefaultDeliveryTimeout = 2 * time.Minute

// DefaultWarnEvery is how often a Sender repeats its warning while sending
// fails.
const DefaultWarnEvery = 30 * time.Second

// Sender sends messages with a kafka-go writer and returns once all are
// acknowledged, riding out what a later attempt may not meet (Transient):
// a broker restarting or unreachable, a leader moving, a broker whose disk
// is full (KAFKA_STORAGE_ERROR), a topic not created yet. Attempts back off
// from 100 ms to 5 s. It warns once when sending starts failing, then once
// per WarnEvery with the number of attempts ("(×165)"), again at once when
// the cause changes, and says when it sends again after the outage — not a
// line per attempt. A kafka-go writer gives up after about ten attempts, a
// few seconds: a broker restart that took longer stopped the writer.
//
// The messages of an attempt that partly succeeded are sent again, so
// readers must tolerate duplicates (the records' ids, the trace lines'
// tracecast-seq). A Sender is used by one goroutine; its Outage may be
// read by others (metrics, /readyz).
type Sender struct {
	W *kafkago.Writer
	// Log receives the warnings; What names the client in them ("kafka
	// sink", "kafka producer").
	Log  zerolog.Logger
	What string
	// Brokers name the brokers in messages (default: the writer's Addr).
	Brokers []string
	// DeliveryTimeout, when positive, bounds the time a write may take,
	// retries included (Kafka producers' delivery.timeout.ms): Write then
	// fails with the last cause. Zero waits for ever for a broker that is
	// down or cannot store (a service rides out outages) — but a topic that
	// does not exist fails after DefaultDeliveryTimeout: only an operator
	// can create it.
	DeliveryTimeout time.Duration
	// WarnEvery is the interval between warnings while failing (default
	// DefaultWarnEvery).
	WarnEvery time.Duration

	mu sync.Mutex
	o  Outage
	// lastWarn is when the outage was last logged, warned the number of
	// attempts then.
	lastWarn time.Time
	warned   int
	retries  int64
}

// Outage is the state of a Sender's current outage: the zero value when
// the last write succeeded.
type Outage struct {
	// Since is when the first failed attempt of the outage began.
	Since time.Time
	// Attempts is the number of failed attempts; Cause the last one's
	// (Describe), Kind its class.
	Attempts int
	Cause    string
	Kind     Kind
}

// Down reports whether sending is failing.
func (o Outage) Down() bool { return o.Attempts > 0 }

// Kind classes a failed attempt.
type Kind string

// The kinds of failure a Sender rides out.
const (
	Unreachable  Kind = "unreachable"   // no connection to the broker
	MissingTopic Kind = "missing_topic" // Unknown Topic Or Partition
	Storage      Kind = "storage"       // KAFKA_STORAGE_ERROR: the broker's disk
	OtherKind    Kind = "other"         // another temporary Kafka error
)

// Outage returns the current outage (the zero value when none).
func (s *Sender) Outage() Outage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.o
}

// Retries is the number of failed attempts since the Sender was made.
func (s *Sender) Retries() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retries
}

func (s *Sender) brokers() string {
	if len(s.Brokers) > 0 {
		return strings.Join(s.Brokers, ",")
	}
	if s.W.Addr != nil {
		return s.W.Addr.String()
	}
	return "?"
}

// Write sends msgs and returns once all are acknowledged; see Sender. A
// failure no retry can fix (a message too large, a refused
// authentication) is returned at once; a stop (ctx) returns ctx's error
// with the last cause.
func (s *Sender) Write(ctx context.Context, msgs ...kafkago.Message) error {
	wait := 100 * time.Millisecond
	start := time.Now()
	for {
		err := s.W.WriteMessages(ctx, msgs...)
		if err == nil {
			s.recovered()
			return nil
		}
		if ctx.Err() != nil {
			return s.stopped(ctx, err)
		}
		if !Transient(err) {
			s.recovered()
			return fmt.Errorf("%s %s: %s", s.What, s.W.Topic, Describe(err))
		}
		kind, cause := s.classify(err)
		o := s.failed(kind, cause)
		limit := s.DeliveryTimeout
		if limit <= 0 && kind == MissingTopic {
			limit = DefaultDeliveryTimeout
		}
		pause := wait
		if limit > 0 {
			left := limit - time.Since(start)
			if left <= 0 {
				return fmt.Errorf("%s %s: not delivered in %v (delivery timeout), %d attempts: %s", s.What, s.W.Topic,
					limit, o.Attempts, cause)
			}
			pause = min(pause, left) // one last attempt at the limit
		}
		select {
		case <-ctx.Done():
			return s.stopped(ctx, err)
		case <-time.After(pause):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// classify is the kind of a transient error and what it means, naming the
// topic and the brokers.
func (s *Sender) classify(err error) (Kind, string) {
	topic := s.W.Topic
	switch {
	case hasCode(err, kafkago.UnknownTopicOrPartition):
		return MissingTopic, fmt.Sprintf("topic %s does not exist on %s (create it: tracecast topics create --brokers %s %s; or let the broker create topics on first use, Kafka's auto.create.topics.enable)",
			topic, s.brokers(), s.brokers(), topic)
	case hasCode(err, kafkago.KafkaStorageError):
		return Storage, fmt.Sprintf("the broker %s cannot store messages of %s (KAFKA_STORAGE_ERROR: its disk is full or failing, see its log): %s",
			s.brokers(), topic, Describe(err))
	}
	var ke kafkago.Error
	var we kafkago.WriteErrors
	if errors.As(err, &ke) || errors.As(err, &we) {
		return OtherKind, fmt.Sprintf("the broker %s refused %s for now: %s", s.brokers(), topic, Describe(err))
	}
	return Unreachable, fmt.Sprintf("the broker %s is not reachable: %s", s.brokers(), Describe(err))
}

// failed records a failed attempt and logs it as the warning policy says.
func (s *Sender) failed(kind Kind, cause string) Outage {
	s.mu.Lock()
	now := time.Now()
	if s.o.Attempts == 0 {
		s.o.Since = now
	}
	changed := s.o.Kind != kind // a new kind of failure is told at once
	s.o.Attempts++
	s.o.Cause, s.o.Kind = cause, kind
	s.retries++
	every := s.WarnEvery
	if every <= 0 {
		every = DefaultWarnEvery
	}
	warn := changed || now.Sub(s.lastWarn) >= every
	o, n := s.o, s.o.Attempts-s.warned
	if warn {
		s.lastWarn, s.warned = now, s.o.Attempts
	}
	s.mu.Unlock()
	if warn {
		ev := s.Log.Warn().Str("topic", s.W.Topic).Str("kind", string(kind)).Int("attempts", o.Attempts).
			Dur("for", now.Sub(o.Since).Round(time.Millisecond))
		msg := s.What + ": " + cause + ": sending again"
		if !changed && n > 1 {
			msg += fmt.Sprintf(" (×%d since the last warning)", n)
		}
		if s.DeliveryTimeout <= 0 && kind != MissingTopic {
			msg += "; waiting for it, warning every " + every.String()
		}
		ev.Msg(msg)
	}
	return o
}

// recovered ends the outage, saying so when there was one.
func (s *Sender) recovered() {
	s.mu.Lock()
	o := s.o
	s.o, s.lastWarn, s.warned = Outage{}, time.Time{}, 0
	s.mu.Unlock()
	if o.Down() {
		s.Log.Info().Str("topic", s.W.Topic).Str("kind", string(o.Kind)).Int("attempts", o.Attempts).
			Dur("outage", time.Since(o.Since).Round(time.Millisecond)).
			Msg(fmt.Sprintf("%s: sent again after %v (×%d failed attempts; last: %s)", s.What, time.Since(o.Since).Round(time.Millisecond), o.Attempts, o.Cause))
	}
}

// stopped is Write's error when ctx ended: it wraps ctx's error (callers
// tell a stop from a failure with errors.Is) and says what the last
// attempt met.
func (s *Sender) stopped(ctx context.Context, last error) error {
	return fmt.Errorf("%s %s: %w (last attempt: %s)", s.What, s.W.Topic, ctx.Err(), Describe(last))
}

// Describe is err's text with identical errors collapsed: kafka-go's
// WriteErrors, one per message, becomes "165 of 165 messages: [56] Kafka
// Storage Error: ... (×165)" instead of the same cause 165 times.
func Describe(err error) string {
	var we kafkago.WriteErrors
	if !errors.As(err, &we) {
		return err.Error()
	}
	counts := map[string]int{}
	var order []string
	failed := 0
	for _, e := range we {
		if e == nil {
			continue
		}
		failed++
		m := e.Error()
		if counts[m] == 0 {
			order = append(order, m)
		}
		counts[m]++
	}
	slices.SortStableFunc(order, func(a, b string) int { return counts[b] - counts[a] })
	parts := make([]string, len(order))
	for i, m := range order {
		parts[i] = fmt.Sprintf("%s (×%d)", m, counts[m])
	}
	return fmt.Sprintf("%d of %d messages: %s", failed, len(we), strings.Join(parts, "; "))
}

// hasCode reports whether err, or one of kafka-go's WriteErrors in it (a
// slice, which errors.Is does not walk), is the Kafka error code.
func hasCode(err error, code kafkago.Error) bool {
	if errors.Is(err, code) {
		return true
	}
	var we kafkago.WriteErrors
	if errors.As(err, &we) {
		for _, e := range we {
			if e != nil && errors.Is(e, code) {
				return true
			}
		}
	}
	return false
}

// MissingTopic checks whether topic exists on brokers (a metadata request
// that asks for no creation): when it does not, it returns what to tell
// the operator — "topic T does not exist on BROKERS (create it: ...)" —
// else "" (also when the brokers cannot say: the clients' retries handle
// those).
func (c Client) MissingTopic(ctx context.Context, brokers []string, topic string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tr := c.Transport()
	defer tr.CloseIdleConnections()
	cl := &kafkago.Client{Addr: kafkago.TCP(brokers...), Transport: tr}
	md, err := cl.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return ""
	}
	for _, t := range md.Topics {
		if t.Name == topic && errors.Is(t.Error, kafkago.UnknownTopicOrPartition) {
			b := strings.Join(brokers, ",")
			return fmt.Sprintf("topic %s does not exist on %s (create it: tracecast topics create --brokers %s %s; a broker that creates topics on first use creates it at the first publish)", topic, b, b, topic)
		}
	}
	return ""
}
