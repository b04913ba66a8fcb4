// Package synth is a workload synthesizer for Pallipuram et al.'s (2014) benchmarking phase:
// random DAGs whose properties span the paper's Table I (1000–4000 tasks,
// ≈1.7–2 edges per task, maximum out-degree 7–18, graph level 26–132),
// list-scheduled on R workers, written as a Paje trace in StarPU 1.4's own
// format. The paper's 1600 DAGs and its cluster traces are not public; this
// stands in for them.
//
// Everything is deterministic given the seed, and the trace is streamed: the
// writer keeps the DAG (a few bytes per task and edge) and a bounded set of
// pending lines (a few per worker), never the trace.
package synth

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
)

// DAGParams says what DAG to draw. Zero fields are drawn at random within
// Table I's ranges.
type DAGParams struct {
	Tasks int
	Seed  uint64
	// Levels is the graph level: the number of tasks on the longest path
	// from a root to a leaf (Table I: 26–132).
	Levels int
	// EdgeRatio is edges per task (Table I: ≈1.72–1.98).
	EdgeRatio float64
	// MaxOutDegree is the largest out-degree (Table I: 7–18).
	MaxOutDegree int
}

// DAG is a layered random DAG: every task of level l > 0 has a parent in
// level l−1 (so the graph level is exactly Levels), and edges only go from
// lower to higher levels.
type DAG struct {
	Level    []int32   // per task, 0-based
	Children [][]int32 // per task, sorted
	NParents []int32
	Edges    int
	Params   DAGParams // with the drawn values filled in
}

// Props are the DAG's properties, the columns of Table I.
type Props struct {
	Tasks        int     `json:"tasks"`
	Edges        int     `json:"edges"`
	EdgeRatio    float64 `json:"edge_ratio"`
	MaxOutDegree int     `json:"max_out_degree"`
	Level        int     `json:"level"`
	Roots        int     `json:"roots"`
	Leaves       int     `json:"leaves"`
}

// Fill draws the zero fields of p from Table I's ranges.
func (p DAGParams) Fill() DAGParams {
	r := rand.New(rand.NewPCG(p.Seed, 0x7ab1e1))
	t := p.Tasks
	if p.Levels <= 0 {
		lo, hi := max(26, t/80), min(132, 40+t/40)
		if hi < lo {
			hi = lo
		}
		p.Levels = lo + r.IntN(hi-lo+1)
		if p.Levels > t/2 { // small DAGs (tests, demos): keep levels wide
			p.Levels = max(2, t/2)
		}
	}
	if p.EdgeRatio <= 0 {
		p.EdgeRatio = 1.72 + 0.26*r.Float64()
	}
	if p.MaxOutDegree <= 0 {
		hi := min(18, 10+t/500)
		p.MaxOutDegree = 7 + r.IntN(hi-7+1)
	}
	return p
}

// MaxTasks bounds DAGParams.Tasks: the DAG and the per-task draws take
// about 100 bytes a task (1 GB at the bound).
const MaxTasks = 10_000_000

// Check refuses the parameters NewDAG cannot draw a DAG from, before any
// work: Tasks outside [2, MaxTasks], negative Levels or more levels than
// tasks, a negative MaxOutDegree, 1, or more than Tasks−1 (no task can
// have more children), a negative or non-finite EdgeRatio or one above
// the maximum out-degree (every task would need more children than it may
// have). Zero fields are drawn by Fill and checked as drawn.
func (p DAGParams) Check() error {
	n := p.Tasks
	switch {
	case n < 2 || n > MaxTasks:
		return paramErr("tasks", "%d tasks: must be in [2, %d]", n, MaxTasks)
	case p.Levels < 0 || p.Levels == 1 || p.Levels > n:
		return paramErr("levels", "%d levels for %d tasks: must be 0 (drawn) or in [2, %d] (the number of tasks)", p.Levels, n, n)
	case p.MaxOutDegree < 0 || p.MaxOutDegree == 1 || p.MaxOutDegree > n-1:
		return paramErr("max-out-degree", "%d for %d tasks: must be 0 (drawn) or in [2, %d] (tasks - 1)", p.MaxOutDegree, n, n-1)
	case !(p.EdgeRatio >= 0 && p.EdgeRatio <= float64(n-1)):
		return paramErr("edge-ratio", "%g edges per task for %d tasks: must be 0 (drawn) or in (0, %d] (tasks - 1)", p.EdgeRatio, n, n-1)
	}
	f := p.Fill()
	if f.Levels < 2 || f.Levels > n || f.MaxOutDegree < 2 {
		return fmt.Errorf("synth: impossible DAG: %d tasks, %d levels, max out-degree %d", n, f.Levels, f.MaxOutDegree)
	}
	if f.EdgeRatio > float64(f.MaxOutDegree) {
		return paramErr("edge-ratio", "%g edges per task is more than the max out-degree %d: tasks cannot have that many children", f.EdgeRatio, f.MaxOutDegree)
	}
	return nil
}

// ParamError is a parameter of DAGParams or TraceParams out of its range.
type ParamError struct {
	// Param is the parameter, as synth's command-line flag names it
	// ("tasks", "levels", "max-out-degree", "edge-ratio", "workers",
	// "transfer-prob", "transfer", "overhead").
	Param string
	Msg   string // what is wrong, without the parameter's name
}

func (e *ParamError) Error() string { return "synth: " + e.Param + ": " + e.Msg }

func paramErr(param, format string, args ...any) error {
	return &ParamError{Param: param, Msg: fmt.Sprintf(format, args...)}
}

// NewDAG draws a DAG; parameters Check refuses are an error.
func NewDAG(p DAGParams) (*DAG, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	p = p.Fill()
	n, L, D := p.Tasks, p.Levels, p.MaxOutDegree
	r := rand.New(rand.NewPCG(p.Seed, 0xda6))
	// Level widths: random weights in [0.5, 1.5), at least one task each,
	// and level l at most D times level l−1 (every task needs a parent).
	width := make([]int, L)
	wts := make([]float64, L)
	sum := 0.0
	for i := range wts {
		wts[i] = 0.5 + r.Float64()
		sum += wts[i]
	}
	left := n - L
	for i := range width {
		width[i] = 1 + int(float64(n-L)*wts[i]/sum)
		left -= width[i] - 1
	}
	for i := 0; left > 0; i = (i + 1) % L {
		width[i]++
		left--
	}
	for l := 1; l < L; l++ {
		for width[l] > D*width[l-1] {
			width[l]--
			width[l-1]++
		}
	}
	d := &DAG{Level: make([]int32, n), Children: make([][]int32, n), NParents: make([]int32, n), Params: p}
	start := make([]int, L+1)
	for l := 0; l < L; l++ {
		start[l+1] = start[l] + width[l]
		for i := start[l]; i < start[l+1]; i++ {
			d.Level[i] = int32(l)
		}
	}
	has := func(a, b int) bool {
		for _, c := range d.Children[a] {
			if int(c) == b {
				return true
			}
		}
		return false
	}
	add := func(a, b int) bool {
		if len(d.Children[a]) >= D || has(a, b) {
			return false
		}
		d.Children[a] = append(d.Children[a], int32(b))
		d.NParents[b]++
		d.Edges++
		return true
	}
	// One parent in the previous level for every task past level 0.
	for l := 1; l < L; l++ {
		for b := start[l]; b < start[l+1]; b++ {
			ok := false
			for try := 0; try < 64 && !ok; try++ {
				ok = add(start[l-1]+r.IntN(width[l-1]), b)
			}
			for a := start[l-1]; a < start[l] && !ok; a++ {
				ok = add(a, b)
			}
			if !ok {
				return nil, fmt.Errorf("synth: level %d has no parent left for task %d", l-1, b)
			}
		}
	}
	// One task gets the maximum out-degree (children in the next levels).
	hub := r.IntN(start[L-1])
	for tries := 0; len(d.Children[hub]) < D && tries < 100*D; tries++ {
		lo := start[d.Level[hub]+1]
		add(hub, lo+r.IntN(n-lo))
	}
	// Extra edges up to the target ratio, mostly to the next level.
	target := int(float64(n)*p.EdgeRatio + 0.5)
	for tries := 0; d.Edges < target && tries < 50*n; tries++ {
		b := start[1] + r.IntN(n-start[1])
		lb := int(d.Level[b])
		la := lb - 1
		if lb > 1 && r.Float64() < 0.3 {
			la = lb - 1 - r.IntN(min(lb, 4))
		}
		add(start[la]+r.IntN(width[la]), b)
	}
	for _, c := range d.Children {
		sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	}
	return d, nil
}

// Props computes the DAG's properties; the level is the longest path
// (in tasks), computed, not assumed.
func (d *DAG) Props() Props {
	n := len(d.Level)
	depth := make([]int32, n)
	p := Props{Tasks: n, Edges: d.Edges, EdgeRatio: float64(d.Edges) / float64(n)}
	// Task ids are a topological order (edges go to higher levels, and
	// levels are laid out in id order).
	for a := 0; a < n; a++ {
		if d.NParents[a] == 0 {
			p.Roots++
			depth[a] = 1
		}
		if len(d.Children[a]) == 0 {
			p.Leaves++
		}
		p.MaxOutDegree = max(p.MaxOutDegree, len(d.Children[a]))
		for _, c := range d.Children[a] {
			depth[c] = max(depth[c], depth[a]+1)
		}
		p.Level = max(p.Level, int(depth[a]))
	}
	return p
}

// WriteDOT writes the DAG in Graphviz DOT.
func (d *DAG) WriteDOT(w io.Writer, name string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph %q {\n", name)
	for a, cs := range d.Children {
		if len(cs) == 0 && d.NParents[a] == 0 {
			fmt.Fprintf(bw, "  t%d;\n", a)
		}
		for _, c := range cs {
			fmt.Fprintf(bw, "  t%d -> t%d;\n", a, c)
		}
	}
	fmt.Fprintf(bw, "}\n")
	return bw.Flush()
}
