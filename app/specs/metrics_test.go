package specs

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestStartMetrics(t *testing.T) {
	r := Runner{Log: zerolog.Nop()}
	if m, err := r.Start(Metrics{}); m != nil || err != nil {
		t.Fatalf("no address: %v %v", m, err)
	}
	(*MetricsServer)(nil).Stop()
	(*MetricsServer)(nil).SetReady(true)
	if _, err := r.Start(Metrics{Addr: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("0.0.0.0: %v", err)
	}
	m, err := r.Start(Metrics{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	if m.Registry == nil || m.Health == nil || m.Health.Ready() {
		t.Fatalf("%+v", m)
	}
	if m.SetReady(true); !m.Health.Ready() {
		t.Fatal("not ready")
	}
}
