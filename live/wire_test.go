package live

import (
	"strings"
	"testing"

	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/builtin"
)

func TestWire(t *testing.T) {
	for _, tc := range []struct{ name, trace, tail string }{{"live-kafka", "", ""}, {"live-tail", "/runs/42/paje.trace", "/runs/42/paje.trace"}} {
		cfg, err := pipelines.LoadNamed(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		Wire(cfg, []string{"127.0.0.1:1", "127.0.0.1:2"}, tc.trace)
		if err := pipelines.Check(builtin.Registry(), cfg); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		// No broker at all: every kafka sink refuses it, so Wire reached them.
		Wire(cfg, nil, tc.trace)
		if err := pipelines.Check(builtin.Registry(), cfg); err == nil || !strings.Contains(err.Error(), "brokers: at least one") {
			t.Errorf("%s: no broker: %v", tc.name, err)
		}
		for _, c := range cfg.Components() {
			if c.Type == "tail" {
				if p, _ := c.Option("path"); p != tc.tail {
					t.Errorf("%s: tail path %s", tc.name, p)
				}
			}
		}
	}
}
