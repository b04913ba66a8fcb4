package live

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/segmentio/kafka-go/sasl"
	"github.com/spf13/pflag"

	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/pipelines"
)

// PasswordEnv is the environment variable the commands read the SASL
// password from (unless --sasl-password-file is given). There is no
// password flag: a command line is visible to every user of the machine.
const PasswordEnv = "TRACECAST_SASL_PASSWORD"

// Kafka is how a command reaches Kafka, as other Kafka clients take it:
// the brokers, and TLS and SASL when asked. AddKafkaFlags registers the
// flags; a flag not given on the command line takes the value of its
// environment variable, TRACECAST_ and the flag's name in capitals with '_'
// for '-' (TRACECAST_BROKERS, TRACECAST_TLS_CA, TRACECAST_SASL_USER, ...).
type Kafka struct {
	// Brokers, TLS and SASL are the resolved settings (after Resolve):
	// TLS is nil unless --tls or a --tls-* flag is given, SASL nil unless
	// --sasl-mechanism or --sasl-user is.
	Brokers []string
	TLS     *kafkaconn.TLS
	SASL    *kafkaconn.SASL

	fs       *pflag.FlagSet
	names    []string
	useTLS   bool
	tls      kafkaconn.TLS
	sasl     kafkaconn.SASL
	resolved bool
}

// AddKafkaFlags registers the Kafka flags on fs: --brokers (described by
// brokersUsage, defaulting to defaultBrokers), --tls, --tls-ca,
// --tls-cert, --tls-key, --tls-server-name, --tls-insecure-skip-verify,
// --sasl-mechanism, --sasl-user and --sasl-password-file.
func AddKafkaFlags(fs *pflag.FlagSet, brokersUsage string, defaultBrokers ...string) *Kafka {
	k := &Kafka{fs: fs}
	env := func(name, usage string) string {
		k.names = append(k.names, name)
		return fmt.Sprintf("%s (env %s)", usage, EnvName(name))
	}
	fs.StringSliceVar(&k.Brokers, "brokers", defaultBrokers, env("brokers", brokersUsage))
	fs.BoolVar(&k.useTLS, "tls", false, env("tls", "connect to the brokers with TLS (implied by the --tls-* flags), trusting the system's CAs unless --tls-ca"))
	fs.StringVar(&k.tls.CA, "tls-ca", "", env("tls-ca", "PEM file of the CAs that sign the brokers' certificates"))
	fs.StringVar(&k.tls.Cert, "tls-cert", "", env("tls-cert", "PEM file of a client certificate, for brokers that require one (with --tls-key)"))
	fs.StringVar(&k.tls.Key, "tls-key", "", env("tls-key", "PEM file of the client certificate's private key"))
	fs.StringVar(&k.tls.ServerName, "tls-server-name", "", env("tls-server-name", "name the brokers' certificates must carry (default: the broker's host)"))
	fs.BoolVar(&k.tls.InsecureSkipVerify, "tls-insecure-skip-verify", false, env("tls-insecure-skip-verify", "accept any broker certificate (tests only: anyone on the path can read and change the messages)"))
	fs.StringVar(&k.sasl.Mechanism, "sasl-mechanism", "", env("sasl-mechanism", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; the password is read from "+PasswordEnv+" or --sasl-password-file"))
	fs.StringVar(&k.sasl.User, "sasl-user", "", env("sasl-user", "SASL user"))
	fs.StringVar(&k.sasl.PasswordFile, "sasl-password-file", "", env("sasl-password-file", "file holding the SASL password (default: the environment variable "+PasswordEnv+")"))
	return k
}

// EnvName is the environment variable of a Kafka flag: brokers ->
// TRACECAST_BROKERS.
func EnvName(flag string) string {
	return "TRACECAST_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// Resolve gives each flag not on the command line its environment
// variable's value, when set, and checks the result. A bad value is an
// *OptionError naming the flag (and the variable it came from). Resolve is
// done once; later calls return nil.
func (k *Kafka) Resolve() error {
	if k.resolved {
		return nil
	}
	for _, name := range k.names {
		v, ok := os.LookupEnv(EnvName(name))
		if !ok || v == "" || k.fs.Changed(name) {
			continue
		}
		if err := k.fs.Set(name, v); err != nil {
			return &OptionError{Option: name, Value: v, Err: fmt.Errorf("from %s: %w", EnvName(name), err)}
		}
	}
	var brokers []string
	for _, b := range k.Brokers {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	k.Brokers = brokers
	if k.useTLS || k.tls != (kafkaconn.TLS{}) {
		t := k.tls
		k.TLS = &t
		if err := k.TLS.Check(); err != nil {
			return &OptionError{Option: "tls-cert", Value: t.Cert, Err: errors.New("--tls-cert and --tls-key go together")}
		}
	}
	if k.sasl != (kafkaconn.SASL{}) {
		s := k.sasl
		if s.PasswordFile == "" {
			s.PasswordEnv = PasswordEnv
		}
		k.SASL = &s
		switch {
		case s.Mechanism == "":
			return &OptionError{Option: "sasl-mechanism", Err: errors.New("required with --sasl-user or --sasl-password-file: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")}
		case s.User == "":
			return &OptionError{Option: "sasl-user", Err: errors.New("required with --sasl-mechanism")}
		}
		if err := s.Check(); err != nil {
			return &OptionError{Option: "sasl-mechanism", Value: s.Mechanism, Err: errors.New("not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")}
		}
	}
	k.resolved = true
	return nil
}

// Secure reports whether TLS or SASL is asked for (after Resolve).
func (k *Kafka) Secure() bool { return k.TLS != nil || k.SASL != nil }

// Connect resolves the flags and returns the brokers with kafka-go's TLS
// configuration and SASL mechanism (nil when not asked for), reading the
// certificate files and the password: what PublishOptions and
// SubscribeOptions take.
func (k *Kafka) Connect() ([]string, *tls.Config, sasl.Mechanism, error) {
	if err := k.Resolve(); err != nil {
		return nil, nil, nil, err
	}
	c, err := kafkaconn.Load(k.TLS, k.SASL)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("kafka: %w", err)
	}
	return k.Brokers, c.TLS, c.SASL, nil
}

// Apply resolves the flags and gives every kafka source and sink of cfg the
// brokers, TLS and SASL asked for (pipelines.Config.SetKafka), replacing
// the pipeline file's (and --set's); what was not asked for stays as the
// file has it. The pipeline is then checked again.
func (k *Kafka) Apply(cfg *pipelines.Config) error {
	if err := k.Resolve(); err != nil {
		return err
	}
	for _, o := range []struct {
		key string
		set bool
		v   any
	}{{"brokers", len(k.Brokers) > 0, k.Brokers}, {"tls", k.TLS != nil, k.TLS}, {"sasl", k.SASL != nil, k.SASL}} {
		if !o.set {
			continue
		}
		if _, err := cfg.SetKafka(o.key, o.v); err != nil {
			return err
		}
	}
	return pipelines.Check(builtin.Registry(), cfg)
}
