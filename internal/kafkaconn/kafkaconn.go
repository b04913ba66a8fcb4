// Package kafkaconn is how tracecast's Kafka clients (the kafka source and
// sink, publish, subscribe) reach a broker that requires TLS or SASL: the
// `tls` and `sasl` options of pipeline files and the commands' flags, turned
// into kafka-go's Dialer and Transport, and a first connection (Check) that
// tells a wrong password or an untrusted certificate, which no retry fixes,
// from a broker that is not up yet.
//
// Passwords are never written in a pipeline file: a `sasl` block names the
// environment variable or the file that holds the password.
package kafkaconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// TLS are the `tls` options of a kafka component. A `tls` block, even empty
// (`tls: {}`), turns TLS on, trusting the system's certificate authorities
// unless ca is given.
type TLS struct {
	// CA is a PEM file of the certificate authorities that sign the
	// brokers' certificates (default: the system's).
	CA string `yaml:"ca,omitempty"`
	// Cert and Key are PEM files of a client certificate and its private
	// key, for brokers that authenticate clients by certificate (mutual
	// TLS). Both or neither.
	Cert string `yaml:"cert,omitempty"`
	Key  string `yaml:"key,omitempty"`
	// ServerName is the name the brokers' certificates must carry
	// (default: the host of each broker's address).
	ServerName string `yaml:"server_name,omitempty"`
	// InsecureSkipVerify accepts any certificate from the brokers, which
	// lets anyone on the path read and change the messages: for tests
	// only. Off by default.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify,omitempty"`
}

// Check checks the options without reading the files.
func (t *TLS) Check() error {
	if t == nil {
		return nil
	}
	if (t.Cert == "") != (t.Key == "") {
		return errors.New("tls: cert and key go together (a client certificate and its private key)")
	}
	return nil
}

// Config reads the files and returns the TLS configuration (nil for a nil
// t: no TLS).
func (t *TLS) Config() (*tls.Config, error) {
	if t == nil {
		return nil, nil
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fmt.Errorf("tls: ca: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls: ca %s: no PEM certificate in the file", t.CA)
		}
	}
	if t.Cert != "" {
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("tls: cert %s, key %s: %w", t.Cert, t.Key, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// SASL mechanisms.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// SASL are the `sasl` options of a kafka component. The password comes
// from an environment variable (password_env) or a file (password_file,
// its trailing newline ignored), never from the pipeline file.
type SASL struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	Mechanism string `yaml:"mechanism"`
	User      string `yaml:"user"`
	// PasswordEnv names the environment variable holding the password.
	PasswordEnv string `yaml:"password_env,omitempty"`
	// PasswordFile is a file holding the password.
	PasswordFile string `yaml:"password_file,omitempty"`
}

// Check checks the options without reading the password.
func (s *SASL) Check() error {
	if s == nil {
		return nil
	}
	var errs []error
	switch strings.ToUpper(s.Mechanism) {
	case Plain, ScramSHA256, ScramSHA512:
	case "":
		errs = append(errs, errors.New("sasl: mechanism is required (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)"))
	default:
		errs = append(errs, fmt.Errorf("sasl: mechanism %q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", s.Mechanism))
	}
	if s.User == "" {
		errs = append(errs, errors.New("sasl: user is required"))
	}
	if (s.PasswordEnv == "") == (s.PasswordFile == "") {
		errs = append(errs, errors.New("sasl: give the password through password_env (an environment variable) or password_file, one of them (never in the pipeline file)"))
	}
	return errors.Join(errs...)
}

// Password reads the password from its environment variable or file.
func (s *SASL) Password() (string, error) {
	if s.PasswordEnv != "" {
		p, ok := os.LookupEnv(s.PasswordEnv)
		if !ok || p == "" {
			return "", fmt.Errorf("sasl: password_env: the environment variable %s is not set", s.PasswordEnv)
		}
		return p, nil
	}
	b, err := os.ReadFile(s.PasswordFile)
	if err != nil {
		return "", fmt.Errorf("sasl: password_file: %w", err)
	}
	p := strings.TrimRight(string(b), "\r\n")
	if p == "" {
		return "", fmt.Errorf("sasl: password_file %s is empty", s.PasswordFile)
	}
	return p, nil
}

// Load reads the password and returns kafka-go's mechanism (nil for a nil
// s: no SASL).
func (s *SASL) Load() (sasl.Mechanism, error) {
	if s == nil {
		return nil, nil
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	pass, err := s.Password()
	if err != nil {
		return nil, err
	}
	switch strings.ToUpper(s.Mechanism) {
	case Plain:
		return plain.Mechanism{Username: s.User, Password: pass}, nil
	case ScramSHA256:
		return scram.Mechanism(scram.SHA256, s.User, pass)
	default:
		return scram.Mechanism(scram.SHA512, s.User, pass)
	}
}

// Client is how a client connects: TLS (nil: plaintext) and SASL (nil:
// none), as kafka-go takes them.
type Client struct {
	TLS  *tls.Config
	SASL sasl.Mechanism
	// User is the SASL user, for messages.
	User string
}

// Load reads the files and the password of the tls and sasl options
// (either may be nil).
func Load(t *TLS, s *SASL) (Client, error) {
	tc, err := t.Config()
	if err != nil {
		return Client{}, err
	}
	m, err := s.Load()
	if err != nil {
		return Client{}, err
	}
	c := Client{TLS: tc, SASL: m}
	if s != nil {
		c.User = s.User
	}
	return c, nil
}

// Dialer returns a kafka-go dialer (for readers, consumer groups and
// connections) with the client's TLS and SASL; the rest as kafka-go's
// default dialer.
func (c Client) Dialer() *kafkago.Dialer {
	return &kafkago.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: c.TLS, SASLMechanism: c.SASL}
}

// Transport returns a kafka-go transport (for writers) with the client's
// TLS and SASL. Its owner closes its idle connections when done.
func (c Client) Transport() *kafkago.Transport {
	return &kafkago.Transport{TLS: c.TLS, SASL: c.SASL}
}

// Check connects to the first broker of brokers that accepts a TCP
// connection and talks to it as the clients will: TLS handshake, SASL
// authentication, a metadata request. It returns an error when the broker
// refused them (a wrong user or password, an untrusted certificate, a
// broker that requires TLS or SASL the client does not use): retrying
// cannot fix these, so a client should stop with the error rather than
// retry for ever. A broker that cannot be reached, or any other failure,
// is left to the clients' own retries: Check returns nil.
func (c Client) Check(ctx context.Context, brokers []string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for _, addr := range brokers {
		nc, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", addr)
		if err != nil {
			continue
		}
		nc.Close()
		conn, err := c.Dialer().DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			_, err = conn.Brokers()
			conn.Close()
		}
		if err == nil || ctx.Err() != nil {
			return nil
		}
		return c.explain(addr, err)
	}
	return nil
}

// explain returns the error of a refused connection to addr with what it
// means, or nil when err is not one a retry cannot fix.
func (c Client) explain(addr string, err error) error {
	closed := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.EPIPE)
	var (
		verr *tls.CertificateVerificationError
		herr tls.RecordHeaderError
		aerr tls.AlertError
		uerr x509.UnknownAuthorityError
		nerr x509.HostnameError
		cerr x509.CertificateInvalidError
	)
	tlsErr := errors.As(err, &verr) || errors.As(err, &herr) || errors.As(err, &aerr) || errors.As(err, &uerr) ||
		errors.As(err, &nerr) || errors.As(err, &cerr) || strings.Contains(err.Error(), "tls: ")
	saslErr := errors.Is(err, kafkago.SASLAuthenticationFailed) || errors.Is(err, kafkago.UnsupportedSASLMechanism) ||
		errors.Is(err, kafkago.IllegalSASLState) || strings.Contains(err.Error(), "SASL")
	switch {
	case c.TLS != nil && tlsErr:
		return fmt.Errorf("kafka %s: TLS handshake failed (check the CA, the client certificate and the server name): %w", addr, err)
	case c.SASL != nil && (saslErr || closed):
		hint := ""
		if c.TLS == nil {
			hint = " (or the broker requires TLS)"
		}
		as := ""
		if c.User != "" {
			as = fmt.Sprintf(" as %q", c.User)
		}
		return fmt.Errorf("kafka %s: SASL authentication %s%s failed: wrong user or password, or a mechanism the broker does not accept for this user%s: %w",
			addr, c.SASL.Name(), as, hint, err)
	case closed || tlsErr:
		var need []string
		if c.TLS == nil {
			need = append(need, "TLS (tls options, --tls-* flags)")
		}
		if c.SASL == nil {
			need = append(need, "SASL (sasl options, --sasl-* flags)")
		}
		if len(need) == 0 {
			return nil
		}
		return fmt.Errorf("kafka %s: the broker closed the connection: does it require %s? %w", addr, strings.Join(need, " or "), err)
	}
	return nil
}

// Transient tells an error a later attempt may not have: the broker
// unreachable or closing connections, or a Kafka error marked temporary
// (no leader yet, not enough replicas). A refused authentication, an
// unknown topic kept so, or a message too large are not.
func Transient(err error) bool {
	var we kafkago.WriteErrors
	if errors.As(err, &we) {
		for _, e := range we {
			if e != nil && !Transient(e) {
				return false
			}
		}
		return true
	}
	var ke kafkago.Error
	if errors.As(err, &ke) {
		return ke.Temporary()
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
