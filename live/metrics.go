package live

import (
	"context"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// brokerCollector exposes a broker's topics when scraped: partitions,
// messages produced and bytes held per topic.
type brokerCollector struct {
	c                           *kfake.Cluster
	topics, parts, msgs, nbytes *prometheus.Desc
	full, refused, failures     *prometheus.Desc
}

// NewBrokerCollector returns a Prometheus collector of the cluster's
// topics (docs/metrics.md): tracecast_broker_topics, and per topic
// tracecast_broker_partitions, tracecast_broker_messages_total (the sum of
// its partitions' high watermarks) and tracecast_broker_bytes.
func NewBrokerCollector(c *kfake.Cluster) prometheus.Collector {
	return &brokerCollector{c: c,
		topics:   prometheus.NewDesc("tracecast_broker_topics", "topics the broker holds", nil, nil),
		parts:    prometheus.NewDesc("tracecast_broker_partitions", "partitions of a topic", []string{"topic"}, nil),
		msgs:     prometheus.NewDesc("tracecast_broker_messages_total", "messages produced to a topic (the sum of its partitions' high watermarks)", []string{"topic"}, nil),
		nbytes:   prometheus.NewDesc("tracecast_broker_bytes", "bytes a topic holds", []string{"topic"}, nil),
		full:     prometheus.NewDesc("tracecast_broker_storage_full", "1 while the broker answers produce requests with KAFKA_STORAGE_ERROR for want of space in its data directory", nil, nil),
		refused:  prometheus.NewDesc("tracecast_broker_storage_refused_total", "produce requests answered KAFKA_STORAGE_ERROR (data directory full)", nil, nil),
		failures: prometheus.NewDesc("tracecast_broker_storage_write_errors_total", "failed writes to the data directory (no space, I/O error), each logged with its file and cause", nil, nil),
	}
}

func (b *brokerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- b.topics
	ch <- b.parts
	ch <- b.msgs
	ch <- b.nbytes
	ch <- b.full
	ch <- b.refused
	ch <- b.failures
}

// Collect lists the topics with a metadata request to the broker (kfake
// has no call for it), then reads each topic's partitions from the cluster.
func (b *brokerCollector) Collect(ch chan<- prometheus.Metric) {
	if st := storageOf(b.c); st != nil {
		full, _ := st.state()
		f := 0.0
		if full {
			f = 1
		}
		ch <- prometheus.MustNewConstMetric(b.full, prometheus.GaugeValue, f)
		ch <- prometheus.MustNewConstMetric(b.refused, prometheus.CounterValue, float64(st.refused.Load()))
		ch <- prometheus.MustNewConstMetric(b.failures, prometheus.CounterValue, float64(st.failures.Load()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	addrs := b.c.ListenAddrs()
	if len(addrs) == 0 {
		return
	}
	conn, err := kafkago.DialContext(ctx, "tcp", addrs[0])
	if err != nil {
		ch <- prometheus.NewInvalidMetric(b.topics, err)
		return
	}
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	ps, err := conn.ReadPartitions()
	conn.Close()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(b.topics, err)
		return
	}
	seen := map[string]bool{}
	var topics []string
	for _, p := range ps {
		if !seen[p.Topic] {
			seen[p.Topic] = true
			topics = append(topics, p.Topic)
		}
	}
	sort.Strings(topics)
	ch <- prometheus.MustNewConstMetric(b.topics, prometheus.GaugeValue, float64(len(topics)))
	for _, t := range topics {
		infos := b.c.PartitionInfos(t)
		var hwm, nbytes int64
		for _, pi := range infos {
			hwm += pi.HighWatermark
			nbytes += pi.NumBytes
		}
		ch <- prometheus.MustNewConstMetric(b.parts, prometheus.GaugeValue, float64(len(infos)), t)
		ch <- prometheus.MustNewConstMetric(b.msgs, prometheus.CounterValue, float64(hwm), t)
		ch <- prometheus.MustNewConstMetric(b.nbytes, prometheus.GaugeValue, float64(nbytes), t)
	}
}
