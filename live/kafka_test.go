package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/pipelines"
)

// TestKafkaFlags: the Kafka flags, their environment variables (a flag on
// the command line wins) and their checks.
func TestKafkaFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		brokers []string
		tls     *kafkaconn.TLS
		sasl    *kafkaconn.SASL
		wantErr string
	}{
		{name: "defaults", brokers: []string{"127.0.0.1:9092"}},
		{name: "flag", args: []string{"--brokers", "k1:9093,k2:9093"}, brokers: []string{"k1:9093", "k2:9093"}},
		{name: "environment", env: map[string]string{"TRACECAST_BROKERS": "k1:9093, k2:9093"}, brokers: []string{"k1:9093", "k2:9093"}},
		{name: "the flag wins over the environment", args: []string{"--brokers", "k3:9093"},
			env: map[string]string{"TRACECAST_BROKERS": "k1:9093"}, brokers: []string{"k3:9093"}},
		{name: "--tls: the system's CAs", args: []string{"--tls"}, brokers: []string{"127.0.0.1:9092"}, tls: &kafkaconn.TLS{}},
		{name: "TLS from the environment", brokers: []string{"127.0.0.1:9092"},
			env: map[string]string{"TRACECAST_TLS_CA": "ca.pem", "TRACECAST_TLS_CERT": "c.pem", "TRACECAST_TLS_KEY": "k.pem", "TRACECAST_TLS_SERVER_NAME": "kafka"},
			tls: &kafkaconn.TLS{CA: "ca.pem", Cert: "c.pem", Key: "k.pem", ServerName: "kafka"}},
		{name: "insecure", args: []string{"--tls-insecure-skip-verify"}, brokers: []string{"127.0.0.1:9092"}, tls: &kafkaconn.TLS{InsecureSkipVerify: true}},
		{name: "SASL: password from " + PasswordEnv, args: []string{"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "u"}, brokers: []string{"127.0.0.1:9092"},
			sasl: &kafkaconn.SASL{Mechanism: "SCRAM-SHA-256", User: "u", PasswordEnv: PasswordEnv}},
		{name: "SASL from the environment, password file", brokers: []string{"127.0.0.1:9092"},
			env:  map[string]string{"TRACECAST_SASL_MECHANISM": "PLAIN", "TRACECAST_SASL_USER": "u", "TRACECAST_SASL_PASSWORD_FILE": "pw"},
			sasl: &kafkaconn.SASL{Mechanism: "PLAIN", User: "u", PasswordFile: "pw"}},
		{name: "cert without key", args: []string{"--tls-cert", "c.pem"}, wantErr: `tls-cert "c.pem": --tls-cert and --tls-key go together`},
		{name: "user without mechanism", args: []string{"--sasl-user", "u"}, wantErr: `sasl-mechanism: required with --sasl-user`},
		{name: "mechanism without user", args: []string{"--sasl-mechanism", "PLAIN"}, wantErr: `sasl-user: required with --sasl-mechanism`},
		{name: "unknown mechanism", args: []string{"--sasl-mechanism", "GSSAPI", "--sasl-user", "u"}, wantErr: `sasl-mechanism "GSSAPI": not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`},
		{name: "bad boolean in the environment", env: map[string]string{"TRACECAST_TLS": "maybe"}, wantErr: `tls "maybe": from TRACECAST_TLS: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range []string{"brokers", "tls", "tls-ca", "tls-cert", "tls-key", "tls-server-name", "tls-insecure-skip-verify", "sasl-mechanism", "sasl-user", "sasl-password-file"} {
				t.Setenv(EnvName(name), tc.env[EnvName(name)])
			}
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			k := AddKafkaFlags(fs, "Kafka brokers", "127.0.0.1:9092")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := k.Resolve()
			if tc.wantErr != "" {
				var oe *OptionError
				if !errors.As(err, &oe) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve: %v, want an *OptionError %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(k.Brokers, tc.brokers) || fmt.Sprint(k.TLS) != fmt.Sprint(tc.tls) || fmt.Sprint(k.SASL) != fmt.Sprint(tc.sasl) {
				t.Errorf("brokers %q tls %+v sasl %+v, want %q %+v %+v", k.Brokers, k.TLS, k.SASL, tc.brokers, tc.tls, tc.sasl)
			}
			if k.Secure() != (tc.tls != nil || tc.sasl != nil) {
				t.Errorf("Secure() = %v", k.Secure())
			}
		})
	}
}

// TestKafkaApply: --brokers, --tls-* and --sasl-* reach every kafka source
// and sink of live-kafka (a source and seven sinks), and nothing else.
func TestKafkaApply(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  string // TRACECAST_BROKERS
		// want: every kafka component's brokers; tls and sasl set or not.
		want      []string
		tls, sasl bool
	}{
		{name: "nothing given: the file's", want: []string{"127.0.0.1:9092"}},
		{name: "--brokers", args: []string{"--brokers", "k1:9093,k2:9093"}, want: []string{"k1:9093", "k2:9093"}},
		{name: "TRACECAST_BROKERS", env: "k1:9093", want: []string{"k1:9093"}},
		{name: "TLS and SASL", args: []string{"--brokers", "k:9093", "--tls-ca", "ca.pem", "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "u"},
			want: []string{"k:9093"}, tls: true, sasl: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TRACECAST_BROKERS", tc.env)
			cfg, err := pipelines.LoadNamed("live-kafka")
			if err != nil {
				t.Fatal(err)
			}
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			k := AddKafkaFlags(fs, "brokers")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := k.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, c := range cfg.Components() {
				var brokers []string
				var tl kafkaconn.TLS
				var sa kafkaconn.SASL
				hasB, err1 := c.DecodeOption("brokers", &brokers)
				hasT, err2 := c.DecodeOption("tls", &tl)
				hasS, err3 := c.DecodeOption("sasl", &sa)
				if err := errors.Join(err1, err2, err3); err != nil {
					t.Fatal(err)
				}
				if c.Type != "kafka" {
					if hasB || hasT || hasS {
						t.Errorf("%s (%s) was given Kafka options", c.Path(), c.Type)
					}
					continue
				}
				n++
				if !slices.Equal(brokers, tc.want) || hasT != tc.tls || hasS != tc.sasl {
					t.Errorf("%s: brokers %v, tls %v, sasl %v", c.Path(), brokers, hasT, hasS)
				}
				if tc.tls && (tl.CA != "ca.pem" || sa.PasswordEnv != PasswordEnv || sa.User != "u") {
					t.Errorf("%s: tls %+v, sasl %+v", c.Path(), tl, sa)
				}
			}
			if n != 8 {
				t.Errorf("%d kafka components, want 8", n)
			}
		})
	}
}

// TestSecurePublishSubscribe publishes a trace and reads it back, in both
// subscriber modes, through a broker that requires TLS and SCRAM-SHA-256,
// with the commands' flags and environment; a wrong password fails Publish
// and Subscribe at once with what went wrong.
func TestSecurePublishSubscribe(t *testing.T) {
	addr, certs := kafkatest.StartSecure(t, kafkatest.Secure{TLS: true,
		Users: map[string]map[string]string{"SCRAM-SHA-256": {"sched": "right"}}}, 2, "traces")
	trace := filepath.Join(t.TempDir(), "run.trace")
	if err := os.WriteFile(trace, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TRACECAST_BROKERS", addr)
	t.Setenv("TRACECAST_TLS_CA", certs.CA)
	connect := func(t *testing.T, password string, args ...string) *Kafka {
		t.Setenv(PasswordEnv, password)
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		k := AddKafkaFlags(fs, "brokers", "127.0.0.1:9092")
		if err := fs.Parse(append([]string{"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "sched"}, args...)); err != nil {
			t.Fatal(err)
		}
		return k
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name, password, want string
	}{
		{"right password", "right", ""},
		{"wrong password", "wrong", "kafka " + addr + ": SASL authentication SCRAM-SHA-256 failed: wrong user or password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := connect(t, tc.password)
			po := PublishOptions{Topic: "traces", Logger: zerolog.Nop()}
			so := SubscribeOptions{Topic: "traces", IdleExit: time.Second, Logger: zerolog.Nop()}
			var err error
			if po.Brokers, po.TLS, po.SASL, err = k.Connect(); err != nil {
				t.Fatal(err)
			}
			so.Brokers, so.TLS, so.SASL = po.Brokers, po.TLS, po.SASL
			_, perr := Publish(ctx, trace, po)
			var got []string
			read := func(recs [][]byte) error {
				for _, r := range recs {
					got = append(got, string(r))
				}
				return nil
			}
			serr := Subscribe(ctx, so, read)
			gso := so
			gso.Group, gso.FromStart, gso.IdleExit = "g", true, 2*time.Second
			gerr := Subscribe(ctx, gso, read)
			if tc.want != "" {
				for _, err := range []error{perr, serr, gerr} {
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("error %v, want %q", err, tc.want)
					}
				}
				return
			}
			if err := errors.Join(perr, serr, gerr); err != nil {
				t.Fatal(err)
			}
			// The lines and the end marker, read twice: every partition,
			// then through the group.
			if want := `["a\nb\nc\n" "" "a\nb\nc\n" ""]`; fmt.Sprintf("%q", got) != want {
				t.Errorf("read %q, want %s", got, want)
			}
		})
	}
	t.Run("missing password", func(t *testing.T) {
		k := connect(t, "")
		if _, _, _, err := k.Connect(); err == nil || !strings.Contains(err.Error(), "the environment variable "+PasswordEnv+" is not set") {
			t.Errorf("Connect: %v", err)
		}
	})
}
