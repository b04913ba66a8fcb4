package pipelines

import (
	"strings"
	"sync/atomic"
	"time"

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

// MetricsRegistry is where a running pipeline offers its metrics
// (internal/promexport's Registry serves them to Prometheus): Attach makes
// collect part of its scrapes until detach is called.
type MetricsRegistry interface {
	Attach(collect func(emit func(component.Metric))) (detach func(), err error)
}

// collect emits a running graph's counters and its components' metrics,
// each with the labels pipeline, component, kind and type first.
func (g *graph) collect(emit func(component.Metric)) {
	for _, n := range g.nodes {
		base := []string{"pipeline", g.cfg.Name, "component", n.id, "kind", string(n.kind), "type", n.typ}
		metric := func(name, help string, v float64, counter bool) {
			emit(component.Metric{Name: name, Help: help, Labels: base, Value: v, Counter: counter})
		}
		metric("records_in_total", "records a component received", float64(n.recordsIn.Load()), true)
		metric("records_out_total", "records a component emitted; for a sink, records it wrote (flushed)", float64(n.recordsOut.Load()), true)
		metric("batches_in_total", "batches a component received", float64(n.batchesIn.Load()), true)
		if n.in != nil {
			metric("queue_batches", "batches waiting in a component's input queue", float64(len(n.in)), false)
			metric("queue_capacity", "capacity of a component's input queue", float64(cap(n.in)), false)
		}
		seen := map[string]bool{}
		add := func(m component.Metric) {
			labels := append(append([]string(nil), base...), m.Labels...)
			key := m.Name + "|" + strings.Join(labels, ",")
			if seen[key] { // a repeated series would fail the scrape
				return
			}
			seen[key] = true
			m.Labels = labels
			emit(m)
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
