package kafkaconn

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast/internal/kafkatest"
)

func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  *TLS
		sasl *SASL
		want string // "" for no error
	}{
		{name: "nothing"},
		{name: "tls: {}", tls: &TLS{}},
		{name: "cert without key", tls: &TLS{Cert: "c.pem"}, want: "tls: cert and key go together"},
		{name: "key without cert", tls: &TLS{Key: "k.pem"}, want: "tls: cert and key go together"},
		{name: "SCRAM", sasl: &SASL{Mechanism: "SCRAM-SHA-256", User: "u", PasswordEnv: "P"}},
		{name: "mechanism in lower case", sasl: &SASL{Mechanism: "scram-sha-512", User: "u", PasswordFile: "p"}},
		{name: "no mechanism", sasl: &SASL{User: "u", PasswordEnv: "P"}, want: "sasl: mechanism is required"},
		{name: "unknown mechanism", sasl: &SASL{Mechanism: "GSSAPI", User: "u", PasswordEnv: "P"}, want: `sasl: mechanism "GSSAPI" is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`},
		{name: "no user", sasl: &SASL{Mechanism: "PLAIN", PasswordEnv: "P"}, want: "sasl: user is required"},
		{name: "no password source", sasl: &SASL{Mechanism: "PLAIN", User: "u"}, want: "sasl: give the password through password_env"},
		{name: "two password sources", sasl: &SASL{Mechanism: "PLAIN", User: "u", PasswordEnv: "P", PasswordFile: "p"}, want: "one of them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.tls.Check()
			if err == nil {
				err = tc.sasl.Check()
			}
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TRACECAST_TEST_PW", "s3cret")
	t.Setenv("TRACECAST_TEST_EMPTY", "")
	for _, tc := range []struct {
		name string
		tls  *TLS
		sasl *SASL
		want string
	}{
		{name: "password from the environment", sasl: &SASL{Mechanism: "PLAIN", User: "u", PasswordEnv: "TRACECAST_TEST_PW"}},
		{name: "password from a file, newline dropped", sasl: &SASL{Mechanism: "SCRAM-SHA-256", User: "u", PasswordFile: pw}},
		{name: "unset variable", sasl: &SASL{Mechanism: "PLAIN", User: "u", PasswordEnv: "TRACECAST_TEST_UNSET"},
			want: "sasl: password_env: the environment variable TRACECAST_TEST_UNSET is not set"},
		{name: "empty variable", sasl: &SASL{Mechanism: "PLAIN", User: "u", PasswordEnv: "TRACECAST_TEST_EMPTY"},
			want: "TRACECAST_TEST_EMPTY is not set"},
		{name: "missing file", sasl: &SASL{Mechanism: "PLAIN", User: "u", PasswordFile: filepath.Join(dir, "none")}, want: "sasl: password_file: open"},
		{name: "empty file", sasl: &SASL{Mechanism: "PLAIN", User: "u", PasswordFile: empty}, want: "is empty"},
		{name: "CA not PEM", tls: &TLS{CA: notPEM}, want: "no PEM certificate in the file"},
		{name: "missing CA", tls: &TLS{CA: filepath.Join(dir, "none.pem")}, want: "tls: ca: open"},
		{name: "missing client cert", tls: &TLS{Cert: filepath.Join(dir, "c.pem"), Key: filepath.Join(dir, "k.pem")}, want: "tls: cert "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.tls, tc.sasl)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.SASL == nil || c.User != "u" {
				t.Errorf("client %+v", c)
			}
			if p, _ := tc.sasl.Password(); p != "s3cret" {
				t.Errorf("password %q", p)
			}
		})
	}
}

// TestSecureBroker connects to brokers that require TLS, a client
// certificate or SASL (kfake), writes through Transport and reads back
// through Dialer; refused connections fail Check with what went wrong.
func TestSecureBroker(t *testing.T) {
	users := map[string]map[string]string{"PLAIN": {"alice": "pw-plain"}, "SCRAM-SHA-256": {"bob": "pw-256"}, "SCRAM-SHA-512": {"carol": "pw-512"}}
	tlsAddr, certs := kafkatest.StartSecure(t, kafkatest.Secure{TLS: true}, 1, "t")
	mtlsAddr, mcerts := kafkatest.StartSecure(t, kafkatest.Secure{TLS: true, ClientCert: true}, 1, "t")
	saslAddr, _ := kafkatest.StartSecure(t, kafkatest.Secure{Users: users}, 1, "t")
	bothAddr, bothCerts := kafkatest.StartSecure(t, kafkatest.Secure{TLS: true, ClientCert: true, Users: users}, 1, "t")
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close()

	t.Setenv("PW_PLAIN", "pw-plain")
	t.Setenv("PW_256", "pw-256")
	t.Setenv("PW_512", "pw-512")
	t.Setenv("PW_WRONG", "wrong")
	ca := &TLS{CA: certs.CA}
	mutual := &TLS{CA: mcerts.CA, Cert: mcerts.ClientCert, Key: mcerts.ClientKey}
	for _, tc := range []struct {
		name string
		addr string
		tls  *TLS
		sasl *SASL
		want string // Check's error; "" : connects, writes and reads
	}{
		{name: "TLS", addr: tlsAddr, tls: ca},
		{name: "TLS, server name given", addr: tlsAddr, tls: &TLS{CA: certs.CA, ServerName: "localhost"}},
		{name: "TLS, wrong server name", addr: tlsAddr, tls: &TLS{CA: certs.CA, ServerName: "kafka.example.org"}, want: "TLS handshake failed"},
		{name: "TLS, untrusted CA", addr: tlsAddr, tls: &TLS{CA: certs.OtherCA}, want: "TLS handshake failed"},
		{name: "TLS, untrusted CA, verification skipped", addr: tlsAddr, tls: &TLS{CA: certs.OtherCA, InsecureSkipVerify: true}},
		{name: "TLS broker, plaintext client", addr: tlsAddr, want: "the broker closed the connection: does it require TLS"},
		{name: "mutual TLS", addr: mtlsAddr, tls: mutual},
		{name: "mutual TLS, no client certificate", addr: mtlsAddr, tls: &TLS{CA: mcerts.CA}, want: "TLS handshake failed"},
		{name: "SASL PLAIN", addr: saslAddr, sasl: &SASL{Mechanism: "PLAIN", User: "alice", PasswordEnv: "PW_PLAIN"}},
		{name: "SASL SCRAM-SHA-256", addr: saslAddr, sasl: &SASL{Mechanism: "SCRAM-SHA-256", User: "bob", PasswordEnv: "PW_256"}},
		{name: "SASL SCRAM-SHA-512", addr: saslAddr, sasl: &SASL{Mechanism: "SCRAM-SHA-512", User: "carol", PasswordEnv: "PW_512"}},
		{name: "SASL PLAIN, wrong password", addr: saslAddr, sasl: &SASL{Mechanism: "PLAIN", User: "alice", PasswordEnv: "PW_WRONG"},
			want: `SASL authentication PLAIN as "alice" failed: wrong user or password`},
		{name: "SASL SCRAM-SHA-256, wrong password", addr: saslAddr, sasl: &SASL{Mechanism: "SCRAM-SHA-256", User: "bob", PasswordEnv: "PW_WRONG"},
			want: `SASL authentication SCRAM-SHA-256 as "bob" failed: wrong user or password`},
		{name: "SASL SCRAM-SHA-512, unknown user", addr: saslAddr, sasl: &SASL{Mechanism: "SCRAM-SHA-512", User: "mallory", PasswordEnv: "PW_512"},
			want: `SASL authentication SCRAM-SHA-512 as "mallory" failed`},
		{name: "SASL, mechanism not enabled for the user", addr: saslAddr, sasl: &SASL{Mechanism: "SCRAM-SHA-256", User: "carol", PasswordEnv: "PW_512"},
			want: "SASL authentication SCRAM-SHA-256"},
		{name: "SASL broker, no SASL", addr: saslAddr, want: "the broker closed the connection: does it require TLS (tls options, --tls-* flags) or SASL"},
		{name: "mutual TLS and SCRAM-SHA-512", addr: bothAddr, tls: &TLS{CA: bothCerts.CA, Cert: bothCerts.ClientCert, Key: bothCerts.ClientKey},
			sasl: &SASL{Mechanism: "SCRAM-SHA-512", User: "carol", PasswordEnv: "PW_512"}},
		{name: "mutual TLS, SCRAM-SHA-512 wrong password", addr: bothAddr, tls: &TLS{CA: bothCerts.CA, Cert: bothCerts.ClientCert, Key: bothCerts.ClientKey},
			sasl: &SASL{Mechanism: "SCRAM-SHA-512", User: "carol", PasswordEnv: "PW_WRONG"}, want: `SASL authentication SCRAM-SHA-512 as "carol" failed`},
		{name: "TLS and SASL broker, TLS only", addr: bothAddr, tls: &TLS{CA: bothCerts.CA, Cert: bothCerts.ClientCert, Key: bothCerts.ClientKey},
			want: "does it require SASL (sasl options, --sasl-* flags)?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.tls, tc.sasl)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			err = c.Check(ctx, []string{down, tc.addr})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Check: %v, want %q", err, tc.want)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tr := c.Transport()
			defer tr.CloseIdleConnections()
			w := &kafkago.Writer{Addr: kafkago.TCP(tc.addr), Topic: "t", Transport: tr, BatchTimeout: time.Millisecond}
			value := []byte(tc.name)
			if err := w.WriteMessages(ctx, kafkago.Message{Value: value}); err != nil {
				t.Fatal(err)
			}
			w.Close()
			r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{tc.addr}, Topic: "t", Dialer: c.Dialer(), MaxWait: 100 * time.Millisecond})
			defer r.Close()
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if string(m.Value) == tc.name {
					break
				}
			}
		})
	}
	t.Run("nothing reachable", func(t *testing.T) {
		if err := (Client{}).Check(t.Context(), []string{down}); err != nil {
			t.Errorf("Check: %v, want nil (the clients retry)", err)
		}
	})
}
