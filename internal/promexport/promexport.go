// Package promexport serves tracecast's metrics to Prometheus: a running
// pipeline's (pipelines.MetricsRegistry, which Registry implements) and
// the process's, on /metrics, with /healthz and /readyz beside. It is
// apart from the pipelines runtime so that commands that never serve
// metrics do not link the Prometheus client (its initializers ran at
// every command's start: docs/performance.md).
package promexport

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/pipelines/component"
)

// Registry offers what pipelines attach to a Prometheus registerer
// (pipelines.MetricsRegistry).
type Registry struct{ prometheus.Registerer }

// Attach makes collect part of the registry's scrapes until detach is
// called: each metric it emits is named tracecast_NAME, with its label
// pairs.
func (r Registry) Attach(collect func(emit func(component.Metric))) (func(), error) {
	c := &collector{collect: collect, desc: map[string]*prometheus.Desc{}}
	if err := r.Register(c); err != nil {
		return nil, err
	}
	return func() { r.Unregister(c) }, nil
}

// NewRegistry is a registry with the Go runtime's and the process's
// metrics.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// collector turns emitted metrics into Prometheus constant metrics.
type collector struct {
	collect func(emit func(component.Metric))
	mu      sync.Mutex
	desc    map[string]*prometheus.Desc
}

// Describe describes nothing: metrics appear as components report them
// (an unchecked collector).
func (c *collector) Describe(chan<- *prometheus.Desc) {}

func (c *collector) get(name, help string, labels []string) *prometheus.Desc {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := name + "|" + strings.Join(labels, ",")
	d := c.desc[key]
	if d == nil {
		d = prometheus.NewDesc("tracecast_"+name, help, labels, nil)
		c.desc[key] = d
	}
	return d
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.collect(func(m component.Metric) {
		var names, vals []string
		for i := 0; i+1 < len(m.Labels); i += 2 {
			names, vals = append(names, m.Labels[i]), append(vals, m.Labels[i+1])
		}
		vt := prometheus.GaugeValue
		if m.Counter {
			vt = prometheus.CounterValue
		}
		ch <- prometheus.MustNewConstMetric(c.get(m.Name, m.Help, names), vt, m.Value, vals...)
	})
}

// Readiness says why a service is not ready ("" when it is):
// pipelines.Health.
type Readiness interface{ Reason() string }

// Serve serves /metrics (Prometheus), /healthz (the process answers) and
// /readyz (ready answers "": 503 otherwise) on addr, which must be a
// loopback address (metrics say what runs where; expose them further with
// a proxy that you control). It returns the address listened on and a
// stop function.
func Serve(addr string, reg *prometheus.Registry, ready Readiness, log zerolog.Logger) (string, func(), error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("--metrics-addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", nil, fmt.Errorf("--metrics-addr %q: not a loopback address (127.0.0.1:PORT, [::1]:PORT, localhost:PORT)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: nil}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if why := ready.Reason(); why != "" {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			log.Error().Err(err).Msg("metrics server")
		}
	}()
	log.Info().Str("addr", ln.Addr().String()).Msg("metrics on /metrics, health on /healthz and /readyz")
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}
