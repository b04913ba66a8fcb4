// Package pajetest builds Paje traces for tests: a header's event
// definitions from their names and ids (fields in the usual order, or as
// a test declares them), and a trace with one sample moved late.
package pajetest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Def is one event definition of a Paje header: the event's name, the id
// the trace's lines give it, and its fields ("Time date", ...) in order.
type Def struct {
	Name   string
	ID     int
	Fields []string
}

// Header returns the definitions in order, each an "%EventDef NAME ID"
// block: a trace's header, its lines to follow.
func Header(defs ...Def) string {
	var b strings.Builder
	for _, d := range defs {
		b.WriteString("%EventDef " + d.Name + " " + strconv.Itoa(d.ID) + "\n")
		for _, f := range d.Fields {
			b.WriteString("% " + f + "\n")
		}
		b.WriteString("%EndEventDef\n")
	}
	return b.String()
}

// ContainerFirst returns d with its Container field declared before its
// Type field (the order some writers use; both are valid Paje).
func (d Def) ContainerFirst() Def {
	fs := slices.Clone(d.Fields)
	i, j := slices.Index(fs, "Type string"), slices.Index(fs, "Container string")
	if i >= 0 && j >= 0 {
		fs[i], fs[j] = fs[j], fs[i]
	}
	return Def{d.Name, d.ID, fs}
}

// With returns d with more fields declared after its own ("Tag string").
func (d Def) With(fields ...string) Def {
	return Def{d.Name, d.ID, append(slices.Clone(d.Fields), fields...)}
}

func def(name string, fields ...string) func(id int) Def {
	return func(id int) Def { return Def{name, id, fields} }
}

// The definitions of the events tracecast reads, with their fields in the
// usual order (pj_dump's and StarPU's: Time, Type, Container, ...).
var (
	ContainerType    = def("PajeDefineContainerType", "Alias string", "Type string", "Name string")
	StateType        = def("PajeDefineStateType", "Alias string", "Type string", "Name string")
	VariableType     = def("PajeDefineVariableType", "Alias string", "Type string", "Name string")
	LinkType         = def("PajeDefineLinkType", "Alias string", "Type string", "StartContainerType string", "EndContainerType string", "Name string")
	CreateContainer  = def("PajeCreateContainer", "Time date", "Alias string", "Type string", "Container string", "Name string")
	DestroyContainer = def("PajeDestroyContainer", "Time date", "Type string", "Name string")
	SetState         = def("PajeSetState", "Time date", "Type string", "Container string", "Value string")
	PushState        = def("PajePushState", "Time date", "Type string", "Container string", "Value string")
	PopState         = def("PajePopState", "Time date", "Type string", "Container string")
	SetVariable      = def("PajeSetVariable", "Time date", "Type string", "Container string", "Value double")
	AddVariable      = def("PajeAddVariable", "Time date", "Type string", "Container string", "Value double")
	StartLink        = def("PajeStartLink", "Time date", "Type string", "Container string", "StartContainer string", "Value string", "Key string")
	EndLink          = def("PajeEndLink", "Time date", "Type string", "Container string", "EndContainer string", "Value string", "Key string")
)

// LateSample returns the StarPU demo trace (its lines, in milliseconds)
// with its first variable sample (event 13) after 175 ms moved after the
// lines more than 5 ms later than it: a sample that comes late.
func LateSample(t testing.TB, trace []byte) []byte {
	t.Helper()
	lines := strings.Split(string(trace), "\n")
	at, t0 := -1, 0.0
	for i, l := range lines {
		if fs := strings.Fields(l); len(fs) > 2 && fs[0] == "13" {
			if v, _ := strconv.ParseFloat(fs[1], 64); v > 175 {
				at, t0 = i, v
				break
			}
		}
	}
	if at < 0 {
		t.Fatal("no variable sample after 175 ms")
	}
	moved := lines[at]
	lines = append(lines[:at], lines[at+1:]...)
	for i := at; i < len(lines); i++ {
		if fs := strings.Fields(lines[i]); len(fs) > 1 {
			if v, err := strconv.ParseFloat(fs[1], 64); err == nil && v > t0+5 {
				lines = append(lines[:i], append([]string{moved}, lines[i:]...)...)
				return []byte(strings.Join(lines, "\n"))
			}
		}
	}
	t.Fatal("no later line")
	return nil
}
