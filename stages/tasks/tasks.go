// Package tasks turns a task-based runtime's worker states into task
// records (tracecast.task/1): one per task, with its codelet, worker,
// start, duration and parameters as numbers, and with a power stream its
// energy.
//
// A task is a state of the worker state type ("Worker State") carrying the
// runtime's task id as an extra field (StarPU's JobId: the PajeSetState
// event 20 of StarPU 1.3+ traces, read with the paje parser's user_defined
// option). Its parameters are Size, the data handles described in Params
// (see ParseParams), the NUMA node of each handle (NumaNodes → h<i>_numa)
// and every other extra field holding a decimal number (Priority, which
// StarPU prints unsigned, read as the signed number it is),
// except the identifiers JobId (the record's job_id), Footprint (its
// footprint: StarPU's hash of the data sizes, hexadecimal) and Tag
// (hexadecimal).
//
// Energy is the energy stage's attribution (stages/energy) carried down to
// tasks: at every instant a node's power is shared equally among its
// workers (and processes in I/O), and a task gets its worker's share while
// it runs. A task that a power gap (or the end of the power stream) cuts
// gets no energy (null), and is counted.
package tasks

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/stages/energy"
)

// Identifier fields: not parameters.
const (
	FieldJobID     = "JobId"
	FieldFootprint = "Footprint"
	FieldTag       = "Tag"
	FieldParams    = "Params"
	FieldNuma      = "NumaNodes"
	FieldPriority  = "Priority"
)

// Priority reads StarPU's Priority field. starpu_fxt.c prints the task's
// (signed int) priority with %lu, so a negative priority comes out as
// 2⁶⁴ − k (18446744073709551615 is −1): such values are read back as the
// negative numbers they are.
func Priority(s string) (float64, bool) {
	if u, err := strconv.ParseUint(s, 10, 64); err == nil && u >= 1<<63 {
		return float64(int64(u)), true
	}
	return Number(s)
}

// Extractor recognises tasks among entities.
type Extractor struct {
	// StateType is the worker state type ("Worker State").
	StateType string
	// IDField is the extra field holding the task id ("JobId"); states
	// without it are not tasks.
	IDField string
	// PerSecond is trace time units per second (1000 for StarPU's ms).
	PerSecond float64
}

// Task returns the task e is, if it is one.
func (x *Extractor) Task(run string, e *tracecast.Entity) (tracecast.Task, bool) {
	if e.Nature != tracecast.NatureState || e.Type != x.StateType || len(e.Extra()) == 0 {
		return tracecast.Task{}, false
	}
	t := tracecast.Task{Run: run, Codelet: e.Value, Worker: e.Container, WorkerKind: WorkerKind(e.Container),
		StartS: e.Start / x.PerSecond, DurationS: (e.End - e.Start) / x.PerSecond, Params: map[string]float64{}}
	for _, f := range e.Extra() {
		switch f.Name {
		case x.IDField:
			t.JobID = f.Value
		case FieldFootprint:
			t.Footprint = f.Value
		case FieldTag:
		case FieldParams:
			ParseParams(f.Value, t.Params)
		case FieldNuma:
			// One NUMA node per handle, "_"-joined like Params.
			for i, v := range strings.Split(f.Value, "_") {
				if n, ok := Number(v); ok {
					t.Params["h"+strconv.Itoa(i)+"_numa"] = n
				}
			}
		case FieldPriority:
			if v, ok := Priority(f.Value); ok {
				t.Params[f.Name] = v
			}
		default:
			if v, ok := Number(f.Value); ok {
				t.Params[f.Name] = v
			}
		}
	}
	if t.JobID == "" {
		return tracecast.Task{}, false
	}
	t.ID = run + "/" + t.JobID
	return t, true
}

// WorkerKind is a worker's name without its trailing number: CPU0 → CPU,
// CUDA1 → CUDA, OpenCL0 → OpenCL. A name that is all digits is its own
// kind.
func WorkerKind(worker string) string {
	k := strings.TrimRight(worker, "0123456789")
	if k == "" {
		return worker
	}
	return k
}

// Number parses a decimal number (digits, an optional sign, point and
// exponent): hexadecimal, "Inf" and "NaN", which strconv accepts, are not
// parameters.
func Number(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// handleFields names the numbers of StarPU's data-interface descriptions
// (the describe functions of src/datawizard/interfaces), by code and
// count: M240x240x4 is a matrix nx × ny of 4-byte elements.
var handleFields = map[string][]string{
	"M3": {"nx", "ny", "elemsize"},             // matrix
	"M4": {"nx", "ny", "nvalues", "elemsize"},  // COO matrix
	"V2": {"nx", "elemsize"},                   // vector
	"B4": {"nx", "ny", "nz", "elemsize"},       // block
	"T5": {"nx", "ny", "nz", "nt", "elemsize"}, // tensor
	"v1": {"elemsize"},                         // variable
	"C3": {"nnz", "nrow", "elemsize"},          // CSR
	"b5": {"nnz", "nrow", "r", "c", "elemsize"},
}

// ParseParams reads StarPU's Params field — the task's data handles, each
// described by its interface and joined by "_" ("M240x240x4_M240x240x4") —
// into params: handle i's numbers as h<i>_<field> (h0_nx, h0_ny,
// h0_elemsize), with the field names of StarPU's interfaces (matrix M,
// COO M, vector V, block B, tensor T, variable v, CSR C, BCSR b; an n-dim
// array N as h<i>_n0, h<i>_n1, ..., h<i>_elemsize), else h<i>_d0, h<i>_d1,
// .... A void handle ("0") or a description that is not a letter and
// x-separated integers adds nothing. It returns the number of handles read.
func ParseParams(s string, params map[string]float64) int {
	if s == "" {
		return 0
	}
	n := 0
	for i, h := range strings.Split(s, "_") {
		// One letter (the interface), then x-separated integers.
		if len(h) < 2 || !(h[0] >= 'a' && h[0] <= 'z' || h[0] >= 'A' && h[0] <= 'Z') {
			continue
		}
		code := h[:1]
		parts := strings.Split(h[1:], "x")
		vals := make([]float64, len(parts))
		ok := true
		for k, p := range parts {
			v, err := strconv.ParseUint(p, 10, 64)
			if err != nil {
				ok = false
				break
			}
			vals[k] = float64(v)
		}
		if !ok {
			continue
		}
		names := handleFields[code+strconv.Itoa(len(vals))]
		if code == "N" {
			names = make([]string, len(vals))
			for k := range names {
				names[k] = "n" + strconv.Itoa(k)
			}
			names[len(names)-1] = "elemsize"
		}
		prefix := "h" + strconv.Itoa(i) + "_"
		for k, v := range vals {
			name := "d" + strconv.Itoa(k)
			if names != nil {
				name = names[k]
			}
			params[prefix+name] = v
		}
		n++
	}
	return n
}

// EnergyStats say what the energy attribution did.
type EnergyStats struct {
	// WithEnergy tasks got an energy; Uncovered were cut by a power gap
	// or lay outside the power stream (null energy).
	WithEnergy, Uncovered int
	// TotalJ is the sum of the tasks' energies.
	TotalJ float64
}

// AttributeEnergy sets the energy of each task: its worker's share of its
// node's power while it ran, integrated as the energy stage integrates
// (energy.Joiner, with opts; OnSlice is set here). tls are the nodes'
// timelines (energy.Collector.Build), node maps a worker to its node.
// samples are joined in the order given.
func AttributeEnergy(ts []tracecast.Task, tls map[string]*energy.Timeline, node func(worker string) string,
	samples []tracecast.PowerSample, opts energy.Options) (EnergyStats, *energy.Result) {
	type open struct {
		i      int
		e, cov float64
		a, b   float64
	}
	type nodeTasks struct {
		order  []int // tasks of the node by start
		next   int
		active []*open
	}
	acc := make([]open, len(ts))
	nodes := map[string]*nodeTasks{}
	for i := range ts {
		n := node(ts[i].Worker)
		nt := nodes[n]
		if nt == nil {
			nt = &nodeTasks{}
			nodes[n] = nt
		}
		nt.order = append(nt.order, i)
		acc[i] = open{i: i, a: ts[i].StartS, b: ts[i].StartS + ts[i].DurationS}
	}
	for _, nt := range nodes {
		sort.SliceStable(nt.order, func(x, y int) bool { return acc[nt.order[x]].a < acc[nt.order[y]].a })
	}
	opts.OnSlice = func(s energy.Slice) {
		nt := nodes[s.Node]
		if nt == nil || s.Activities <= 0 {
			return
		}
		for nt.next < len(nt.order) && acc[nt.order[nt.next]].a < s.B {
			nt.active = append(nt.active, &acc[nt.order[nt.next]])
			nt.next++
		}
		keep := nt.active[:0]
		for _, o := range nt.active {
			if o.b <= s.A {
				continue // over: it saw its last slice
			}
			keep = append(keep, o)
			a, b := math.Max(o.a, s.A), math.Min(o.b, s.B)
			if b > a {
				o.e += s.EnergyBetween(a, b) / float64(s.Activities)
				o.cov += b - a
			}
		}
		nt.active = keep
	}
	j := energy.NewJoiner(tls, opts)
	j.Add(samples)
	res := j.Finish()
	var st EnergyStats
	for i := range ts {
		o := &acc[i]
		d := o.b - o.a
		if o.cov < d-1e-9*math.Max(d, 1e-3) {
			ts[i].EnergyJ = nil
			st.Uncovered++
			continue
		}
		e := o.e
		ts[i].EnergyJ = &e
		st.WithEnergy++
		st.TotalJ += e
	}
	return st, res
}
