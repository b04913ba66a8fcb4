package live

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast/internal/kafkaname"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topics are the topics the live pipelines use, with their partitions.
const Topics = "tracecast.traces:4,tracecast.predictions:4,tracecast.forecasts:4,tracecast.alerts:4"

// BrokerOptions configure StartBroker.
type BrokerOptions struct {
	// Addr is where the broker listens: 127.0.0.1 or localhost only.
	Addr string `flag:"addr" help:"listen address (loopback only)"`
	// DataDir, when set, persists topics, messages and group offsets.
	DataDir string `flag:"data-dir" help:"persist topics, messages and offsets in DIR (survives restarts)"`
	// Topics are created at start: NAME or NAME:PARTITIONS, each element
	// comma-separated.
	Topics []string `flag:"topics" list:"comma" help:"topics to create at start: NAME or NAME:PARTITIONS, comma-separated or repeated"`
	// Partitions is the default number of partitions, of the topics
	// created at start and on first use.
	Partitions int32 `flag:"partitions" help:"default number of partitions (of --topics, and of topics created on first use)"`
	// NoAutoCreate turns off the creation of a topic on its first use (a
	// produce, fetch or metadata request naming it), which a Kafka broker
	// does by default (auto.create.topics.enable): clients then meet
	// UNKNOWN_TOPIC_OR_PARTITION until the topic is created.
	NoAutoCreate bool `flag:"no-auto-create-topics" help:"do not create a topic on its first use (Kafka's auto.create.topics.enable=false): clients get Unknown Topic Or Partition until it is created ('tracecast topics create')"`
	// MinSessionTimeout is the shortest consumer-group session timeout
	// accepted.
	MinSessionTimeout time.Duration `flag:"min-session-timeout" help:"shortest consumer-group session timeout accepted (Kafka's default is 6s; shorter lets tests and demos notice a dead member sooner)"`
	// Metrics, when set, gets the broker's metrics (NewBrokerCollector)
	// while ServeBroker runs.
	Metrics prometheus.Registerer
	// Logger receives the broker's warnings (a full data directory, a
	// failed write), each repeated at most once per WarnEvery.
	Logger zerolog.Logger
	// FreeSpace, when set, replaces the free space of the data directory's
	// filesystem (statfs): tests inject a full disk where they cannot
	// mount one.
	FreeSpace func(dir string) (int64, error)
}

// StartBroker starts an in-process kfake cluster. A bad address or topic
// is an *OptionError.
func StartBroker(o BrokerOptions) (*kfake.Cluster, error) {
	port, err := loopbackPort(o.Addr)
	if err != nil {
		return nil, &OptionError{Option: "addr", Value: o.Addr, Err: err}
	}
	topics, err := ParseTopics(o.Topics, o.Partitions)
	if err != nil {
		return nil, err
	}
	opts := []kfake.Opt{kfake.Ports(port), kfake.DefaultNumPartitions(int(o.Partitions)), kfake.GroupMinSessionTimeout(o.MinSessionTimeout)}
	warn := newRepeats(o.Logger)
	var st *storage
	if o.DataDir != "" {
		opts = append(opts, kfake.DataDir(o.DataDir))
		st = &storage{dir: o.DataDir, free: o.FreeSpace, log: warn}
		if st.free == nil {
			st.free = statfsFree
		}
	}
	opts = append(opts, kfake.WithLogger(&kfakeLogger{st: st, log: warn}))
	for _, t := range topics {
		opts = append(opts, kfake.SeedTopics(t.Partitions, t.Name))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, err
	}
	refuseInvalidTopics(c)
	if !o.NoAutoCreate {
		autoCreateTopics(c, o.Partitions, topics)
	}
	if st != nil {
		guardStorage(c, st)
	}
	return c, nil
}

// autoCreateTopics makes the broker create a topic on its first use, as a
// Kafka broker does by default (auto.create.topics.enable), with
// partitions partitions: a produce, fetch, list-offsets or metadata
// request that names a topic the broker does not have creates it first (a
// metadata request when it allows it, as Kafka's clients' do by default
// and tracecast's writers do). Before, publish met
// UNKNOWN_TOPIC_OR_PARTITION for ever on a broker started without
// --topics. A name Kafka does not allow is not created
// (internal/kafkaname).
func autoCreateTopics(c *kfake.Cluster, partitions int32, seeded []Topic) {
	var known sync.Map // topics the broker has, as far as this knows
	for _, t := range seeded {
		known.Store(t.Name, true)
	}
	names := func(r kmsg.Request) []string {
		var out []string
		switch r := r.(type) {
		case *kmsg.MetadataRequest:
			if r.Version >= 4 && !r.AllowAutoTopicCreation {
				return nil // a client that asks for no creation, as Kafka honours
			}
			for _, t := range r.Topics {
				if t.Topic != nil {
					out = append(out, *t.Topic)
				}
			}
		case *kmsg.ProduceRequest:
			for _, t := range r.Topics {
				out = append(out, t.Topic)
			}
		case *kmsg.FetchRequest:
			for _, t := range r.Topics {
				out = append(out, t.Topic)
			}
		case *kmsg.ListOffsetsRequest:
			for _, t := range r.Topics {
				out = append(out, t.Topic)
			}
		}
		return out
	}
	create := func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		var missing []string
		for _, t := range names(r) {
			if _, ok := known.Load(t); !ok && t != "" && kafkaname.Topic(t) == nil {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			// The cluster's admin calls wait for its loop, which runs this
			// control function: they run while it sleeps.
			c.SleepControl(func() {
				for _, t := range missing {
					if c.TopicInfo(t) == nil {
						c.CreateTopic(t, partitions, nil)
					}
					known.Store(t, true)
				}
			})
		}
		return nil, nil, false // the request goes on, the topics there
	}
	for _, k := range []kmsg.Key{kmsg.Metadata, kmsg.Produce, kmsg.Fetch, kmsg.ListOffsets} {
		c.ControlKey(k.Int16(), create)
	}
	c.ControlKey(kmsg.DeleteTopics.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, t := range r.(*kmsg.DeleteTopicsRequest).Topics {
			if t.Topic != nil {
				known.Delete(*t.Topic)
			}
		}
		return nil, nil, false
	})
}

// refuseInvalidTopics makes the broker answer, as Kafka does, a client's
// CreateTopics that names a topic Kafka does not allow (internal/kafkaname:
// more than 249 characters, or characters outside [a-zA-Z0-9._-], "." and
// "..") with INVALID_TOPIC_EXCEPTION, its message quoting at most 60 bytes
// of the name. kfake accepted any name: a 300-character topic broke the
// restart of a broker with --data-dir (its snapshot's file name was too
// long). A request that also names valid topics creates none of them (each
// answered INVALID_REQUEST, saying why): send them without the invalid ones.
func refuseInvalidTopics(c *kfake.Cluster) {
	c.ControlKey(kmsg.CreateTopics.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.CreateTopicsRequest)
		bad := map[string]error{}
		for _, t := range req.Topics {
			if err := kafkaname.Topic(t.Topic); err != nil {
				bad[t.Topic] = err
			}
		}
		if len(bad) == 0 {
			return nil, nil, false // kfake creates them
		}
		resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, t := range req.Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic = t.Topic
			msg := "not created: the request names invalid topics too; send it without them"
			st.ErrorCode = kerr.InvalidRequest.Code
			if err := bad[t.Topic]; err != nil {
				st.ErrorCode, msg = kerr.InvalidTopicException.Code, err.Error()
			}
			st.ErrorMessage = &msg
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// loopbackPort is the port of a loopback address.
func loopbackPort(addr string) (int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	if host != "127.0.0.1" && host != "localhost" && host != "" {
		return 0, errors.New("the broker listens on loopback only (127.0.0.1)")
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return 0, errors.New("bad port")
	}
	return port, nil
}

// Topic is a topic to create.
type Topic struct {
	Name       string
	Partitions int32
}

// ParseTopics reads NAME or NAME:PARTITIONS specs, several per element
// when comma-separated; partitions defaults to def. A bad count or a name
// Kafka refuses (internal/kafkaname) is an *OptionError naming the spec.
func ParseTopics(specs []string, def int32) ([]Topic, error) {
	var out []Topic
	for _, t := range specs {
		for _, one := range strings.Split(t, ",") {
			name, parts, _ := strings.Cut(strings.TrimSpace(one), ":")
			n := def
			if parts != "" {
				v, err := strconv.Atoi(parts)
				if err != nil || v <= 0 {
					return nil, &OptionError{Option: "topics", Value: one, Err: errors.New("bad partition count")}
				}
				n = int32(v)
			}
			if name == "" {
				continue
			}
			if err := kafkaname.Topic(name); err != nil {
				return nil, &OptionError{Option: "topics", Value: one, Err: err}
			}
			out = append(out, Topic{Name: name, Partitions: n})
		}
	}
	return out, nil
}
