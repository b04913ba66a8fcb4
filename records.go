package tracecast

// Nature says what kind of Paje entity a record is, with the names pj_dump
// prints in its first column.
type Nature uint8

// The five natures of resolved Paje entities.
const (
	NatureContainer Nature = iota + 1
	NatureState
	NatureVariable
	NatureEvent
	NatureLink
)

var natureNames = [...]string{"", "Container", "State", "Variable", "Event", "Link"}

// String returns the pj_dump name of the nature ("State", "Link", ...).
func (n Nature) String() string {
	if int(n) < len(natureNames) {
		return natureNames[n]
	}
	return "Unknown"
}

// Field is a user-defined (non-standard) field of a Paje event, kept by name.
type Field struct {
	Name  string
	Value string
}

// Entity is one resolved Paje entity: a container's lifetime, a state interval,
// a variable's constant piece, an instantaneous event or a link. It is the
// record pj_dump prints, one per line. Times are in the trace's own unit
// (seconds for SimGrid, milliseconds for StarPU). Strings are interned by the
// parser and shared between records: treat them as read-only.
type Entity struct {
	Nature Nature
	// Container is the name of the container holding the entity; for a
	// container record it is the parent's name ("0" for the root's parent).
	Container string
	// Type is the name of the entity's type (container type for containers).
	Type string
	// Start and End bound the entity; End == Start for events.
	Start, End float64
	// Imbrication is the nesting depth of a state (0 for the bottom of the stack).
	Imbrication int
	// Value is the state, event or link value name, or a container's own name.
	Value string
	// Number is a variable's value.
	Number float64
	// StartContainer, EndContainer and Key describe links.
	StartContainer, EndContainer, Key string
	// Extra holds user-defined fields in header order, only when the parser
	// is asked to keep them.
	Extra []Field
}

// Duration is End − Start.
func (e *Entity) Duration() float64 { return e.End - e.Start }

// Line is one line of a text stream, without its line terminator, with where
// it came from. Data is only valid until the batch carrying it is released.
type Line struct {
	Data []byte
	// Num is the 1-based line number in the stream (0 when unknown).
	Num int64
	// End is the stream position just after the line: a byte offset for
	// files, the message offset + 1 for Kafka.
	End int64
}

// Sample is one value of an event-occurrence signal: X of the selected
// containers were in the signal's class at T = T0 + K·Δ (trace time units).
type Sample struct {
	K int64
	T float64
	X int32
}
