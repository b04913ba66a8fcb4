package kafka

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/internal/kafkatest"
)

// TestSecureSink publishes to a broker that requires TLS and SASL (kfake),
// with each SASL mechanism; a wrong password or a CA that did not sign the
// broker's certificate fail the first Write with what went wrong.
func TestSecureSink(t *testing.T) {
	users := map[string]map[string]string{"PLAIN": {"p": "pw-p"}, "SCRAM-SHA-256": {"s256": "pw-256"}, "SCRAM-SHA-512": {"s512": "pw-512"}}
	addr, certs := kafkatest.StartSecure(t, kafkatest.Secure{TLS: true, Users: users}, 1, "tracecast.predictions")
	t.Setenv("PW_P", "pw-p")
	t.Setenv("PW_256", "pw-256")
	t.Setenv("PW_512", "pw-512")
	ca := &kafkaconn.TLS{CA: certs.CA}
	for _, tc := range []struct {
		name string
		tls  *kafkaconn.TLS
		sasl *kafkaconn.SASL
		want string // Write's error; "": the prediction is on the topic
	}{
		{name: "TLS and PLAIN", tls: ca, sasl: &kafkaconn.SASL{Mechanism: "PLAIN", User: "p", PasswordEnv: "PW_P"}},
		{name: "TLS and SCRAM-SHA-256", tls: ca, sasl: &kafkaconn.SASL{Mechanism: "SCRAM-SHA-256", User: "s256", PasswordEnv: "PW_256"}},
		{name: "TLS and SCRAM-SHA-512", tls: ca, sasl: &kafkaconn.SASL{Mechanism: "SCRAM-SHA-512", User: "s512", PasswordEnv: "PW_512"}},
		{name: "wrong password", tls: ca, sasl: &kafkaconn.SASL{Mechanism: "SCRAM-SHA-512", User: "s512", PasswordEnv: "PW_256"},
			want: "kafka sink tracecast.predictions: kafka " + addr + ": SASL authentication SCRAM-SHA-512 failed: wrong user or password"},
		{name: "untrusted CA", tls: &kafkaconn.TLS{CA: certs.OtherCA}, sasl: &kafkaconn.SASL{Mechanism: "PLAIN", User: "p", PasswordEnv: "PW_P"},
			want: "TLS handshake failed (check the CA, the client certificate and the server name): failed to dial: tls: failed to verify certificate: x509: certificate signed by unknown authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kafkaconn.Load(tc.tls, tc.sasl)
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(Options{Brokers: []string{addr}, Topic: "tracecast.predictions", TLS: c.TLS, SASL: c.SASL})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			err = s.Write(ctx, tracecast.Batch{Items: []tracecast.Prediction{{ID: tc.name, Trace: "a", Window: 1}}})
			if cerr := s.Close(ctx); err == nil {
				err = cerr
			}
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Write: %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: "tracecast.predictions", Dialer: c.Dialer(), MaxWait: 100 * time.Millisecond})
			defer r.Close()
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var p struct{ ID string }
				if json.Unmarshal(m.Value, &p) == nil && p.ID == tc.name {
					break
				}
			}
		})
	}
}

// TestTopicNames: the sink checks its topic's name as the source does, so
// that a bad name is a configuration error, not a broker's failure later.
func TestTopicNames(t *testing.T) {
	for _, tc := range []struct {
		topic, want string
	}{
		{"tracecast.predictions", ""},
		{"a_b-C.9", ""},
		{"tracecast predictions", `topic "tracecast predictions": character ' ' at 9 is not one of a-z A-Z 0-9 . _ -`},
		{"..", `topic "..": not a valid name`},
		{"é", `is not one of a-z A-Z 0-9 . _ -`},
		{strings.Repeat("t", 250), "250 characters, Kafka allows at most 249"},
	} {
		t.Run(tc.topic[:min(len(tc.topic), 20)], func(t *testing.T) {
			_, err := New(Options{Brokers: []string{"127.0.0.1:9092"}, Topic: tc.topic})
			cfg := DefaultSinkConfig()
			cfg.Topic = tc.topic
			verr := cfg.Validate()
			for _, err := range []error{err, verr} {
				if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
					t.Errorf("error %v, want %q", err, tc.want)
				}
			}
		})
	}
}

// batch_timeout: 0 by default (a write's messages leave at once; kafka-go
// would take 0 for its own default, a second), negative refused.
func TestBatchTimeout(t *testing.T) {
	cfg := DefaultSinkConfig()
	if cfg.BatchTimeout != 0 || cfg.Validate() != nil {
		t.Fatalf("default batch_timeout %s (%v), want 0", cfg.BatchTimeout, cfg.Validate())
	}
	s, err := New(Options{Brokers: []string{"127.0.0.1:9092"}, Topic: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if s.w.BatchTimeout <= 0 || s.w.BatchTimeout > time.Microsecond {
		t.Errorf("the writer waits %s for a batch to fill, want a nanosecond", s.w.BatchTimeout)
	}
	cfg.BatchTimeout = -time.Millisecond
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "batch_timeout") {
		t.Errorf("negative batch_timeout: %v", err)
	}
}
