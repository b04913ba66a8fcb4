package predict

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stats/ks"
)

// Options are the prediction phase's settings.
type Options struct {
	Window        int      // samples per window
	Queries       []string // "idle>=25%", ...
	Method        ks.Method
	Alpha         float64
	IdleThreshold float64
	RegimeMisses  int
}

// Run runs the prediction phase on a sampled signal: one engine per class
// the queries name, each on that class's signal sampled at period (trace
// units; perSec of them make a second). Records go to out as produced.
func Run(sig *signal.Signal, trace string, period, perSec float64, o Options, out Sink) error {
	if o.Window <= 0 {
		return fmt.Errorf("window: must be a positive number of samples")
	}
	if len(o.Queries) == 0 {
		return fmt.Errorf("queries: give at least one (idle>=25%%)")
	}
	byClass := map[signal.Class][]Query{}
	for _, qs := range o.Queries {
		q, err := ParseQuery(qs, sig.R)
		if err != nil {
			return err
		}
		byClass[q.Class] = append(byClass[q.Class], q)
	}
	for c := signal.Class(0); c < signal.NumClasses; c++ {
		if len(byClass[c]) == 0 {
			continue
		}
		e := NewEngine(Config{Trace: trace, Class: c, R: sig.R, Window: o.Window, Period: period, T0: sig.T0(),
			PerSec: perSec, Queries: byClass[c], Compare: KS(o.Method, o.Alpha), Method: string(o.Method),
			IdleThreshold: o.IdleThreshold, RegimeMisses: o.RegimeMisses}, out)
		sig.Sample(c, period, func(_ int, _ float64, x int) { e.Add(x) })
	}
	return nil
}

// TraceID names a trace in records (and so in their ids) from its path: the
// file name without a .gz suffix, so that the compressed and the plain file
// give the same ids.
func TraceID(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".gz")
}
