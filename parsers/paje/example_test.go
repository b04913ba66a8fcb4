package paje_test

import (
	"fmt"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
)

// A Paje trace: two workers of one process, their states (Idle, then a
// task) and a variable. StarPU's and SimGrid's traces have the same shape,
// with many more lines.
const trace = `%EventDef PajeDefineContainerType 0
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineStateType 2
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineVariableType 1
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeCreateContainer 6
% Time date
% Alias string
% Type string
% Container string
% Name string
%EndEventDef
%EventDef PajeSetState 11
% Time date
% Type string
% Container string
% Value string
%EndEventDef
%EventDef PajeSetVariable 8
% Time date
% Type string
% Container string
% Value double
%EndEventDef
0 P 0 Process
0 W P Worker
2 S W State
1 L P Load
6 0 p P 0 p0
6 0 w0 W p w0
6 0 w1 W p w1
11 0 S w0 Idle
11 0 S w1 GEMM
8 0 L p 0.5
11 2.5 S w0 GEMM
11 3 S w1 Idle
8 3 L p 1
`

// Read a Paje stream (plain or gzip, any io.Reader: a file, standard input,
// a pipe a running application writes) and get its resolved entities —
// what pj_dump prints, one line each — in batches, as they complete.
func ExampleRead() {
	opts := paje.DefaultOptions()
	opts.Name = "example.trace" // errors say FILE:LINE: reason
	idle := map[string]float64{}
	stats, err := paje.Read(strings.NewReader(trace), opts, func(batch []tracecast.Entity) error {
		for _, e := range batch { // the slice is reused: copy what you keep
			fmt.Printf("%-9s %-2s %-5s %g..%g %s %g\n", e.Nature, e.Container, e.Type, e.Start, e.End, e.Value, e.Number)
			if e.Nature == tracecast.NatureState && e.Value == "Idle" {
				idle[e.Container] += e.Duration()
			}
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("lines:", stats.Lines, "entities:", stats.Entities, "idle time:", idle)
	// Output:
	// State     w0 State 0..2.5 Idle 0
	// State     w1 State 0..3 GEMM 0
	// State     w0 State 2.5..3 GEMM 0
	// Container p0 Worker 0..3 w0 0
	// State     w1 State 3..3 Idle 0
	// Container p0 Worker 0..3 w1 0
	// Variable  p0 Load  0..3  0.5
	// Variable  p0 Load  3..3  1
	// Container 0  Process 0..3 p0 0
	// Container 0  0     0..3 0 0
	// lines: 47 entities: 10 idle time: map[w0:2.5 w1:0]
}
