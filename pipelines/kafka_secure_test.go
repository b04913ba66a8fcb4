package pipelines

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracecast/tracecast/app/builtin"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/internal/kafkatest"
	kafkasink "github.com/tracecast/tracecast/sinks/kafka"
)

// TestSetKafka: one call reaches every kafka source and sink of a
// pipeline, and only them; the values decode into their options.
func TestSetKafka(t *testing.T) {
	custom := `version: 1
name: custom
sources:
  trace: {type: file, path: run.trace, parser: {type: paje}}
stages:
  idle: {type: predict, inputs: [trace], rules: starpu, window: 100}
sinks:
  out: {type: kafka, inputs: [idle], brokers: [file-broker:9092], topic: p}
  local: {type: jsonl, inputs: [idle], path: p.jsonl}
`
	tlsOpts := kafkaconn.TLS{CA: "/etc/kafka/ca.pem", Cert: "client.pem", Key: "client-key.pem"}
	saslOpts := kafkaconn.SASL{Mechanism: "SCRAM-SHA-512", User: "tracecast", PasswordEnv: "KAFKA_PASSWORD"}
	for _, tc := range []struct {
		name string
		load func() (*Config, error)
		want []string // paths of the kafka components
	}{
		{"live-kafka: a source and seven sinks", func() (*Config, error) { return LoadNamed("live-kafka") }, []string{"sources.traces",
			"sinks.predictions", "sinks.verdicts", "sinks.alerts", "sinks.forecasts", "sinks.outcomes", "sinks.episodes", "sinks.skills"}},
		{"replay-starpu: none", func() (*Config, error) { return LoadNamed("replay-starpu") }, nil},
		{"a file source and a kafka sink", func() (*Config, error) { return Parse([]byte(custom), "custom.yaml") }, []string{"sinks.out"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.load()
			if err != nil {
				t.Fatal(err)
			}
			var set []*Component
			for _, kv := range []struct {
				key string
				v   any
			}{{"brokers", []string{"k1:9093", "k2:9093"}}, {"tls", tlsOpts}, {"sasl", saslOpts}} {
				if set, err = cfg.SetKafka(kv.key, kv.v); err != nil {
					t.Fatal(err)
				}
			}
			var paths []string
			for _, c := range set {
				paths = append(paths, c.Path())
			}
			if !slices.Equal(paths, tc.want) {
				t.Fatalf("set %v, want %v", paths, tc.want)
			}
			p, err := makePlan(builtin.Registry(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range set {
				var brokers []string
				var tl *kafkaconn.TLS
				var sa *kafkaconn.SASL
				switch o := p.opts[c].(type) {
				case *kafkaingest.SourceConfig:
					brokers, tl, sa = o.Brokers, o.TLS, o.SASL
				case *kafkasink.SinkConfig:
					brokers, tl, sa = o.Brokers, o.TLS, o.SASL
				default:
					t.Fatalf("%s: options %T", c.Path(), o)
				}
				if !slices.Equal(brokers, []string{"k1:9093", "k2:9093"}) || tl == nil || *tl != tlsOpts || sa == nil || *sa != saslOpts {
					t.Errorf("%s: brokers %v, tls %+v, sasl %+v", c.Path(), brokers, tl, sa)
				}
			}
		})
	}
}

// TestKafkaOptionErrors: the tls and sasl options are checked with the
// pipeline; a password written in the file is refused.
func TestKafkaOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name, opts, want string
	}{
		{"password in the file", `sasl: {mechanism: PLAIN, user: u, password: hunter2}`,
			`sinks.out.sasl.password: unknown key "password" (known: mechanism, password_env, password_file, user)`},
		{"no password source", `sasl: {mechanism: PLAIN, user: u}`, "sasl: give the password through password_env"},
		{"unknown mechanism", `sasl: {mechanism: OAUTHBEARER, user: u, password_env: P}`, `sasl: mechanism "OAUTHBEARER" is not PLAIN`},
		{"cert without key", `tls: {cert: c.pem}`, "tls: cert and key go together"},
		{"unknown tls key", `tls: {ca_file: ca.pem}`, `sinks.out.tls.ca_file: unknown key "ca_file" (known: ca, cert, insecure_skip_verify, key, server_name)`},
		{"bad topic", `topic: "my topic"`, `topic "my topic": character ' ' at 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := "topic: p, "
			if strings.HasPrefix(tc.opts, "topic") {
				topic = ""
			}
			cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: e
sources:
  trace: {type: file, path: run.trace, parser: {type: paje}}
sinks:
  out: {type: kafka, inputs: [trace], %s%s}
`, topic, tc.opts), "e.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = Check(builtin.Registry(), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestLiveKafkaSecure runs the shipped live-kafka pipeline against a broker
// that requires mutual TLS and SCRAM-SHA-512 (kfake), set by SetKafka as
// the commands' flags do: the predictions on the output topic are the
// offline ones. With a wrong password the pipeline stops at once with an
// error that says so.
func TestLiveKafkaSecure(t *testing.T) {
	traces := map[string][]byte{"cholesky": gziptest.ReadFile(t, filepath.Join("..", DemoTracePath))}
	want, _ := offlinePredictions(t, traces)
	addr, certs := kafkatest.StartSecure(t, kafkatest.Secure{TLS: true, ClientCert: true,
		Users: map[string]map[string]string{"SCRAM-SHA-512": {"tracecast": "right"}}},
		4, "tracecast.traces", "tracecast.predictions", "tracecast.forecasts", "tracecast.alerts")
	t.Setenv("TEST_KAFKA_PW", "right")
	t.Setenv("TEST_KAFKA_WRONG_PW", "wrong")
	tlsOpts := &kafkaconn.TLS{CA: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}
	sasl := func(env string) *kafkaconn.SASL {
		return &kafkaconn.SASL{Mechanism: "SCRAM-SHA-512", User: "tracecast", PasswordEnv: env}
	}
	client, err := kafkaconn.Load(tlsOpts, sasl("TEST_KAFKA_PW"))
	if err != nil {
		t.Fatal(err)
	}
	tr := client.Transport()
	defer tr.CloseIdleConnections()
	publishTracesWith(t, tr, addr, "tracecast.traces", traces)

	for _, tc := range []struct {
		name, env, wantErr string
	}{
		{"right password", "TEST_KAFKA_PW", ""},
		{"wrong password", "TEST_KAFKA_WRONG_PW", "kafka source: kafka " + addr + ": SASL authentication SCRAM-SHA-512 failed: wrong user or password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := LoadNamed("live-kafka")
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range []struct {
				key string
				v   any
			}{{"brokers", []string{addr}}, {"tls", tlsOpts}, {"sasl", sasl(tc.env)}} {
				if _, err := cfg.SetKafka(kv.key, kv.v); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range cfg.Sources {
				c.SetOption("session_timeout", "2s")
			}
			if err := Check(builtin.Registry(), cfg); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- Run(ctx, cfg, RunOptions{}) }()
			if tc.wantErr != "" {
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("Run: %v, want %q", err, tc.wantErr)
					}
					t.Log(err)
				case <-time.After(20 * time.Second):
					t.Fatal("the pipeline still runs after 20 s, want a SASL error")
				}
				return
			}
			got, _ := kafkatest.ReadRecordsWith(t, client.Dialer(), addr, "tracecast.predictions", "tracecast.prediction/1", len(want), liveWait)
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			kafkatest.CompareRecords(t, got, want)
		})
	}
}
