package report

import (
	"fmt"
	"io"
	"sort"

	"github.com/tracecast/tracecast"
)

// TaskSummary counts the task records as they pass, per codelet and
// worker kind: tasks, durations and, with power, energies. It is what
// `tracecast tasks` prints.
type TaskSummary struct {
	by   map[string]*taskAcc
	keys []string
	n    int
}

type taskAcc struct {
	n, withE   int
	dur, e     float64
	minD, maxD float64
}

// NewTaskSummary returns an empty summary.
func NewTaskSummary() *TaskSummary { return &TaskSummary{by: map[string]*taskAcc{}} }

// Add counts tasks.
func (s *TaskSummary) Add(ts []tracecast.Task) {
	for i := range ts {
		s.n++
		k := ts[i].Codelet + " (" + ts[i].WorkerKind + ")"
		a := s.by[k]
		if a == nil {
			a = &taskAcc{minD: ts[i].DurationS, maxD: ts[i].DurationS}
			s.by[k] = a
			s.keys = append(s.keys, k)
		}
		a.n++
		a.dur += ts[i].DurationS
		a.minD, a.maxD = min(a.minD, ts[i].DurationS), max(a.maxD, ts[i].DurationS)
		if ts[i].EnergyJ != nil {
			a.withE++
			a.e += *ts[i].EnergyJ
		}
	}
}

// Write prints the table: tasks, mean, min and max duration (ms) and, with
// power, the mean energy (mJ) and how many tasks got none; out names the
// output file ("" or "-": standard output).
func (s *TaskSummary) Write(w io.Writer, traces int, withPower bool, out string) error {
	sort.Strings(s.keys)
	fmt.Fprintf(w, "tracecast tasks: %d tasks from %d trace(s)", s.n, traces)
	if out != "" && out != "-" {
		fmt.Fprintf(w, " -> %s", out)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-32s %7s %12s %12s %12s", "codelet (worker kind)", "tasks", "mean ms", "min ms", "max ms")
	if withPower {
		fmt.Fprintf(w, " %12s %9s", "mean mJ", "no energy")
	}
	fmt.Fprintln(w)
	for _, k := range s.keys {
		a := s.by[k]
		fmt.Fprintf(w, "  %-32s %7d %12.4f %12.4f %12.4f", k, a.n, a.dur/float64(a.n)*1e3, a.minD*1e3, a.maxD*1e3)
		if withPower {
			if a.withE > 0 {
				fmt.Fprintf(w, " %12.4f", a.e/float64(a.withE)*1e3)
			} else {
				fmt.Fprintf(w, " %12s", "—")
			}
			fmt.Fprintf(w, " %9d", a.n-a.withE)
		}
		fmt.Fprintln(w)
	}
	if s.n == 0 {
		fmt.Fprintln(w, "  no task: the traces have no worker state with a JobId field (StarPU ≥ 1.3 writes them)")
	}
	return nil
}
