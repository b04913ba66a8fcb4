package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/internal/kafkatest"
)

// TestSecureSource reads a topic of a broker that requires mutual TLS and
// SCRAM-SHA-256 (kfake) with a consumer group that commits; a wrong
// password, a missing client certificate or no TLS at all stop Run at once
// with what went wrong, instead of retrying for ever.
func TestSecureSource(t *testing.T) {
	addr, certs := kafkatest.StartSecure(t, kafkatest.Secure{TLS: true, ClientCert: true,
		Users: map[string]map[string]string{"SCRAM-SHA-256": {"tracecast": "right"}}}, 2, "lines")
	t.Setenv("KAFKA_PW", "right")
	t.Setenv("KAFKA_WRONG_PW", "wrong")
	mutual := &kafkaconn.TLS{CA: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}
	scram := func(env string) *kafkaconn.SASL {
		return &kafkaconn.SASL{Mechanism: "SCRAM-SHA-256", User: "tracecast", PasswordEnv: env}
	}
	good, err := kafkaconn.Load(mutual, scram("KAFKA_PW"))
	if err != nil {
		t.Fatal(err)
	}
	tr := good.Transport()
	defer tr.CloseIdleConnections()
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "lines", Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond, Transport: tr, RequiredAcks: kafkago.RequireAll}
	defer w.Close()
	if err := w.WriteMessages(t.Context(),
		msg("A", "%EventDef PajeX 0\n%EndEventDef\n1 a", HeaderSeq, "0"),
		msg("B", "%EventDef\n1 x", HeaderSeq, "0"),
		msg("A", "", HeaderEnd, "1"),
		msg("B", "", HeaderEnd, "1"),
	); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		tls  *kafkaconn.TLS
		sasl *kafkaconn.SASL
		want string // Run's error; "": reads the 5 lines and commits
	}{
		{name: "mutual TLS and SCRAM-SHA-256", tls: mutual, sasl: scram("KAFKA_PW")},
		{name: "wrong password", tls: mutual, sasl: scram("KAFKA_WRONG_PW"),
			want: "kafka source: kafka " + addr + ": SASL authentication SCRAM-SHA-256 failed: wrong user or password"},
		{name: "no client certificate", tls: &kafkaconn.TLS{CA: certs.CA}, sasl: scram("KAFKA_PW"), want: "TLS handshake failed"},
		{name: "plaintext", want: "the broker closed the connection: does it require TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kafkaconn.Load(tc.tls, tc.sasl)
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(Options{Brokers: []string{addr}, Topic: "lines", Group: "g-" + strings.ReplaceAll(tc.name, " ", "-"),
				CommitInterval: 50 * time.Millisecond, MaxWait: 50 * time.Millisecond, SessionTimeout: 2 * time.Second,
				StopCommitTimeout: time.Second, TLS: c.TLS, SASL: c.SASL})
			if err != nil {
				t.Fatal(err)
			}
			col := &collector{release: true, lines: map[string][]string{}, ends: map[string]int{}, reasons: map[string]string{}}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx, col.emit) }()
			if tc.want != "" {
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("Run: %v, want %q", err, tc.want)
					}
					t.Log(err)
				case <-time.After(10 * time.Second):
					t.Fatal("Run still retrying after 10 s, want an error")
				}
				return
			}
			for col.count() < 5 || s.Stats().Commits == 0 {
				if ctx.Err() != nil {
					t.Fatalf("timeout: %d lines of 5, stats %+v", col.count(), s.Stats())
				}
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if col.ends["A"] != 1 || col.ends["B"] != 1 || strings.Join(col.lines["B"], "|") != "%EventDef|1 x" {
				t.Errorf("lines %v, ends %v", col.lines, col.ends)
			}
		})
	}
}
