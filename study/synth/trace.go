package synth

import (
	"bufio"
	"container/heap"
	_ "embed"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// header is StarPU 1.4.9's Paje header, verbatim (event definitions,
// including the extra PajeSetState 20 carrying JobId and the others, and the
// type and value definitions), from the project's own StarPU trace.
//
//go:embed starpu14_header.paje
var header string

// Codelet is a kind of task with its duration distribution.
type Codelet struct {
	Name   string
	MeanMS float64 // mean duration, ms (of the first size, with Sizes)
	CV     float64 // coefficient of variation (lognormal); 0: constant
	Weight float64 // relative frequency
	// Sizes, when set, are tile sizes N drawn uniformly per task: the task
	// works on three N×N matrices of 4-byte floats (a GEMM's handles), its
	// mean duration is MeanMS·(N/Sizes[0])^SizeExp, and the trace says so
	// (Size 3·N²·4, Params M<N>x<N>x4 three times, GFlop 2N³/10⁹).
	Sizes   []int
	SizeExp float64
}

// Bounds of the parameters, so that every time the trace holds is finite
// and meaningful: a task's mean duration (after its tile-size scaling), a
// transfer's mean and a runtime state's length are at most MaxMS (10⁹ ms,
// about 11.6 days), a coefficient of variation at most MaxCV (a lognormal
// of CV 100 already has draws 10⁵ times its mean), a weight at most
// MaxWeight. Larger values overflow the trace's times to +Inf or NaN.
const (
	MaxMS     = 1e9
	MaxCV     = 100
	MaxWeight = 1e9
)

// ParseCodelets reads "NAME:MEAN_MS[:CV[:WEIGHT[:N1/N2/...[:EXP]]]],...":
// with tile sizes, the mean duration is MEAN_MS·(N/N1)^EXP (EXP default 3).
// Means (scaled by every tile size), CVs and weights above MaxMS, MaxCV
// and MaxWeight are refused.
func ParseCodelets(s string) ([]Codelet, error) {
	var out []Codelet
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		parts := strings.Split(f, ":")
		c := Codelet{Name: parts[0], CV: 0.3, Weight: 1}
		if c.Name == "" || strings.ContainsAny(c.Name, " \t\"") || len(parts) < 2 || len(parts) > 6 {
			return nil, fmt.Errorf("codelet %q: want NAME:MEAN_MS[:CV[:WEIGHT[:N1/N2/...[:EXP]]]]", f)
		}
		if len(parts) >= 5 {
			for _, n := range strings.Split(parts[4], "/") {
				v, err := strconv.Atoi(n)
				if err != nil || v <= 0 || v > 1<<20 {
					return nil, fmt.Errorf("codelet %q: bad tile size %q", f, n)
				}
				c.Sizes = append(c.Sizes, v)
			}
			c.SizeExp = 3
			if len(parts) == 6 {
				e, err := strconv.ParseFloat(parts[5], 64)
				if err != nil || math.IsInf(e, 0) || math.IsNaN(e) || math.Abs(e) > 10 {
					return nil, fmt.Errorf("codelet %q: bad size exponent %q", f, parts[5])
				}
				c.SizeExp = e
			}
			parts = parts[:4]
		}
		vals := []*float64{&c.MeanMS, &c.CV, &c.Weight}
		for i, p := range parts[1:] {
			v, err := strconv.ParseFloat(p, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("codelet %q: bad number %q", f, p)
			}
			*vals[i] = v
		}
		if c.MeanMS <= 0 || c.Weight <= 0 {
			return nil, fmt.Errorf("codelet %q: mean and weight must be positive", f)
		}
		if c.CV > MaxCV {
			return nil, fmt.Errorf("codelet %q: CV %g is more than %d: its durations would not be finite times", f, c.CV, MaxCV)
		}
		if c.Weight > MaxWeight {
			return nil, fmt.Errorf("codelet %q: weight %g is more than %g (weights are relative: scale them down)", f, c.Weight, float64(MaxWeight))
		}
		for _, n := range append([]int{1}, c.Sizes...) {
			m := c.MeanMS
			if n != 1 {
				m *= math.Pow(float64(n)/float64(c.Sizes[0]), c.SizeExp)
			}
			if !(m <= MaxMS) {
				return nil, fmt.Errorf("codelet %q: a mean duration of %g ms is more than %g ms (about 11.6 days)", f, m, float64(MaxMS))
			}
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no codelet")
	}
	return out, nil
}

// TraceParams say how the DAG runs.
type TraceParams struct {
	Workers  int
	Seed     uint64
	Codelets []Codelet // default: one homogeneous kind (the paper's DAGs)
	// TransferProb is the probability that a task fetches input data
	// before it runs (a FetchingInput state of TransferMeanMS on average,
	// exponential).
	TransferProb   float64
	TransferMeanMS float64
	// OverheadMS is the length of each runtime state StarPU writes around a
	// task (Progressing, Scheduling, Overhead, PushingOutput); default 0.001.
	OverheadMS float64
	// StartMS is when the first task can start (after the workers'
	// initialisation); default 100.
	StartMS float64
}

// MaxWorkers bounds TraceParams.Workers: the writer holds a few pending
// lines per worker, and a StarPU machine has at most a few thousand.
const MaxWorkers = 1 << 20

// Check refuses parameters that cannot make a trace of finite times:
// workers outside [1, MaxWorkers], a transfer probability outside [0, 1],
// negative, non-finite or larger than MaxMS transfer means and overheads.
// The codelets are ParseCodelets's (checked there).
func (p TraceParams) Check() error {
	ms := func(name string, v float64) error {
		if !(v >= 0 && v <= MaxMS) {
			return paramErr(name, "%g ms: must be in [0, %g] ms", v, float64(MaxMS))
		}
		return nil
	}
	switch {
	case p.Workers < 1 || p.Workers > MaxWorkers:
		return paramErr("workers", "%d workers: must be in [1, %d]", p.Workers, MaxWorkers)
	case !(p.TransferProb >= 0 && p.TransferProb <= 1):
		return paramErr("transfer-prob", "%g: a probability must be in [0, 1]", p.TransferProb)
	}
	if err := ms("transfer", p.TransferMeanMS); err != nil {
		return err
	}
	if err := ms("overhead", p.OverheadMS); err != nil {
		return err
	}
	return ms("start", p.StartMS)
}

// DefaultCodelets is the homogeneous workload of the paper's benchmarking DAGs.
func DefaultCodelets() []Codelet {
	return []Codelet{{Name: "dag_task", MeanMS: 10, CV: 0.3, Weight: 1}}
}

// Summary describes the written trace.
type Summary struct {
	Workers    int     `json:"workers"`
	StartMS    float64 `json:"start_ms"`    // first worker state
	EndMS      float64 `json:"end_ms"`      // last worker state change
	MakespanMS float64 `json:"makespan_ms"` // first task start to last task end
	Lines      int64   `json:"lines"`
	Transfers  int     `json:"transfers"`
	BusyMS     float64 `json:"busy_ms"` // sum of task durations
}

// line kinds
const (
	kSet      = iota // 10 <state>
	kTask            // 10 <codelet> + 20 <codelet ...>
	kPush            // 11 Sc
	kPop             // 12
	kFinish          // simulation: the worker is free (no line)
	kBackfill        // 10 Backfill: a back-end task (closed loop)
)

type ev struct {
	t     float64
	seq   uint64
	w     int32
	kind  uint8
	state string
	task  int32 // −1: a line of the worker going to sleep
	dead  bool  // cancelled (closed loop: a back-end task took the worker)
}

type evHeap []ev

func (h evHeap) Len() int { return len(h) }
func (h evHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h evHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *evHeap) Push(x any)   { *h = append(*h, x.(ev)) }
func (h *evHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type intHeap []int32

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int32)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// WriteTrace list-schedules the DAG on p.Workers workers (eager: ready tasks
// in release order, FIFO, go to the lowest-numbered free worker) and streams
// the execution as a StarPU 1.4 Paje trace: the StarPU header, the container
// hierarchy MPIP > P > Mn > T > W, times in milliseconds, every task as the
// worker state "<codelet>" (a PajeSetState 10 line followed by the extended
// PajeSetState 20 line with Size, Params, Footprint, Tag, JobId, ...),
// surrounded by Progressing/Scheduling/Overhead/FetchingInput/PushingOutput
// states, and Sleeping while a worker has nothing to run. Lines are written
// in time order; the memory held is the DAG plus a few pending lines per
// worker.
func WriteTrace(out io.Writer, d *DAG, p TraceParams) (Summary, error) {
	s, err := simulate(out, d, p, nil)
	return s.Summary, err
}

// simulate is WriteTrace, with a second queue of back-end tasks when be is
// not nil (RunClosedLoop); without one it writes what WriteTrace always
// wrote (TestWriteTraceGolden).
func simulate(out io.Writer, d *DAG, p TraceParams, be BackEnd) (LoopSummary, error) {
	if err := p.Check(); err != nil {
		return LoopSummary{}, err
	}
	R := p.Workers
	if len(p.Codelets) == 0 {
		p.Codelets = DefaultCodelets()
	}
	if p.OverheadMS <= 0 {
		p.OverheadMS = 0.001
	}
	if p.StartMS <= 0 {
		p.StartMS = 100
	}
	o := p.OverheadMS
	n := len(d.Level)
	r := rand.New(rand.NewPCG(p.Seed, 0x7ace))
	// Per-task codelet, duration and transfer, drawn in task order.
	kind := make([]uint8, n)
	tile := make([]int, n) // tile size N of tasks of codelets with Sizes
	rs := rand.New(rand.NewPCG(p.Seed, 0x512e))
	dur := make([]float64, n)
	fetch := make([]float64, n)
	totalW := 0.0
	for _, c := range p.Codelets {
		totalW += c.Weight
	}
	sum := Summary{Workers: R}
	var loop *loopState
	if be != nil {
		loop = newLoopState(be, R, n, p.StartMS)
	}
	for i := 0; i < n; i++ {
		u := r.Float64() * totalW
		k := 0
		for k < len(p.Codelets)-1 && u >= p.Codelets[k].Weight {
			u -= p.Codelets[k].Weight
			k++
		}
		kind[i] = uint8(k)
		c := p.Codelets[k]
		dur[i] = c.MeanMS
		if c.CV > 0 {
			s2 := math.Log1p(c.CV * c.CV)
			dur[i] = c.MeanMS * math.Exp(r.NormFloat64()*math.Sqrt(s2)-s2/2)
		}
		if len(c.Sizes) > 0 {
			tile[i] = c.Sizes[rs.IntN(len(c.Sizes))]
			dur[i] *= math.Pow(float64(tile[i])/float64(c.Sizes[0]), c.SizeExp)
		}
		dur[i] = math.Max(dur[i], 4*o)
		sum.BusyMS += dur[i]
		if p.TransferProb > 0 && r.Float64() < p.TransferProb {
			fetch[i] = math.Max(r.ExpFloat64()*p.TransferMeanMS, o)
			sum.Transfers++
		}
	}
	defined := make([]bool, len(p.Codelets))

	bw := bufio.NewWriterSize(out, 1<<16)
	var buf []byte
	lines := int64(strings.Count(header, "\n"))
	bw.WriteString(header)
	put := func(b []byte) {
		bw.Write(b)
		lines++
	}
	ts := func(b []byte, t float64) []byte { return strconv.AppendFloat(b, t, 'f', 9, 64) }
	// Containers, as StarPU creates them.
	bw.WriteString("7\t0.0 MPIroot      MPIP      0       root\n7\t0.0\tp\tP\tMPIroot\tprogram \n7\t0.0\tsched\tSc\tp\tscheduler\n")
	bw.WriteString("13\t0.0\tsched\tnsubmitted\t0.0\n13\t0.0\tsched\tnready\t0.0\n13\t0.0\tsched\tgft\t0.0\n")
	lines += 6
	t0 := 14.5
	buf = fmt.Appendf(buf[:0], "7\t%.9f\tmn0\tMn\tp\tMEMNODE0\n7\t%.9f\tmm0\tMm\tmn0\tMEMMANAGER0\n", t0, t0)
	put(buf)
	lines++
	initStates := []string{"In", "B", "I", "P", "Sc", "Sl"}
	for w := 0; w < R; w++ {
		tw := t0 + 0.2 + float64(w)*0.05
		buf = fmt.Appendf(buf[:0], "7\t%.9f\tt%d\tT\tmn0\tT%d\n7\t%.9f\tw%d\tW\tt%d\tCPU%d\n13\t%.9f\tw%d\tgf\t0.0\n",
			tw, w, w, tw, w, w, w, tw, w)
		put(buf)
		lines += 2
		for i, s := range initStates {
			buf = append(buf[:0], "10\t"...)
			buf = ts(buf, tw+float64(i)*o)
			buf = fmt.Appendf(buf, "\tw%d\tWS\t\"%s\"\n", w, s)
			put(buf)
		}
	}
	sum.StartMS = t0 + 0.2

	var pending evHeap // lines to write, and worker-free events
	var seq uint64
	push := func(t float64, w int, k uint8, state string, task int) {
		seq++
		heap.Push(&pending, ev{t: t, seq: seq, w: int32(w), kind: k, state: state, task: int32(task)})
		if k == kFinish && loop != nil {
			heap.Push(&loop.finishes, t)
		}
	}
	write := func(e ev) {
		if loop != nil {
			if e.dead {
				return
			}
			e.t = loop.monotone(e.t)
		}
		switch e.kind {
		case kBackfill:
			if !loop.defined {
				loop.defined = true
				put([]byte("6\tBackfill\tWS\tBackfill\t\"0.600000 0.600000 0.600000\" \n"))
			}
			buf = append(buf[:0], "10\t"...)
			buf = ts(buf, e.t)
			buf = fmt.Appendf(buf, "\tw%d\tWS\t\"Backfill\"\n", e.w)
			put(buf)
		case kSet:
			buf = append(buf[:0], "10\t"...)
			buf = ts(buf, e.t)
			buf = fmt.Appendf(buf, "\tw%d\tWS\t\"%s\"\n", e.w, e.state)
			put(buf)
		case kPush:
			buf = append(buf[:0], "11\t"...)
			buf = ts(buf, e.t)
			buf = fmt.Appendf(buf, "\tw%d\tWS\tSc\n", e.w)
			put(buf)
		case kPop:
			buf = append(buf[:0], "12\t"...)
			buf = ts(buf, e.t)
			buf = fmt.Appendf(buf, "\tw%d\tWS\n", e.w)
			put(buf)
		case kTask:
			k := kind[e.task]
			c := p.Codelets[k]
			if !defined[k] {
				defined[k] = true
				ki := int(k)
				buf = fmt.Appendf(buf[:0], "6\t%s\tWS\t%s\t\"%.6f %.6f %.6f\" \n", c.Name, c.Name,
					float64(37*(ki+1)%256), float64(91*(ki+2)%256), float64(173*(ki+3)%256))
				put(buf)
			}
			buf = append(buf[:0], "10\t"...)
			buf = ts(buf, e.t)
			buf = fmt.Appendf(buf, "\tw%d\tWS\t\"%s\"\n", e.w, c.Name)
			put(buf)
			id := int(e.task)
			buf = append(buf[:0], "20\t"...)
			buf = ts(buf, e.t)
			if nt := tile[id]; nt > 0 {
				// Sized tasks: three N×N float matrices, GEMM's flops.
				m := fmt.Sprintf("M%dx%dx4", nt, nt)
				buf = fmt.Appendf(buf, "\tw%d\tWS\t\"%s\"\t%d\t\"%s_%s_%s\"\t%08x\t%016x\t%d\t%d\t%d\t%.6f\t%d\t%d\t%d\t-1\t\"-1_-1_-1\"\n",
					e.w, c.Name, 3*nt*nt*4, m, m, m, uint32(nt)*0x9e3779b1+uint32(k), uint64(id)+1, id+1, id, -int(d.Level[id]),
					2*math.Pow(float64(nt), 3)/1e9, id%64, id/64, d.Level[id])
			} else {
				buf = fmt.Appendf(buf, "\tw%d\tWS\t\"%s\"\t%d\t\"M%dx%d\"\t%08x\t%016x\t%d\t%d\t%d\t%.6f\t%d\t%d\t%d\t-1\t\"-1\"\n",
					e.w, c.Name, 460800, 240, 240, uint32(k)*0x9e3779b1+0x752078c9, uint64(id)+1, id+1, id, -int(d.Level[id]),
					dur[id]*1e-3, id%64, id/64, d.Level[id])
			}
			put(buf)
		}
	}

	// Simulation.
	indeg := make([]int32, n)
	copy(indeg, d.NParents)
	ready := make([]int32, 0, n)
	head := 0
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			ready = append(ready, int32(i))
		}
	}
	idle := make(intHeap, R)
	for w := range idle {
		idle[w] = int32(w)
	}
	heap.Init(&idle)
	sleeping := make([]bool, R)
	for w := range sleeping {
		sleeping[w] = true
	}
	running := make([]int32, R)
	now := p.StartMS
	first, last := math.Inf(1), 0.0
	done := 0
	for {
		// Hand ready tasks to free workers.
		for head < len(ready) && idle.Len() > 0 {
			task := int(ready[head])
			head++
			var w int
			t := now
			if loop == nil {
				w = int(heap.Pop(&idle).(int32))
			} else {
				w, t = loop.claim(&idle, now)
			}
			running[w] = int32(task)
			if sleeping[w] {
				push(t, w, kSet, "P", task)
				t += o
				push(t, w, kSet, "Sc", task)
				t += o
			}
			sleeping[w] = false
			push(t, w, kSet, "B", task)
			t += o
			if fetch[task] > 0 {
				push(t, w, kSet, "Fi", task)
				t += fetch[task]
				push(t, w, kSet, "B", task)
				t += o
			}
			push(t, w, kPush, "", task)
			t += o
			push(t, w, kPop, "", task)
			t += o
			push(t, w, kTask, "", task)
			first = math.Min(first, t)
			if loop != nil {
				loop.starts[task] = t
			}
			t += dur[task]
			last = math.Max(last, t)
			push(t, w, kSet, "B", task)
			t += o
			push(t, w, kSet, "Po", task)
			t += o
			push(t, w, kSet, "B", task)
			t += o
			push(t, w, kFinish, "", task)
		}
		// Free workers that were not given a task go to sleep.
		for _, w := range idle {
			if !sleeping[w] {
				sleeping[w] = true
				push(now, int(w), kSet, "P", -1)
				push(now+o, int(w), kSet, "Sc", -1)
				push(now+2*o, int(w), kSet, "Sl", -1)
				if loop != nil {
					loop.be.Idle(now, int(w), true)
				}
			}
		}
		if loop != nil {
			// The back-end's launches before the next primary event, so
			// that their lines are written in time order with the
			// primary's; at the run's end, the back-end's end.
			loop.be.Counts(now, len(ready)-head, n-done)
			if next, ok := loop.nextFinish(); ok {
				loop.launched(loop.be.Advance(next), next, push, pending)
			} else {
				loop.launched(loop.be.Finish(now), math.Inf(1), push, pending)
			}
		}
		// Write lines up to the next time a worker becomes free.
		advanced := false
		for pending.Len() > 0 {
			e := heap.Pop(&pending).(ev)
			if e.kind != kFinish {
				write(e)
				continue
			}
			now = e.t
			if loop != nil {
				loop.finished()
			}
			heap.Push(&idle, e.w)
			done++
			for _, c := range d.Children[e.task] {
				if indeg[c]--; indeg[c] == 0 {
					ready = append(ready, c)
				}
			}
			advanced = true
			// Free every worker finishing at this same instant first.
			if pending.Len() == 0 || pending[0].t > now || pending[0].kind != kFinish {
				break
			}
		}
		if !advanced {
			break
		}
	}
	if done != n {
		return LoopSummary{Summary: sum}, fmt.Errorf("synth: %d of %d tasks ran (cycle?)", done, n)
	}
	end := now + 3*o
	if loop != nil {
		loop.sum.PrimaryEndMS = last
		end = math.Max(now, loop.lastEnd) + 3*o
	}
	buf = append(buf[:0], "9\t"...)
	buf = ts(buf, end+o)
	buf = append(buf, "\tprog_event\tp\t\"stop_profiling\"\n"...)
	put(buf)
	for w := 0; w < R; w++ {
		buf = append(buf[:0], "8\t"...)
		buf = ts(buf, end+2*o+float64(w)*o)
		buf = fmt.Appendf(buf, "\tt%d\tT\n", w)
		put(buf)
	}
	sum.EndMS = end
	sum.MakespanMS = last - first
	sum.Lines = lines
	ls := LoopSummary{Summary: sum}
	if loop != nil {
		ls.TaskStarts, ls.Launches, ls.BackEndMS, ls.Held, ls.PrimaryEndMS = loop.starts, loop.sum.Launches, loop.sum.BackEndMS, loop.sum.Held, last
	}
	return ls, bw.Flush()
}
