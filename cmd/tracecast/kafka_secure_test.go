package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/live"
)

// TestKafkaSecureCommands drives publish, run live-kafka and subscribe
// against a broker that requires mutual TLS and SCRAM-SHA-512 (kfake, in
// this process): one --brokers (or TRACECAST_BROKERS) and one set of
// --tls-*/--sasl-* flags reach every kafka component of the pipeline, the
// password comes from TRACECAST_SASL_PASSWORD, and a wrong one fails with
// a message that says so.
func TestKafkaSecureCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and a broker (-short; make test runs it on a line of its own)")
	}
	addr, certs := kafkatest.StartSecure(t, kafkatest.Secure{TLS: true, ClientCert: true,
		Users: map[string]map[string]string{"SCRAM-SHA-512": {"tracecast": "s3cret"}}},
		4, "tracecast.traces", "tracecast.predictions", "tracecast.forecasts", "tracecast.alerts")
	dir := t.TempDir()
	secure := []string{"--tls-ca", certs.CA, "--tls-cert", certs.ClientCert, "--tls-key", certs.ClientKey,
		"--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "tracecast"}
	env := func(password string) []string {
		return append(os.Environ(), "TRACECAST_BROKERS="+addr, live.PasswordEnv+"="+password)
	}
	cli := func(password string, args ...string) result {
		t.Helper()
		c := exec.Command(binary, args...)
		c.Env = env(password)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{out.String(), errb.String(), code}
	}

	// A wrong password: exit 1 with the reason, at once.
	demo := filepath.Join("..", "..", "pipelines", "testdata", "starpu-cholesky-2cpu.trace.gz")
	r := cli("wrong", append([]string{"publish", demo, "--topic", "tracecast.traces"}, secure...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "SASL authentication SCRAM-SHA-512 failed: wrong user or password") {
		t.Fatalf("publish with a wrong password: exit %d\n%s", r.code, r.stderr)
	}
	r = cli("wrong", append([]string{"run", "live-kafka", "--no-progress"}, secure...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "SASL authentication SCRAM-SHA-512 failed: wrong user or password") {
		t.Fatalf("run with a wrong password: exit %d\n%s", r.code, r.stderr)
	}
	// TLS asked for the broker live starts: a usage error.
	if r := cli("", "live", "--brokers", "", "--tls"); r.code != 2 || !strings.Contains(r.stderr, "needs --brokers") {
		t.Fatalf("live --tls without brokers: exit %d\n%s", r.code, r.stderr)
	}

	// The right one: publish (brokers from TRACECAST_BROKERS), the live
	// pipeline (--brokers), and the predictions on the output topic.
	if r := cli("s3cret", append([]string{"publish", demo, "--topic", "tracecast.traces"}, secure...)...); r.code != 0 {
		t.Fatalf("publish: exit %d\n%s", r.code, r.stderr)
	}
	logf, err := os.Create(filepath.Join(dir, "run.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	p := exec.Command(binary, append([]string{"--log-format", "json", "run", "live-kafka", "--no-progress", "--brokers", addr,
		"--set", "traces.session_timeout=2s"}, secure...)...)
	p.Env, p.Stdout, p.Stderr = env("s3cret"), logf, logf
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		p.Process.Signal(syscall.SIGTERM)
		p.Wait()
	}()
	t.Setenv(live.PasswordEnv, "s3cret")
	client, err := kafkaconn.Load(&kafkaconn.TLS{CA: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey},
		&kafkaconn.SASL{Mechanism: "SCRAM-SHA-512", User: "tracecast", PasswordEnv: live.PasswordEnv})
	if err != nil {
		t.Fatal(err)
	}
	// The demo trace gives 138 predictions (69 windows, 2 queries); the
	// sinks (seven, all set by the one --brokers) write them.
	got, _ := kafkatest.ReadRecordsWith(t, client.Dialer(), addr, "tracecast.predictions", "tracecast.prediction/1", 138, 60*time.Second)
	if len(got) != 138 {
		b, _ := os.ReadFile(logf.Name())
		t.Fatalf("%d predictions on the topic, want 138\n%s", len(got), b)
	}
	// subscribe, with the same flags, sees forecasts.
	r = cli("s3cret", append([]string{"subscribe", "--topic", "tracecast.forecasts", "--limit", "1"}, secure...)...)
	var rec struct{ Schema string }
	if r.code != 0 || json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &rec) != nil || !strings.HasPrefix(rec.Schema, "tracecast.") {
		t.Fatalf("subscribe: exit %d, %q\n%s", r.code, r.stdout, r.stderr)
	}
}
