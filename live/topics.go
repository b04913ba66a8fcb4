package live

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/tracecast/tracecast/internal/cliflags"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"github.com/tracecast/tracecast/internal/kafkaconn"
)

// TopicsOptions say which cluster Topics and CreateTopics talk to.
type TopicsOptions struct {
	Brokers []string
	// TLS (nil: plaintext) and SASL (nil: none) secure the connections.
	TLS  *tls.Config
	SASL sasl.Mechanism
	// Partitions of the topics created without a count (the commands'
	// default: 4, the live setup's) and their ReplicationFactor (1; 3 on a
	// production cluster): both positive.
	Partitions        int32 `flag:"partitions" help:"partitions of each topic created without NAME:PARTITIONS"`
	ReplicationFactor int32 `flag:"replication-factor" help:"copies of each partition (1 for a development broker; 3 is usual on a production cluster)"`
}

// TopicInfo is a topic of a cluster.
type TopicInfo struct {
	Name       string
	Partitions int
	Replicas   int
	// Live says the topic is one of the live setup's (Topics).
	Live bool
}

// client checks that the brokers answer, with the options' TLS and SASL
// (kafkaconn.Client.Check: a refused connection says why), and returns a
// client of them and a function releasing its connections.
func (o TopicsOptions) client(ctx context.Context) (*kafkago.Client, func(), error) {
	if len(o.Brokers) == 0 {
		return nil, nil, &OptionError{Option: "brokers", Err: errors.New("at least one")}
	}
	c := kafkaconn.Client{TLS: o.TLS, SASL: o.SASL}
	tr := c.Transport()
	if err := c.Check(ctx, o.Brokers); err != nil {
		tr.CloseIdleConnections()
		return nil, nil, err
	}
	return &kafkago.Client{Addr: kafkago.TCP(o.Brokers...), Transport: tr, Timeout: 30 * time.Second}, tr.CloseIdleConnections, nil
}

// ListTopics returns the cluster's topics, sorted by name, and the live
// setup's topics it does not have (missing).
func ListTopics(ctx context.Context, o TopicsOptions) (topics []TopicInfo, missing []string, err error) {
	cl, done, err := o.client(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	md, err := cl.Metadata(ctx, &kafkago.MetadataRequest{})
	if err != nil {
		return nil, nil, fmt.Errorf("kafka %s: %w", strings.Join(o.Brokers, ","), err)
	}
	live := liveTopics()
	have := map[string]bool{}
	for _, t := range md.Topics {
		if t.Internal || strings.HasPrefix(t.Name, "__") {
			continue
		}
		replicas := 0
		for _, p := range t.Partitions {
			replicas = max(replicas, len(p.Replicas))
		}
		_, isLive := live[t.Name]
		topics = append(topics, TopicInfo{Name: t.Name, Partitions: len(t.Partitions), Replicas: replicas, Live: isLive})
		have[t.Name] = true
	}
	slices.SortFunc(topics, func(a, b TopicInfo) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range liveTopicList() {
		if !have[t.Name] {
			missing = append(missing, t.Name)
		}
	}
	return topics, missing, nil
}

// WriteTopics prints ListTopics's result as a table, the live setup's
// missing topics last.
func WriteTopics(w io.Writer, topics []TopicInfo, missing []string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITIONS\tREPLICAS\t")
	for _, t := range topics {
		note := ""
		if t.Live {
			note = "live setup"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", t.Name, t.Partitions, t.Replicas, note)
	}
	for _, m := range missing {
		fmt.Fprintf(tw, "%s\t-\t-\tlive setup, missing: tracecast topics create\n", m)
	}
	return tw.Flush()
}

// CreateTopics creates topics (NAME or NAME:PARTITIONS specs; none: the
// live setup's, Topics) and returns those created and those that already
// existed (not an error). A topic the cluster refuses is an error naming
// it and the cluster's reason.
func CreateTopics(ctx context.Context, o TopicsOptions, specs []string) (created, existed []string, err error) {
	if o.Partitions <= 0 {
		return nil, nil, &OptionError{Option: "partitions", Err: errors.New("must be positive")}
	}
	if o.ReplicationFactor <= 0 {
		return nil, nil, &OptionError{Option: "replication-factor", Err: errors.New("must be positive")}
	}
	var topics []Topic
	if len(specs) == 0 {
		topics = liveTopicList()
	} else if topics, err = ParseTopics(specs, o.Partitions); err != nil {
		return nil, nil, err
	}
	cl, done, err := o.client(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	req := &kafkago.CreateTopicsRequest{}
	for _, t := range topics {
		req.Topics = append(req.Topics, kafkago.TopicConfig{Topic: t.Name, NumPartitions: int(t.Partitions), ReplicationFactor: int(o.ReplicationFactor)})
	}
	res, err := cl.CreateTopics(ctx, req)
	if err != nil {
		return nil, nil, fmt.Errorf("kafka %s: creating topics: %w", strings.Join(o.Brokers, ","), err)
	}
	var errs []error
	for _, t := range topics {
		switch e := res.Errors[t.Name]; {
		case e == nil:
			created = append(created, t.Name)
		case errors.Is(e, kafkago.TopicAlreadyExists):
			existed = append(existed, t.Name)
		default:
			errs = append(errs, fmt.Errorf("topic %s not created on %s: %w", t.Name, strings.Join(o.Brokers, ","), e))
		}
	}
	return created, existed, errors.Join(errs...)
}

// liveTopicList is Topics, parsed.
func liveTopicList() []Topic {
	ts, err := ParseTopics([]string{Topics}, 4)
	if err != nil {
		panic(err)
	}
	return ts
}

func liveTopics() map[string]Topic {
	m := map[string]Topic{}
	for _, t := range liveTopicList() {
		m[t.Name] = t
	}
	return m
}

// TopicsCommand is the topics command: with args "create [NAME[:PARTITIONS]]...",
// CreateTopics, a line per topic created or already there on w; with no
// args or "list", ListTopics written by WriteTopics. Another subcommand is
// a usage error.
func TopicsCommand(ctx context.Context, o TopicsOptions, args []string, w io.Writer) error {
	if len(args) > 0 && args[0] == "create" {
		created, existed, err := CreateTopics(ctx, o, args[1:])
		for _, t := range created {
			fmt.Fprintf(w, "created %s\n", t)
		}
		for _, t := range existed {
			fmt.Fprintf(w, "exists  %s\n", t)
		}
		return err
	}
	if len(args) > 1 || len(args) == 1 && args[0] != "list" {
		return cliflags.Usage(fmt.Errorf("unknown subcommand %q: list or create", args[0]))
	}
	topics, missing, err := ListTopics(ctx, o)
	if err != nil {
		return err
	}
	return WriteTopics(w, topics, missing)
}
