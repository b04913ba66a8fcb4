package component

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
// (bad lines by reason, open traces, consumer lag, forecast skill). The
// runtime calls Metrics on the component's own goroutine, between batches,
// and keeps the last report for scrapes: it needs no locking.
type MetricsReporter interface {
	Metrics(add func(Metric))
}

// Metrics reports the open streams and evictions, and the metrics of each
// open stream's processor summed by name and labels.
func (ps *PerStream) Metrics(add func(Metric)) {
	add(Metric{Name: "open_streams", Help: "traces (streams) followed at once", Value: float64(len(ps.procs))})
	add(Metric{Name: "streams_evicted_total", Help: "traces dropped unflushed for max_streams", Value: float64(ps.Evictions), Counter: true})
	add(Metric{Name: "dropped_stream_records_total", Help: "records (lines, entities) of evicted or dropped traces ignored", Value: float64(ps.Ignored), Counter: true})
	add(Metric{Name: "streams_timed_out_total", Help: "traces ended by trace_timeout (no end marker), flushed from the lines received", Value: float64(ps.TimedOut), Counter: true})
	add(Metric{Name: "dropped_stream_ends_total", Help: "end markers of evicted or dropped traces ignored (nothing flushed)", Value: float64(ps.IgnoredEnds), Counter: true})
	type key struct{ name, labels string }
	sums := map[key]*Metric{}
	var order []key
	for _, s := range ps.order {
		r, ok := ps.procs[s].(MetricsReporter)
		if !ok {
			continue
		}
		r.Metrics(func(m Metric) {
			k := key{m.Name, joinLabels(m.Labels)}
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
}

func joinLabels(ls []string) string {
	s := ""
	for _, l := range ls {
		s += l + "\x00"
	}
	return s
}
