package tracecast

import "time"

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
	// Ext holds the fields few entities have: a link's ends and key,
	// and user-defined fields. It is nil for the others; StartContainer,
	// EndContainer, Key and Extra read it, empty then. Kept out of line,
	// they leave an entity 96 bytes instead of 160: the parser writes, and
	// the sinks read, a million entities per 40 MB of StarPU trace.
	Ext *EntityExt
}

// EntityExt is the part of an Entity few entities have (Entity.Ext).
type EntityExt struct {
	// StartContainer, EndContainer and Key describe links.
	StartContainer, EndContainer, Key string
	// Extra holds user-defined fields in header order, only when the parser
	// is asked to keep them.
	Extra []Field
}

// StartContainer is a link's start container ("" for other entities).
func (e *Entity) StartContainer() string {
	if e.Ext == nil {
		return ""
	}
	return e.Ext.StartContainer
}

// EndContainer is a link's end container ("" for other entities).
func (e *Entity) EndContainer() string {
	if e.Ext == nil {
		return ""
	}
	return e.Ext.EndContainer
}

// Key is a link's key ("" for other entities).
func (e *Entity) Key() string {
	if e.Ext == nil {
		return ""
	}
	return e.Ext.Key
}

// Extra returns the user-defined fields, in header order (none unless the
// parser was asked to keep them).
func (e *Entity) Extra() []Field {
	if e.Ext == nil {
		return nil
	}
	return e.Ext.Extra
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
	// Partial marks the last line of a stream that ended without a
	// newline (a file cut short): it may be incomplete, which a parser
	// that cannot read it says.
	Partial bool
}

// Chunk is a run of whole lines of a text stream: what a file source hands
// a parser that splits lines itself (component.Parser.Chunks) instead of
// one Line per line, so that the parser can split and tokenize chunks on
// every core.
type Chunk struct {
	// Data holds whole lines, each ending with '\n', except the stream's
	// last line, which may lack it (a file cut short). It is only valid
	// until Release.
	Data []byte
	// Lines is the number of lines in Data.
	Lines int64
	// First marks the stream's first chunk (its first line may start with
	// a UTF-8 byte order mark).
	First bool
	// Release, when set, gives Data's buffer back to the source for reuse;
	// the consumer calls it once, when it is done with Data.
	Release func()
}

// Sample is one value of an event-occurrence signal: X of the selected
// containers were in the signal's class at T = T0 + K·Δ (trace time units).
type Sample struct {
	K int64   `json:"k" desc:"sample index" schema:"minimum=0"`
	T float64 `json:"t" desc:"sample time, in trace units"`
	X int32   `json:"x" desc:"number of containers in the class" schema:"minimum=0"`
}

// Window is the KS comparison of one window of a signal with the one before:
// samples [Index·N, (Index+1)·N), trace times [Start, End).
type Window struct {
	Trace string  `json:"trace" desc:"the trace (stream) id"`
	Class string  `json:"class" desc:"the signal's class (idle, compute, comm, other)"`
	Index int64   `json:"index" desc:"window index" schema:"minimum=0"`
	Start float64 `json:"start" desc:"window start, trace units"`
	End   float64 `json:"end" desc:"window end, trace units"`
	N     int     `json:"n" desc:"samples per window" schema:"minimum=1"`
	// D is the two-sample KS statistic against window Index−1, P its
	// p-value; Hit is true when H0 (same distribution) is not rejected.
	// Window 0 has nothing to compare with: Compared is false.
	D        float64 `json:"d" tracecast:"nullable" nullif:"compared=false" desc:"two-sample KS statistic against window index−1; null for a window compared with none" schema:"minimum=0,maximum=1"`
	P        float64 `json:"p" tracecast:"nullable" nullif:"compared=false" desc:"its p-value; null for a window compared with none" schema:"minimum=0,maximum=1"`
	Hit      bool    `json:"hit" tracecast:"nullable" nullif:"compared=false" desc:"true when H0 (same distribution) is not rejected; null for a window compared with none"`
	Compared bool    `json:"compared" desc:"false for the first window, which has nothing to compare with"`
}

// Prediction says, from the ECDF of the last complete window, how likely
// the next window is to have at least AtLeast containers in Class:
// Likelihood = P(X ≥ AtLeast). Window, Start and End are those of the
// predicted window; HorizonS is its length in seconds.
type Prediction struct {
	ID         string  `json:"id" desc:"TRACE/w<window>/<query>: consumers de-duplicate on it"`
	Trace      string  `json:"trace" desc:"the trace (stream) id"`
	Window     int64   `json:"window" desc:"the predicted window" schema:"minimum=0"`
	Start      float64 `json:"start" desc:"predicted window start, trace units"`
	End        float64 `json:"end" desc:"predicted window end, trace units"`
	HorizonS   float64 `json:"horizon_s" desc:"the predicted window's length, seconds" schema:"minimum=0"`
	Class      string  `json:"class" desc:"the signal's class"`
	Query      string  `json:"query" desc:"the query, e.g. idle>=25%"`
	AtLeast    int     `json:"at_least" desc:"k: the query's threshold in containers" schema:"minimum=0"`
	R          int     `json:"r" desc:"R: the number of selected containers" schema:"minimum=0"`
	Likelihood float64 `json:"likelihood" desc:"P(X ≥ at_least) over the predicted window" schema:"minimum=0,maximum=1"`
	// EmittedAt is when the record was produced (UTC wall clock; not part
	// of the id); null when zero.
	EmittedAt time.Time `json:"emitted_at" tracecast:"nullable" desc:"when the record was produced (UTC wall clock, RFC 3339; not part of the id); null when unknown"`
}

// Verdict is published when a predicted window completes: the KS test
// between the window the prediction came from and the one it predicted,
// and what was observed.
type Verdict struct {
	// ID is the verdict's own id (the prediction's with "/verdict"), so a
	// subscriber that de-duplicates on id keeps both; PredictionID links it.
	ID           string    `json:"id" desc:"the prediction's id with /verdict"`
	PredictionID string    `json:"prediction_id" desc:"the prediction this verdict scores"`
	Trace        string    `json:"trace" desc:"the trace (stream) id"`
	Window       int64     `json:"window" desc:"the predicted window" schema:"minimum=0"`
	Query        string    `json:"query" desc:"the query"`
	Likelihood   float64   `json:"likelihood" desc:"the prediction's likelihood" schema:"minimum=0,maximum=1"`
	Observed     float64   `json:"observed" desc:"P(X ≥ at_least) observed in the predicted window" schema:"minimum=0,maximum=1"` // P(X ≥ AtLeast) in the predicted window
	D            float64   `json:"d" desc:"KS statistic between the two windows" schema:"minimum=0,maximum=1"`
	P            float64   `json:"p" desc:"its p-value" schema:"minimum=0,maximum=1"`
	Hit          bool      `json:"hit" desc:"true when H0 (same distribution) is not rejected"`
	Method       string    `json:"method" desc:"the p-value method (matlab, scipy, r)"`
	Start        float64   `json:"start" desc:"predicted window start, trace units"`
	End          float64   `json:"end" desc:"predicted window end, trace units"`
	PredictedAt  int64     `json:"predicted_at" desc:"the window the prediction came from" schema:"minimum=0"` // window the prediction came from
	AtLeast      int       `json:"at_least" desc:"k" schema:"minimum=0"`
	Class        string    `json:"class" desc:"the signal's class"`
	HorizonS     float64   `json:"horizon_s" desc:"window length, seconds" schema:"minimum=0"`
	MissesInARow int       `json:"misses_in_a_row" desc:"consecutive KS misses up to this verdict" schema:"minimum=0"`
	EmittedAt    time.Time `json:"emitted_at" tracecast:"nullable" desc:"when the record was produced (UTC, RFC 3339); null when unknown"`
}

// Alert is raised for schedulers: an idle opportunity (a prediction's
// likelihood at or above a threshold) or a regime change (consecutive KS
// misses). ID is deterministic (trace, window, kind, query) so consumers
// can de-duplicate.
type Alert struct {
	ID        string    `json:"id" desc:"TRACE/w<window>/<kind>/<query>"`
	Trace     string    `json:"trace" desc:"the trace (stream) id"`
	Window    int64     `json:"window" desc:"the window concerned" schema:"minimum=0"`
	Kind      string    `json:"kind" desc:"what the alert is" schema:"enum=idle-opportunity|regime-change"` // "idle-opportunity" or "regime-change"
	Query     string    `json:"query" desc:"the query"`
	Value     float64   `json:"value" desc:"the likelihood (idle-opportunity) or the number of misses in a row (regime-change)"` // the likelihood, or the number of misses in a row
	Threshold float64   `json:"threshold" desc:"the threshold value reached"`
	Start     float64   `json:"start" desc:"window start, trace units"`
	End       float64   `json:"end" desc:"window end, trace units"`
	Message   string    `json:"message" desc:"the alert in words"`
	EmittedAt time.Time `json:"emitted_at" tracecast:"nullable" desc:"when the record was produced (UTC, RFC 3339); null when unknown"`
}

// PerSecond is UnitsPerSecond for a unit already checked (or where an
// unknown unit means seconds): units per second, 1 for an unknown unit.
func PerSecond(unit string) float64 {
	n, _ := UnitsPerSecond(unit)
	return n
}

// UnitsPerSecond is how many units of a trace time unit ("s", "ms", "us",
// "ns") make a second; ok is false for an unknown unit.
func UnitsPerSecond(unit string) (n float64, ok bool) {
	switch unit {
	case "s":
		return 1, true
	case "ms":
		return 1e3, true
	case "us":
		return 1e6, true
	case "ns":
		return 1e9, true
	}
	return 1, false
}

// PowerSample is one power reading of one node (a power parser's record).
type PowerSample struct {
	// T is the time in seconds.
	T    float64 `json:"t" desc:"time, seconds"`
	Node string  `json:"node" desc:"the node"`
	// Watts is the instantaneous power at T, or, when Mean is set, the mean
	// power over (the node's previous sample's T, T] — what energy counters
	// (RAPL) give.
	Watts float64 `json:"watts" desc:"instantaneous power at t, or the mean power over (since, t] when mean is true"`
	Mean  bool    `json:"mean" desc:"the reading is a mean over an interval (energy counters: RAPL)"`
	// Since is, for Mean samples, the start of the interval they cover
	// (absent otherwise).
	Since float64 `json:"since" tracecast:"nullable" nullif:"mean=false" desc:"mean readings: the start of the interval they cover; null otherwise"`
}

// EnergyRow (an energy stage's record) is the energy of one class on one node in one window.
// Window is -1 on the rows of totals over the run (absent: null in every
// output).
type EnergyRow struct {
	Node       string  `json:"node" desc:"the node"`
	Window     int64   `json:"window" tracecast:"nullable" desc:"window index; null on the rows of totals over the whole run (in Arrow and Parquet too)" schema:"minimum=0"`
	Start      float64 `json:"start" desc:"window start, seconds"`
	End        float64 `json:"end" desc:"window end, seconds"`
	Class      string  `json:"class" desc:"the state class (idle, compute, comm, other, storage)"`
	EnergyJ    float64 `json:"energy_j" desc:"energy attributed to the class, joules"`
	OccupancyS float64 `json:"occupancy_s" desc:"worker-seconds spent in the class" schema:"minimum=0"`
}
