package paje

import (
	"fmt"
	"strings"
	"testing"
)

// manyVarTypes is a trace defining n variable types on workers, each set
// once on w1.
func manyVarTypes(n int) string {
	var b strings.Builder
	b.WriteString(varHdr)
	for i := range n {
		fmt.Fprintf(&b, "12 v%d W \"var %d\"\n", i, i)
	}
	for i := range n {
		fmt.Fprintf(&b, "10 %d w1 v%d %d\n", 1+i, i, i)
	}
	return b.String()
}

// TestMaxTypes: the types a trace defines are bounded by MaxTypes, with an
// error naming the line and the option (500k variable types took 1 GB).
func TestMaxTypes(t *testing.T) {
	o := DefaultOptions()
	o.Name, o.MaxTypes = "x", 100
	_, _, err := dump(t, strings.NewReader(manyVarTypes(200)), o)
	line := strings.Count(varHdr, "\n") + 100 - 6 + 1 // the header defines 6 types, the root counted
	want := fmt.Sprintf("x:%d: more than 100 types and entity values (raise --max-types)", line)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
	o.MaxTypes = 206
	if _, _, err := dump(t, strings.NewReader(manyVarTypes(200)), o); err != nil {
		t.Fatalf("206 types allowed: %v", err)
	}
	if err := (&Options{MaxLineBytes: 1, MaxContainers: 1, MaxOpenStates: 1, MaxBuffered: 1, Threads: 1}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "--max-types must be positive") {
		t.Fatalf("MaxTypes 0 validated: %v", err)
	}
}

// TestMaxEntityValues: entity values count against MaxTypes too (3
// million of them took 850 MB and 10 s), a value defined again does not,
// and the last definition of a value is the one in force.
func TestMaxEntityValues(t *testing.T) {
	valueDef := "%EventDef PajeDefineEntityValue 20\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
	trace := func(n int) string {
		var b strings.Builder
		b.WriteString(valueDef + hdr)
		for i := range n {
			fmt.Fprintf(&b, "20 v%d S \"value %d\"\n", i%50, i) // 50 values, each defined again
		}
		for i := range n {
			fmt.Fprintf(&b, "20 u%d S \"other %d\"\n", i, i)
		}
		b.WriteString("4 1 w1 S v7\n")
		return b.String()
	}
	o := DefaultOptions()
	o.Name, o.MaxTypes = "x", 100
	// 5 types (the root counted), 50 values defined again and again, then
	// new ones: the 46th of those is one too many.
	_, _, err := dump(t, strings.NewReader(trace(200)), o)
	line := strings.Count(valueDef+hdr, "\n") + 200 + 46
	want := fmt.Sprintf("x:%d: more than 100 types and entity values (raise --max-types)", line)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
	o.MaxTypes = 5 + 50 + 200
	got, _, err := dump(t, strings.NewReader(trace(200)), o)
	if err != nil {
		t.Fatalf("%d types and values allowed: %v", o.MaxTypes, err)
	}
	if !strings.Contains(strings.Join(got, "\n"), ", value 157") {
		t.Errorf("v7 is not its last definition's name: %q", got)
	}
}

// TestSlotsSparse: a container's slots are indexed by type id only for the
// first ids; using a type defined late does not cost a pointer per type
// defined before it.
func TestSlotsSparse(t *testing.T) {
	o := DefaultOptions()
	o.ReorderHorizon = 1e9
	p := NewParser(o)
	for i, l := range strings.Split(strings.TrimSuffix(manyVarTypes(2000), "\n"), "\n") {
		if err := p.Line([]byte(l), int64(i+1)); err != nil {
			t.Fatal(err)
		}
		if p.Pending() > BatchSize {
			p.Take(nil)
		}
	}
	c := p.sim.containers["w1"]
	if len(c.slots) > denseSlots || len(c.slotOrder) != 2000 {
		t.Fatalf("w1: %d dense slots (at most %d), %d slots in all, want 2000", len(c.slots), denseSlots, len(c.slotOrder))
	}
}

// TestFinishStopsWhenOutputFails: at the end of the trace every live
// container is ended, which a million containers make long; once the
// output failed (a cancelled pipeline) the parser stops there instead of
// ending the rest for nothing while the pipeline waits for it.
func TestFinishStopsWhenOutputFails(t *testing.T) {
	var b strings.Builder
	b.WriteString(hdr)
	n := 10 * BatchSize
	for i := range n {
		fmt.Fprintf(&b, "2 1 c%d W p \"c%d\"\n4 2 c%d S Idle\n", i, i, i)
	}
	p := NewParser(DefaultOptions())
	for i, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if err := p.Line([]byte(l), int64(i+1)); err != nil {
			t.Fatal(err)
		}
		p.Take(nil)
	}
	calls := 0
	p.sim.drain = func() error {
		calls++
		return fmt.Errorf("cancelled")
	}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(p.sim.live) < n/2 || p.Pending() > 2*BatchSize {
		t.Fatalf("after the output failed: %d drains, %d of %d containers still live, %d entities pending", calls, len(p.sim.live), n+3, p.Pending())
	}
}

// TestHeaderBounds: event definitions count against MaxTypes (a million
// of them took 480 MB), and a definition has at most 32767 fields, the
// range of its columns (with more, a field past the 32768th wrapped to a
// negative column: "obligatory fields missing: Value" for a Value that was
// defined).
func TestHeaderBounds(t *testing.T) {
	var defs strings.Builder
	for i := range 30 {
		fmt.Fprintf(&defs, "%%EventDef PajeSetState %d\n%% Time date\n%% Container string\n%% Type string\n%% Value string\n%%EndEventDef\n", 100+i)
	}
	o := DefaultOptions()
	o.Name, o.MaxTypes = "x", 20
	_, _, err := dump(t, strings.NewReader(defs.String()), o)
	if want := "x:121: more than 20 event definitions (raise --max-types)"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
	o.MaxTypes = 30
	if _, _, err := dump(t, strings.NewReader(defs.String()), o); err != nil {
		t.Fatalf("30 definitions allowed: %v", err)
	}

	var wide strings.Builder
	wide.WriteString("%EventDef PajeSetState 1\n% Time date\n% Container string\n% Type string\n")
	for i := range maxDefFields {
		fmt.Fprintf(&wide, "%% f%d string\n", i)
	}
	wide.WriteString("% Value string\n%EndEventDef\n")
	_, _, err = dump(t, strings.NewReader(wide.String()), DefaultOptions())
	if want := fmt.Sprintf(":%d: event 1 has more than 32767 fields", 2+maxDefFields); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// TestLineTimerBounded: the replay pacer reads the header too, with the
// parser's bound on event definitions.
func TestLineTimerBounded(t *testing.T) {
	var lt LineTimer
	n := DefaultOptions().MaxTypes + 100
	for i := range n {
		for _, l := range []string{fmt.Sprintf("%%EventDef PajeSetState %d", 100+i), "% Time date", "% Container string", "% Type string", "% Value string", "%EndEventDef"} {
			lt.Time([]byte(l))
		}
	}
	if got := len(lt.hdr.defs); got != DefaultOptions().MaxTypes {
		t.Errorf("%d event definitions kept, want %d", got, DefaultOptions().MaxTypes)
	}
}
