package live

import (
	"strings"

	"github.com/tracecast/tracecast/pipelines"
)

// Wire points a live pipeline at its brokers — every kafka source and sink
// — and, when trace is set, its tail source at that file.
func Wire(cfg *pipelines.Config, brokers []string, trace string) {
	for _, c := range cfg.Components() {
		if c.Type == "kafka" {
			c.SetOption("brokers", "["+strings.Join(brokers, ",")+"]")
		}
		if c.Type == "tail" && trace != "" {
			c.SetOption("path", trace)
		}
	}
}
