package live

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast/internal/logtest"
)

// TestSubscribeBrokerOutage: a subscriber (no group: every partition
// from its start) rides out a 3 s broker restart with one warning naming
// the topic, partition and brokers, says when it fetches again, and reads
// the message published after it. Before, its partition readers retried
// in a loop without a pause and without a word. (With a group, the same
// fetchFails serve; kafka-go's group reader rejoins after its 30 s
// session timeout, too long for this test.)
func TestSubscribeBrokerOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a broker, 3 s of outage (-short)")
	}
	for _, group := range []string{""} {
		t.Run("group="+group, func(t *testing.T) {
			// A broker with a data directory, restarted as an operator
			// restarts one: topics, messages and offsets kept.
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			l.Close()
			bo := BrokerOptions{Addr: addr, DataDir: t.TempDir(), Topics: []string{"records:1"}, MinSessionTimeout: time.Second}
			c, err := StartBroker(bo)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { c.Close() }()
			var logs logtest.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			got := make(chan string, 10)
			done := make(chan error, 1)
			go func() {
				done <- Subscribe(ctx, SubscribeOptions{Brokers: []string{addr}, Topic: "records", Group: group, Limit: 2, Logger: zerolog.New(&logs)},
					func(recs [][]byte) error {
						for _, r := range recs {
							got <- string(r)
						}
						return nil
					})
			}()
			send := func(v string) {
				t.Helper()
				w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "records", BatchTimeout: time.Millisecond, RequiredAcks: kafkago.RequireAll}
				defer w.Close()
				for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
					err := w.WriteMessages(ctx, kafkago.Message{Key: []byte("k"), Value: []byte(v)})
					if err == nil {
						return
					}
					if time.Now().After(deadline) {
						t.Fatal(err)
					}
				}
			}
			send(`{"schema":"tracecast.prediction/1","id":"a"}`)
			select {
			case <-got:
			case <-time.After(20 * time.Second):
				t.Fatalf("nothing read\n%s", logs.String())
			}
			c.Close()
			time.Sleep(3 * time.Second)
			if c, err = StartBroker(bo); err != nil {
				t.Fatal(err)
			}
			send(`{"schema":"tracecast.prediction/1","id":"b"}`)
			select {
			case v := <-got:
				if !strings.Contains(v, `"id":"b"`) {
					t.Errorf("read %s after the outage, want b", v)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("nothing read 20 s after the outage\n%s", logs.String())
			}
			if err := <-done; err != nil {
				t.Fatalf("Subscribe: %v\n%s", err, logs.String())
			}
			warnings := strings.Count(logs.String(), `"level":"warn"`)
			if warnings != 1 || !strings.Contains(logs.String(), "fetching again") {
				t.Errorf("%d warnings over a 3 s outage, want one, and the recovery logged\n%s", warnings, logs.String())
			}
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, `"level":"warn"`) && (!strings.Contains(l, `"topic":"records"`) || !strings.Contains(l, addr)) {
					t.Errorf("the warning names neither the topic nor the brokers: %s", l)
				}
			}
			t.Logf("%d warnings\n%s", warnings, logs.String())
		})
	}
}
