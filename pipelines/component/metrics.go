package component

import (
	"slices"
	"strings"
)

// Metric is one value a component reports for monitoring (Prometheus
// through the runtime): a counter or a gauge, with label pairs.
type Metric struct {
	// Name is the metric's name without the tracecast_ prefix:
	// "bad_lines_total".
	Name string
	Help string
	// Labels are name, value pairs: {"reason", "bad field"}.
	Labels  []string
	Value   float64
	Counter bool
}

// MetricsReporter is implemented by components with metrics of their own
// (bad lines by reason, open traces, forecast skill). The runtime calls
// Metrics on the component's own goroutine, between batches, and keeps the
// last report for scrapes: it needs no locking.
type MetricsReporter interface {
	Metrics(add func(Metric))
}

// LiveMetricsReporter is implemented by components with metrics that must
// be current when scraped even while the component is blocked (a source
// waiting on a full queue): ages, consumer lag. The runtime calls
// LiveMetrics on the scrape's goroutine, concurrently with the component,
// which must make that safe.
type LiveMetricsReporter interface {
	LiveMetrics(add func(Metric))
}

// GaugeStreams bounds the streams whose gauges a PerStream reports: the
// most recently active ones, open or ended.
const GaugeStreams = 32

type metricKey struct{ name, labels string }

func keyOf(m *Metric) metricKey { return metricKey{m.Name, strings.Join(m.Labels, "\x00")} }

// perStreamMetrics is what a PerStream keeps of the streams it no longer
// runs, so that its counters never go down when a trace ends, is evicted,
// dropped or reset, and a run's last gauges (its skill) outlive its stream.
type perStreamMetrics struct {
	// counters are the sums of the counters of the streams gone.
	counters map[metricKey]*Metric
	order    []metricKey
	// ended are the gauges of the last GaugeStreams streams that ended
	// (flushed), oldest first, with when they were last active.
	ended []endedGauges
	// Dropped counts the streams dropped by DropFailedStreams.
	dropped int
}

type endedGauges struct {
	tick   uint64
	gauges []Metric
}

// retire adds the counters of a stream's processor p to the totals and,
// when the stream ended, keeps its gauges.
func (ps *PerStream) retire(p any, ended bool, tick uint64) {
	r, ok := p.(MetricsReporter)
	if !ok {
		return
	}
	pm := &ps.gone
	if pm.counters == nil {
		pm.counters = map[metricKey]*Metric{}
	}
	var gauges []Metric
	r.Metrics(func(m Metric) {
		if !m.Counter {
			gauges = append(gauges, m)
			return
		}
		k := keyOf(&m)
		if c := pm.counters[k]; c != nil {
			c.Value += m.Value
			return
		}
		c := m
		pm.counters[k] = &c
		pm.order = append(pm.order, k)
	})
	if ended && len(gauges) > 0 {
		if len(pm.ended) == GaugeStreams {
			pm.ended = append(pm.ended[:0], pm.ended[1:]...)
		}
		pm.ended = append(pm.ended, endedGauges{tick: tick, gauges: gauges})
	}
}

// Metrics reports the open streams, evictions and dropped streams, and the
// metrics of the streams' processors: counters summed by name and labels
// over the streams open and gone (so they never go down), gauges of the
// GaugeStreams most recently active streams, open or ended, not summed (a
// processor labels its gauges with its run; with the same labels, the most
// recently active stream's value is reported).
func (ps *PerStream) Metrics(add func(Metric)) {
	add(Metric{Name: "open_streams", Help: "traces (streams) followed at once", Value: float64(len(ps.procs))})
	add(Metric{Name: "streams_evicted_total", Help: "traces dropped unflushed for max_streams", Value: float64(ps.Evictions), Counter: true})
	add(Metric{Name: "dropped_stream_records_total", Help: "records (lines, entities) of evicted or dropped traces ignored", Value: float64(ps.Ignored), Counter: true})
	add(Metric{Name: "streams_timed_out_total", Help: "traces ended by trace_timeout (no end marker), flushed from the lines received", Value: float64(ps.TimedOut), Counter: true})
	add(Metric{Name: "dropped_stream_ends_total", Help: "end markers of evicted or dropped traces ignored (nothing flushed)", Value: float64(ps.IgnoredEnds), Counter: true})
	if ps.drop != nil {
		add(Metric{Name: "streams_dropped_total", Help: "traces dropped at an error (stream_errors: drop)", Value: float64(ps.gone.dropped), Counter: true})
	}
	sums := map[metricKey]*Metric{}
	var order []metricKey
	for _, k := range ps.gone.order {
		c := *ps.gone.counters[k]
		sums[k] = &c
		order = append(order, k)
	}
	// The streams whose gauges are reported, least recently active first
	// (a later one's gauge replaces an earlier one's with the same labels).
	type source struct {
		tick   uint64
		p      MetricsReporter
		gauges []Metric
	}
	var srcs []source
	for _, e := range ps.gone.ended {
		srcs = append(srcs, source{tick: e.tick, gauges: e.gauges})
	}
	for _, s := range ps.order {
		r, ok := ps.procs[s].(MetricsReporter)
		if ok {
			srcs = append(srcs, source{tick: ps.used[s], p: r})
		}
	}
	slices.SortStableFunc(srcs, func(a, b source) int {
		switch {
		case a.tick < b.tick:
			return -1
		case a.tick > b.tick:
			return 1
		}
		return 0
	})
	gauges := map[metricKey]Metric{}
	var gorder []metricKey
	gauge := func(m Metric) {
		k := keyOf(&m)
		if _, ok := gauges[k]; !ok {
			gorder = append(gorder, k)
		}
		gauges[k] = m
	}
	for i, src := range srcs {
		keep := i >= len(srcs)-GaugeStreams
		if src.p == nil {
			if keep {
				for _, m := range src.gauges {
					gauge(m)
				}
			}
			continue
		}
		src.p.Metrics(func(m Metric) {
			if !m.Counter {
				if keep {
					gauge(m)
				}
				return
			}
			k := keyOf(&m)
			if sm := sums[k]; sm != nil {
				sm.Value += m.Value
				return
			}
			c := m
			sums[k] = &c
			order = append(order, k)
		})
	}
	for _, k := range order {
		add(*sums[k])
	}
	for _, k := range gorder {
		add(gauges[k])
	}
}

// LineMetrics reports a parser's lines read (lines_total) and the lines it
// skipped in lenient mode by reason (bad_lines_total), under the names and
// help every parser shares.
func LineMetrics(add func(Metric), lines int64, skipped map[string]int64) {
	add(Metric{Name: "lines_total", Help: "lines a parser read", Value: float64(lines), Counter: true})
	reasons := make([]string, 0, len(skipped))
	for r := range skipped {
		reasons = append(reasons, r)
	}
	slices.Sort(reasons)
	for _, r := range reasons {
		add(Metric{Name: "bad_lines_total", Help: "lines a parser skipped (lenient mode), by reason", Labels: []string{"reason", r}, Value: float64(skipped[r]), Counter: true})
	}
}
