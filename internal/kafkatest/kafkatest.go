// Package kafkatest starts a real Kafka-protocol broker (franz-go's kfake)
// in-process for tests: one per test, on a random loopback port, with the
// topics created before any client starts.
package kafkatest

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Start runs a broker for the test and returns its address.
func Start(t testing.TB, partitions int32, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.SeedTopics(partitions, topics...),
		kfake.GroupMinSessionTimeout(time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}
