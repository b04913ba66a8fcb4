package pipelines

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/pipelines/progress"
)

// statusLoop logs one status line every interval until finished is closed:
// per source, bytes read of the total, lines, records and records per second
// over the last interval; per queue, batches waiting of the capacity. It is
// the non-interactive counterpart of the progress bar.
func (g *graph) statusLoop(interval time.Duration, finished <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	prev := make([]int64, len(g.sources))
	last := time.Now()
	for {
		select {
		case <-finished:
			return
		case now := <-t.C:
			g.logStatus(prev, now.Sub(last))
			last = now
		}
	}
}

func (g *graph) logStatus(prev []int64, dt time.Duration) {
	sources := zerolog.Dict()
	for i, s := range g.sources {
		d := zerolog.Dict()
		if s.progress != nil {
			p := s.progress.SourceProgress()
			d.Int64("bytes", p.Read).Int64("total", p.Total)
		}
		records := s.out.recordsOut.Load()
		d.Int64("lines", s.src.recordsOut.Load()).Int64("records", records)
		if dt > 0 {
			d.Float64("records_per_s", float64(records-prev[i])/dt.Seconds())
		}
		prev[i] = records
		sources.Dict(s.id, d)
	}
	queues := zerolog.Dict()
	for _, n := range g.nodes {
		if n.in != nil {
			queues.Str(n.queueName(), fmt.Sprintf("%d/%d", len(n.in), cap(n.in)))
		}
	}
	g.log.Info().Dict("sources", sources).Dict("queues", queues).Msg("status")
}

// snapshot aggregates the sources' progress.
func (g *graph) snapshot(m *progress.Meter, now time.Time) progress.Snapshot {
	var read, total, lines, records int64
	for _, s := range g.sources {
		if s.progress != nil {
			p := s.progress.SourceProgress()
			read += p.Read
			if p.Total < 0 || total < 0 {
				total = -1
			} else {
				total += p.Total
			}
		} else {
			total = -1
		}
		lines += s.src.recordsOut.Load()
		records += s.out.recordsOut.Load()
	}
	return m.Update(now, read, total, lines, records)
}

// progressLoop feeds the progress hook until finished, then sends the final
// snapshot with Done set.
func (g *graph) progressLoop(start time.Time, interval time.Duration, hook func(progress.Snapshot), finished <-chan struct{}) {
	m := progress.NewMeter(start)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-finished:
			s := g.snapshot(m, time.Now())
			s.Done = true
			hook(s)
			return
		case now := <-t.C:
			hook(g.snapshot(m, now))
		}
	}
}
