package pipelines

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tracecast/tracecast/pipelines/component"
)

// Health is what /healthz and /readyz report: a running pipeline is ready
// once every component started, until it stops, unless a component says
// it cannot do its work for now (component.ReadinessReporter: a kafka
// sink whose broker is down or whose disk is full).
type Health struct {
	ready atomic.Bool
	check atomic.Pointer[func() string]
}

// Ready reports whether the pipeline runs and every component can work.
func (h *Health) Ready() bool { return h.Reason() == "" }

// Reason says why the service is not ready ("" when it is).
func (h *Health) Reason() string {
	if h == nil || !h.ready.Load() {
		return "not running"
	}
	if c := h.check.Load(); c != nil {
		return (*c)()
	}
	return ""
}

// setCheck makes Reason ask check (nil: nothing) while the service runs.
func (h *Health) setCheck(check func() string) {
	if h == nil {
		return
	}
	if check == nil {
		h.check.Store(nil)
		return
	}
	h.check.Store(&check)
}

// Set says whether the service runs (for services without a pipeline: the
// broker).
func (h *Health) Set(v bool) { h.set(v) }

func (h *Health) set(v bool) {
	if h != nil {
		h.ready.Store(v)
	}
}

// snapshotEvery is how often a node refreshes its component's metrics.
const snapshotEvery = time.Second

// nodeMetrics is a node's last component report, written by the node's
// goroutine and read by scrapes.
type nodeMetrics struct {
	last  time.Time
	dirty bool // batches came since the last report
	snap  atomic.Pointer[[]component.Metric]
}

// idle refreshes a report left behind by a burst, before the node waits.
func (m *nodeMetrics) idle(n *node) {
	if m.dirty {
		n.refreshMetrics(true)
	}
}

// refresh asks the component for its metrics when the last report is older
// than snapshotEvery (or force): called on the node's own goroutine.
func (n *node) refreshMetrics(force bool) {
	r, ok := n.component().(component.MetricsReporter)
	if !ok {
		return
	}
	if !force && time.Since(n.metrics.last) < snapshotEvery {
		n.metrics.dirty = true
		return
	}
	n.metrics.last, n.metrics.dirty = time.Now(), false
	var ms []component.Metric
	r.Metrics(func(m component.Metric) { ms = append(ms, m) })
	n.metrics.snap.Store(&ms)
}

func (n *node) component() any {
	switch {
	case n.src != nil:
		return n.src
	case n.proc != nil:
		if p, ok := n.proc.(*component.Parser); ok {
			return p.Processor
		}
		return n.proc
	}
	return n.sink
}

// collector exposes a running graph's counters and its components' metrics.
type collector struct {
	g    *graph
	mu   sync.Mutex
	desc map[string]*prometheus.Desc
}

var baseLabels = []string{"pipeline", "component", "kind", "type"}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	// Unchecked: component metrics appear as components report them.
}

func (c *collector) get(name, help string, labels []string) *prometheus.Desc {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := name + "|" + joinNames(labels)
	d := c.desc[key]
	if d == nil {
		d = prometheus.NewDesc("tracecast_"+name, help, labels, nil)
		c.desc[key] = d
	}
	return d
}

func joinNames(ls []string) string {
	s := ""
	for _, l := range ls {
		s += l + ","
	}
	return s
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	g := c.g
	for _, n := range g.nodes {
		lv := []string{g.cfg.Name, n.id, string(n.kind), n.typ}
		counter := func(name, help string, v int64) {
			ch <- prometheus.MustNewConstMetric(c.get(name, help, baseLabels), prometheus.CounterValue, float64(v), lv...)
		}
		counter("records_in_total", "records a component received", n.recordsIn.Load())
		counter("records_out_total", "records a component emitted; for a sink, records it wrote (flushed)", n.recordsOut.Load())
		counter("batches_in_total", "batches a component received", n.batchesIn.Load())
		if n.in != nil {
			ch <- prometheus.MustNewConstMetric(c.get("queue_batches", "batches waiting in a component's input queue", baseLabels), prometheus.GaugeValue, float64(len(n.in)), lv...)
			ch <- prometheus.MustNewConstMetric(c.get("queue_capacity", "capacity of a component's input queue", baseLabels), prometheus.GaugeValue, float64(cap(n.in)), lv...)
		}
		seen := map[string]bool{}
		add := func(m component.Metric) {
			names := append(append([]string(nil), baseLabels...), labelNames(m.Labels)...)
			vals := append(append([]string(nil), lv...), labelValues(m.Labels)...)
			key := m.Name + "|" + joinNames(vals)
			if seen[key] { // a repeated series would fail the scrape
				return
			}
			seen[key] = true
			vt := prometheus.GaugeValue
			if m.Counter {
				vt = prometheus.CounterValue
			}
			ch <- prometheus.MustNewConstMetric(c.get(m.Name, m.Help, names), vt, m.Value, vals...)
		}
		// Metrics computed now (ages, lags), then the component's last
		// report.
		if r, ok := n.component().(component.LiveMetricsReporter); ok {
			r.LiveMetrics(add)
		}
		if snap := n.metrics.snap.Load(); snap != nil {
			for _, m := range *snap {
				add(m)
			}
		}
	}
}

func labelNames(ls []string) []string {
	var out []string
	for i := 0; i+1 < len(ls); i += 2 {
		out = append(out, ls[i])
	}
	return out
}

func labelValues(ls []string) []string {
	var out []string
	for i := 0; i+1 < len(ls); i += 2 {
		out = append(out, ls[i+1])
	}
	return out
}

// ServeMetrics serves /metrics (Prometheus), /healthz (the process
// answers) and /readyz (the pipeline runs: 503 before and after) on addr,
// which must be a loopback address (metrics say what runs where; expose
// them further with a proxy that you control). It returns the address
// listened on and a stop function.
func ServeMetrics(addr string, reg *prometheus.Registry, h *Health, log zerolog.Logger) (string, func(), error) {
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
		if why := h.Reason(); why != "" {
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

// unready is why a component of the graph cannot work for now
// (component.ReadinessReporter), "" when every one can: the reasons of
// those that cannot, joined.
func (g *graph) unready() string {
	var why []string
	for _, n := range g.nodes {
		if r, ok := n.component().(component.ReadinessReporter); ok {
			if s := r.Unready(); s != "" {
				why = append(why, s)
			}
		}
	}
	return strings.Join(why, "; ")
}
