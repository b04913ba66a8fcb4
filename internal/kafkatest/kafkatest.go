// Package kafkatest starts a real Kafka-protocol broker (franz-go's kfake)
// in-process for tests: one per test, on a random loopback port, with the
// topics created before any client starts; StartSecure's requires TLS
// (with certificates generated for the test) or SASL users.
package kafkatest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

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

// Restartable is a one-broker cluster that a test stops and starts again
// on the same address (a broker restart; messages are not kept).
type Restartable struct {
	Addr       string
	t          testing.TB
	port       int
	partitions int32
	topics     []string
	mu         sync.Mutex // Start may run on a timer's goroutine
	c          *kfake.Cluster
}

// StartRestartable runs a Restartable broker for the test.
func StartRestartable(t testing.TB, partitions int32, topics ...string) *Restartable {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Restartable{t: t, port: l.Addr().(*net.TCPAddr).Port, partitions: partitions, topics: topics}
	l.Close()
	r.Start()
	if r.c == nil {
		t.FailNow()
	}
	r.Addr = r.c.ListenAddrs()[0]
	t.Cleanup(r.Stop)
	return r
}

// Start starts the broker (again); a failure fails the test.
func (r *Restartable) Start() {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(r.port), kfake.SeedTopics(r.partitions, r.topics...))
	if err != nil {
		r.t.Errorf("starting the broker on port %d: %v", r.port, err)
		return
	}
	r.mu.Lock()
	r.c = c
	r.mu.Unlock()
}

// Stop stops the broker; a stopped one is left so.
func (r *Restartable) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c != nil {
		r.c.Close()
		r.c = nil
	}
}

// Normalize returns a record's id and its JSON without the fields that
// depend on how it was delivered (schema, record, emitted_at).
func Normalize(rec map[string]any) (string, string) {
	delete(rec, "schema")
	delete(rec, "record")
	delete(rec, "emitted_at")
	b, _ := json.Marshal(rec)
	id, _ := rec["id"].(string)
	return id, string(b)
}

// ReadRecords reads every message of topic with the given schema until it
// has want distinct ids (or the deadline): id -> Normalize'd JSON, and the
// number of messages (duplicates included). A duplicate that differs from
// the first message with its id fails the test.
func ReadRecords(t testing.TB, addr, topic, schema string, want int, deadline time.Duration) (map[string]string, int) {
	t.Helper()
	return ReadRecordsWith(t, kafkago.DefaultDialer, addr, topic, schema, want, deadline)
}

// ReadRecordsWith is ReadRecords connecting with dialer (TLS, SASL).
func ReadRecordsWith(t testing.TB, dialer *kafkago.Dialer, addr, topic, schema string, want int, deadline time.Duration) (map[string]string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	got := map[string]string{}
	msgs := 0
	// One reader per partition for the whole wait: a reader made anew at
	// every pass read the topic again from its start (quadratic on a big
	// topic, and every message counted again).
	readers, closeAll := Readers(ctx, t, dialer, addr, topic, 0)
	defer closeAll()
	Drain(ctx, readers, func() bool { return len(got) >= want }, func(m kafkago.Message) {
		rec := Decode(t, m)
		if rec["schema"] != schema {
			return
		}
		msgs++
		id, b := Normalize(rec)
		if prev, ok := got[id]; ok && prev != b {
			t.Fatalf("duplicate %s differs:\n%s\n%s", id, prev, b)
		}
		got[id] = b
	})
	return got, msgs
}

// Drain reads the readers in turn, each until it has had nothing for
// 300 ms, and passes every message to fn, until done returns true or ctx
// ends: one reader per partition for the whole wait (a reader made anew
// at every pass reads the topic again from its start).
func Drain(ctx context.Context, readers []*kafkago.Reader, done func() bool, fn func(m kafkago.Message)) {
	for !done() && ctx.Err() == nil {
		for _, r := range readers {
			for {
				rctx, rcancel := context.WithTimeout(ctx, 300*time.Millisecond)
				m, err := r.ReadMessage(rctx)
				rcancel()
				if err != nil {
					break
				}
				fn(m)
			}
		}
	}
}

// Decode returns the JSON object of a message; another value fails the
// test.
func Decode(t testing.TB, m kafkago.Message) map[string]any {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal(m.Value, &rec); err != nil {
		t.Fatalf("%s: %v", m.Value, err)
	}
	return rec
}

// EndOffset is the end offset of a partition of topic: how many messages
// it received.
func EndOffset(ctx context.Context, t testing.TB, addr, topic string, partition int) int64 {
	t.Helper()
	conn, err := kafkago.DialLeader(ctx, "tcp", addr, topic, partition)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n, err := conn.ReadLastOffset()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Partitions returns the ids of topic's partitions.
func Partitions(ctx context.Context, t testing.TB, dialer *kafkago.Dialer, addr, topic string) []int {
	t.Helper()
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions(topic)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(parts))
	for i, p := range parts {
		ids[i] = p.ID
	}
	return ids
}

// Readers returns a reader per partition of topic, from its start
// (maxBytes 0: kafka-go's default fetch size), and a function closing them.
func Readers(ctx context.Context, t testing.TB, dialer *kafkago.Dialer, addr, topic string, maxBytes int) ([]*kafkago.Reader, func()) {
	t.Helper()
	var readers []*kafkago.Reader
	for _, id := range Partitions(ctx, t, dialer, addr, topic) {
		readers = append(readers, kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: id,
			MaxWait: 100 * time.Millisecond, MaxBytes: maxBytes, Dialer: dialer}))
	}
	return readers, func() {
		for _, r := range readers {
			r.Close()
		}
	}
}

// CompareRecords fails the test unless got and want hold the same ids with
// the same records.
func CompareRecords(t testing.TB, got, want map[string]string) {
	t.Helper()
	missing := 0
	for id, w := range want {
		g, ok := got[id]
		switch {
		case !ok:
			missing++
			if missing <= 5 {
				t.Errorf("missing %s", id)
			}
		case g != w:
			t.Errorf("%s:\n got %s\nwant %s", id, g, w)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("unexpected prediction %s", id)
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d predictions missing", missing, len(want))
	}
}

// Secure says what StartSecure's broker requires.
type Secure struct {
	// TLS serves TLS only, with a certificate for 127.0.0.1 and localhost
	// signed by the Certs' CA.
	TLS bool
	// ClientCert requires a client certificate signed by the CA (mutual
	// TLS); with TLS only.
	ClientCert bool
	// Users are SASL users: mechanism (PLAIN, SCRAM-SHA-256,
	// SCRAM-SHA-512) -> user -> password. None: no SASL.
	Users map[string]map[string]string
}

// StartSecure runs a broker that requires what s says, and returns its
// address and the test certificates (written in a t.TempDir()).
func StartSecure(t testing.TB, s Secure, partitions int32, topics ...string) (string, Certs) {
	t.Helper()
	certs := NewCerts(t)
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...), kfake.GroupMinSessionTimeout(time.Second)}
	if s.TLS {
		c := &tls.Config{Certificates: []tls.Certificate{certs.Server}, MinVersion: tls.VersionTLS12}
		if s.ClientCert {
			c.ClientAuth = tls.RequireAndVerifyClientCert
			c.ClientCAs = x509.NewCertPool()
			c.ClientCAs.AddCert(certs.caCert)
		}
		opts = append(opts, kfake.TLS(c))
	}
	if len(s.Users) > 0 {
		opts = append(opts, kfake.EnableSASL())
		for mech, users := range s.Users {
			for u, p := range users {
				opts = append(opts, kfake.Superuser(mech, u, p))
			}
		}
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0], certs
}

// Certs are test certificates generated for one test (no key is committed):
// PEM files of a CA, of a client certificate and its key signed by it, and
// of another CA that signed nothing here (a CA the broker's certificate
// does not chain to); Server is the broker's certificate.
type Certs struct {
	CA, ClientCert, ClientKey, OtherCA string
	Server                             tls.Certificate

	caCert *x509.Certificate
}

// NewCerts generates the certificates in a t.TempDir().
func NewCerts(t testing.TB) Certs {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	serial := int64(0)
	newCert := func(tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return cert, key, der
	}
	ca := func(name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		return newCert(&x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}, nil, nil)
	}
	caCert, caKey, caDER := ca("tracecast test CA")
	_, _, otherDER := ca("another CA")
	_, serverKey, serverDER := newCert(&x509.Certificate{Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, caCert, caKey)
	_, clientKey, clientDER := newCert(&x509.Certificate{Subject: pkix.Name{CommonName: "tracecast client"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, caCert, caKey)
	clientKeyDER, err := x509.MarshalPKCS8PrivateKey(clientKey)
	if err != nil {
		t.Fatal(err)
	}
	return Certs{
		CA:         write("ca.pem", "CERTIFICATE", caDER),
		OtherCA:    write("other-ca.pem", "CERTIFICATE", otherDER),
		ClientCert: write("client.pem", "CERTIFICATE", clientDER),
		ClientKey:  write("client-key.pem", "PRIVATE KEY", clientKeyDER),
		Server:     tls.Certificate{Certificate: [][]byte{serverDER, caDER}, PrivateKey: serverKey},
		caCert:     caCert,
	}
}
