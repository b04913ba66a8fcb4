// Package signal turns resolved Paje states into event-occurrence signals:
// which class (idle, compute, communication, other) each selected container
// is in at every instant, and x_k, the number of containers in a class at
// t_k = t_0 + kΔ, sampled at the period of Pallipuram et al. (2014) (half the shortest time
// between two changes of the signal) or at a given one.
//
// Semantics, in full:
//   - The selected containers are those whose container type is
//     Rules.ContainerType (StarPU: "Worker"; SimGrid SMPI: "MPI", the ranks).
//   - Only states of type Rules.StateType count ("Worker State", "MPI_STATE").
//   - At any instant the innermost state — the top of the container's stack,
//     the open state with the highest imbrication — decides the class; a
//     container with no open state is in Rules.Outside.
//   - States are intervals [start, end): at a change time the new class
//     already holds.
//   - t_0 is the first state start among the selected containers; samples
//     are taken for every k with t_k before the last state end among them.
//
// Memory: the "signal" and offline "predict" stages read a file twice — a
// Survey for R, t_0, the end and Pallipuram et al.'s (2014) period, then a Sampler that
// samples from the parser's watermark as the file is read again — so they
// keep the open states and the containers, never the signal or the trace.
// Read once (standard input, a tail, Kafka) the period is required and R
// is fixed at the first sample. A trace whose states arrive behind the
// watermark (not sorted within the reorder horizon) is sampled from every
// state kept, with a warning.
package signal

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/tracecast/tracecast/internal/strmemo"
)

// Class is what a container is doing.
type Class uint8

// The classes of Pallipuram et al. (2014), plus other for what fits none.
const (
	Idle Class = iota
	Compute
	Comm
	Other
	NumClasses
)

var classNames = [NumClasses]string{"idle", "compute", "comm", "other"}

func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", c)
}

// ParseClass reads a class name (idle, compute, comm, other).
func ParseClass(s string) (Class, error) {
	for i, n := range classNames {
		if strings.EqualFold(s, n) {
			return Class(i), nil
		}
	}
	return 0, fmt.Errorf("unknown class %q (idle, compute, comm, other)", s)
}

// Rule gives a class to the state values it matches: exactly one of
// Values, or Pattern.
type Rule struct {
	Class   Class
	Values  []string
	Pattern string
	re      *regexp.Regexp
	set     map[string]bool
}

// Rules maps the states of the selected containers to classes. The first
// matching rule wins; a value no rule matches is in Default.
type Rules struct {
	Name          string
	ContainerType string
	StateType     string
	Rules         []Rule
	Default       Class
	Outside       Class
	cache         *strmemo.Map[Class]
}

// StarPU is the default for StarPU traces: a worker computes while a task
// (a codelet, whatever its name) runs, communicates while it fetches its
// input or pushes its output, and is idle otherwise — StarPU ≤1.3's
// explicit Idle as well as 1.4's Sleeping, Scheduling, Overhead,
// Progressing and the other runtime states.
func StarPU() *Rules {
	return &Rules{
		Name:          "starpu",
		ContainerType: "Worker",
		StateType:     "Worker State",
		Rules: []Rule{
			{Class: Comm, Values: []string{"FetchingInput", "PushingOutput"}},
			{Class: Idle, Values: []string{"Idle", "Sleeping", "Scheduling", "Overhead", "Progressing",
				"Initializing", "Deinitializing", "Callback", "Submitting task", "Building task",
				"Throttling task submission", "Parallel sync", "Unpartitioning", "Hypervisor",
				"Waiting all tasks"}},
			{Class: Compute, Values: []string{"Executing"}},
		},
		Default: Compute, // codelet names: POTRF, GEMM, starpu_sgemm_gemm, ...
		Outside: Idle,
	}
}

// SMPI is the default for SimGrid SMPI traces: a rank blocked in a
// receive, a wait or a barrier is idle; in another MPI call (sends,
// collectives) it communicates; outside MPI calls — or in SMPI's
// "computing" state — it computes.
func SMPI() *Rules {
	return &Rules{
		Name:          "smpi",
		ContainerType: "MPI",
		StateType:     "MPI_STATE",
		Rules: []Rule{
			{Class: Compute, Values: []string{"computing", "sleeping"}},
			{Class: Idle, Pattern: `(?i)^p?mpi_(recv|wait|waitall|waitany|waitsome|barrier|probe|mprobe)$|^(recv|wait|waitall|waitany|waitsome|barrier)$`},
		},
		Default: Comm,
		Outside: Compute,
	}
}

// Presets lists the built-in rule sets by name.
var Presets = map[string]func() *Rules{"starpu": StarPU, "smpi": SMPI}

// compiledPresets returns the compiled rules that rules names: a preset
// (starpu, smpi), or for auto both, StarPU's first.
func compiledPresets(rules string) ([]*Rules, error) {
	names := []string{rules}
	if rules == "auto" {
		names = []string{"starpu", "smpi"}
	}
	var out []*Rules
	for _, n := range names {
		mk, ok := Presets[n]
		if !ok {
			return nil, fmt.Errorf("rules: %q is not auto, starpu or smpi", n)
		}
		r := mk()
		if err := r.Compile(); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Compile checks the rules and prepares them for Classify.
func (r *Rules) Compile() error {
	for i := range r.Rules {
		rule := &r.Rules[i]
		if (len(rule.Values) == 0) == (rule.Pattern == "") {
			return fmt.Errorf("rule %d (%s): give either values or a pattern", i+1, rule.Class)
		}
		if rule.Pattern != "" {
			re, err := regexp.Compile(rule.Pattern)
			if err != nil {
				return fmt.Errorf("rule %d (%s): %w", i+1, rule.Class, err)
			}
			rule.re = re
		}
		rule.set = make(map[string]bool, len(rule.Values))
		for _, v := range rule.Values {
			rule.set[v] = true
		}
	}
	r.cache = &strmemo.Map[Class]{}
	return nil
}

// Classify gives the class of a state value (memoised: state values repeat).
func (r *Rules) Classify(value string) Class {
	if c, ok := r.cache.Get(value); ok {
		return c
	}
	c := r.Default
	for i := range r.Rules {
		rule := &r.Rules[i]
		if rule.set[value] || rule.re != nil && rule.re.MatchString(value) {
			c = rule.Class
			break
		}
	}
	if r.cache.Len() < 1<<16 {
		r.cache.Put(value, c)
	}
	return c
}

// Describe is a one-line summary for logs and --help.
func (r *Rules) Describe() string {
	var parts []string
	for _, rule := range r.Rules {
		what := rule.Pattern
		if what == "" {
			vs := append([]string(nil), rule.Values...)
			sort.Strings(vs)
			what = strings.Join(vs, "|")
		}
		parts = append(parts, rule.Class.String()+"="+what)
	}
	return fmt.Sprintf("%s: containers of type %q, states %q; %s; otherwise %s; no state: %s",
		r.Name, r.ContainerType, r.StateType, strings.Join(parts, "; "), r.Default, r.Outside)
}
