package paje

import (
	"errors"
	"fmt"
	"runtime"
)

// Options configure a Parser. The zero value is not useful: start from
// DefaultOptions.
type Options struct {
	// Name is the stream name used in error messages (a file path, "-").
	Name string
	// Lenient counts and skips bad lines instead of failing on the first one.
	Lenient bool
	// NoStrict accepts the deprecated field names of Paje ≤1.1
	// (ContainerType, EntityType, SourceContainer, ...), like pj_dump -n.
	NoStrict bool
	// UserDefined keeps user-defined (non-standard) fields in Entity.Extra.
	UserDefined bool
	// IgnoreIncompleteLinks drops links that never got both ends instead of
	// failing at the end of the trace, like pj_dump -z.
	IgnoreIncompleteLinks bool
	// ReorderHorizon is how late, in trace time units, a variable sample may
	// come after later samples of the same container and variable and still
	// be put back in order (StarPU writes its GFlop/s samples when a task
	// ends, stamped with the task's start). 0 means the input must be
	// time-ordered per container and type, as pj_dump wants. Negative means
	// "pick from the time unit": 3 s of trace time.
	ReorderHorizon float64
	// ReorderHorizonSeconds, when positive, is the reorder horizon as a
	// duration, converted to trace units once the time unit is known; it
	// takes precedence over ReorderHorizon.
	ReorderHorizonSeconds float64
	// MaxBuffered bounds the number of variable samples held for reordering
	// over all variables; past it the oldest are applied early.
	MaxBuffered int
	// MaxLineBytes is the longest accepted line.
	MaxLineBytes int
	// MaxContainers bounds the number of live containers.
	MaxContainers int
	// MaxOpenStates bounds the number of open (stacked) states over all containers.
	MaxOpenStates int
	// MaxTypes bounds the number of types a trace defines (container,
	// state, event, variable and link types) and of entity values, and,
	// apart, the number of its event definitions (%EventDef).
	MaxTypes int
	// PjdumpQuirks reproduces what pj_dump prints rather than every entity:
	// the end of the trace is the time of the last event line in file order
	// (not the latest time), and per container and type only the entities
	// starting in [0, end) are kept, plus the last one before 0 and the
	// first one at or after the end. See compat.go.
	PjdumpQuirks bool
	// OnTimeUnit, when set, is called once the time unit is known (given,
	// or detected at the first event): outputs that record it (Arrow
	// metadata) can start then.
	OnTimeUnit func(unit string)
	// TimeUnit is the unit of the trace's timestamps: "s", "ms", "us", "ns",
	// or "" / "auto" to detect it (StarPU headers mean milliseconds).
	TimeUnit string
	// Threads is how many goroutines split and tokenize the input in
	// parallel in Read (and in a Processor's batches), ahead of the one
	// that resolves it in order; 1 reads on the calling goroutine only.
	// The output does not depend on it. DefaultOptions sets GOMAXPROCS.
	Threads int

	// chunkBytes, when positive, replaces DefaultChunkBytes (tests cut
	// small inputs into many chunks with it).
	chunkBytes int
	// shared, when set, is what the parsers of one stage's streams share
	// (see streamShared).
	shared *streamShared
}

// chunkSize is the size of Read's chunks.
func (o *Options) chunkSize() int {
	if o.chunkBytes > 0 {
		return o.chunkBytes
	}
	return DefaultChunkBytes
}

// limits are the bounded options, with their YAML key and command flag.
func (o *Options) limits() []limit {
	return []limit{
		{key: "max_line_bytes", flag: "--max-line-bytes", v: o.MaxLineBytes},
		{key: "max_containers", flag: "--max-containers", v: o.MaxContainers},
		{key: "max_open_states", flag: "--max-open-states", v: o.MaxOpenStates},
		{key: "max_types", flag: "--max-types", v: o.MaxTypes},
		{key: "max_buffered", flag: "--max-buffered", v: o.MaxBuffered},
		{key: "threads", flag: "--threads", v: o.Threads, max: MaxThreads, why: "each holds chunks of input: more only takes memory"},
	}
}

// MaxThreads bounds Threads: every tokenizing goroutine holds two groups
// of 64 KiB chunks (and lines up to MaxLineBytes), and no machine gains
// from more.
const MaxThreads = 1024

type limit struct {
	key, flag string
	v         int
	max       int    // 0: none
	why       string // the reason for max
}

// Validate checks the limits a user gave (as command flags): each must be
// positive, and Threads at most MaxThreads. NewParser, for callers that leave them at zero, takes the
// defaults instead.
func (o *Options) Validate() error {
	var errs []error
	for _, l := range o.limits() {
		if l.v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive (got %d)", l.flag, l.v))
		} else if l.max > 0 && l.v > l.max {
			errs = append(errs, fmt.Errorf("%s %d is more than %d (%s)", l.flag, l.v, l.max, l.why))
		}
	}
	return errors.Join(errs...)
}

// DefaultOptions returns the options used by the CLI when no flag is given.
func DefaultOptions() Options {
	return Options{
		Name:           "-",
		ReorderHorizon: -1,
		MaxBuffered:    1 << 18,
		MaxLineBytes:   1 << 20,
		MaxContainers:  1 << 20,
		MaxOpenStates:  1 << 22,
		MaxTypes:       1 << 16,
		TimeUnit:       "auto",
		Threads:        runtime.GOMAXPROCS(0),
	}
}
