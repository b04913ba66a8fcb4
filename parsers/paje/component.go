package paje

import (
	"errors"
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "paje" parser.
func Register(r *component.Registry) {
	component.RegisterParser(r, "paje", "Paje trace lines (StarPU, SimGrid) into entities, as pj_dump resolves them", DefaultParserConfig, newParser)
}

// ParserConfig is the configuration of a "paje" parser; the fields mean
// what Options' fields of the same names mean.
type ParserConfig struct {
	// Lenient counts and skips bad lines instead of failing on the first.
	Lenient bool `yaml:"lenient" flag:"lenient" help:"count and skip bad lines instead of failing; print the counts by reason"`
	// NoStrict accepts the field names of Paje ≤ 1.1 (pj_dump -n).
	NoStrict bool `yaml:"no_strict" flag:"no-strict,n" help:"accept the deprecated field names of old traces (pj_dump -n)"`
	// UserDefined keeps user-defined fields in Entity.Extra (pj_dump -u).
	UserDefined bool `yaml:"user_defined" flag:"user-defined,u" help:"also output user-defined fields (pj_dump -u)"`
	// IgnoreIncompleteLinks drops links missing an end (pj_dump -z).
	IgnoreIncompleteLinks bool `yaml:"ignore_incomplete_links" flag:"ignore-incomplete-links,z" help:"drop links that never got both ends (pj_dump -z)"`
	// ReorderHorizon is how late a variable sample may come and still be
	// applied in time order: a duration (3s) or a number of trace units;
	// default 3 s (-1 says so), 0 is pj_dump's rule; another negative
	// value is refused.
	ReorderHorizon *tracecast.TraceTime `yaml:"reorder_horizon" flag:"reorder-horizon" help:"how late a variable sample may be and still be put back in order: a duration (3s) or a number in the trace's time unit (-1: 3 s; 0: none, as pj_dump)"`
	// The reader's limits.
	Limits `yaml:",inline"`
	// TimeUnit of the trace: auto (StarPU headers mean ms, else s), s, ms,
	// us, ns.
	TimeUnit string `yaml:"time_unit" flag:"time-unit" help:"unit of the trace's times: auto (ms for StarPU, s otherwise), s, ms, us, ns"`
	// Threads is how many goroutines tokenize each batch of lines in
	// parallel before it is resolved in order (default: all cores,
	// GOMAXPROCS); the output does not depend on it.
	Threads int `yaml:"threads" flag:"threads" help:"goroutines that tokenize the input in parallel, 1 to 1024 (the output does not depend on it)"`
	// MaxStreams bounds the traces parsed at once (a Kafka source).
	MaxStreams int `yaml:"max_streams"`
	// StreamErrors: fail (default) stops the pipeline on a bad line; drop
	// ends that trace only, logged, and goes on with the others (a topic
	// of many runs).
	StreamErrors string `yaml:"stream_errors"`
	// PjdumpQuirks emits what pj_dump prints rather than every entity (its
	// end of trace, and per container and type the entities of its window;
	// Options.PjdumpQuirks): `tracecast states --format pjdump`.
	PjdumpQuirks bool `yaml:"pjdump_quirks"`
}

// Limits are the reader's bounds, as the paje parser's options (YAML) and
// as flags: of the states command, and of every command that reads a
// trace (signal, hitrate, predict, tasks, report: specs.Trace).
type Limits struct {
	// MaxBuffered bounds the variable samples held for reordering.
	MaxBuffered int `yaml:"max_buffered" flag:"max-buffered" help:"most variable samples held for reordering"`
	// MaxLineBytes is the longest accepted line.
	MaxLineBytes int `yaml:"max_line_bytes" flag:"max-line-bytes" help:"longest accepted line, in bytes"`
	// MaxContainers bounds the live containers.
	MaxContainers int `yaml:"max_containers" flag:"max-containers" help:"most live containers"`
	// MaxOpenStates bounds the open states and pending links.
	MaxOpenStates int `yaml:"max_open_states" flag:"max-open-states" help:"most open states and pending links"`
	// MaxTypes bounds the types a trace defines.
	MaxTypes int `yaml:"max_types" flag:"max-types" help:"most types (container, state, event, variable and link types) and entity values a trace defines; also bounds its event definitions (%EventDef)"`
}

// DefaultLimits are DefaultOptions' limits.
func DefaultLimits() Limits {
	d := DefaultOptions()
	return Limits{MaxBuffered: d.MaxBuffered, MaxLineBytes: d.MaxLineBytes, MaxContainers: d.MaxContainers,
		MaxOpenStates: d.MaxOpenStates, MaxTypes: d.MaxTypes}
}

// DefaultParserConfig mirrors DefaultOptions.
func DefaultParserConfig() ParserConfig {
	d := DefaultOptions()
	return ParserConfig{
		Lenient:               d.Lenient,
		NoStrict:              d.NoStrict,
		UserDefined:           d.UserDefined,
		IgnoreIncompleteLinks: d.IgnoreIncompleteLinks,
		Limits:                DefaultLimits(),
		TimeUnit:              d.TimeUnit,
		Threads:               d.Threads,
		MaxStreams:            component.DefaultMaxStreams,
	}
}

// HeapBound is the reader's live heap these limits allow (Options.HeapBound).
func (o ParserConfig) HeapBound() int64 {
	po := DefaultOptions()
	po.MaxBuffered, po.MaxLineBytes, po.MaxContainers, po.MaxOpenStates = o.MaxBuffered, o.MaxLineBytes, o.MaxContainers, o.MaxOpenStates
	po.MaxTypes = o.MaxTypes
	return po.HeapBound()
}

// Validate checks the options.
func (o *ParserConfig) Validate() error {
	po := Options{MaxBuffered: o.MaxBuffered, MaxLineBytes: o.MaxLineBytes, MaxContainers: o.MaxContainers, MaxOpenStates: o.MaxOpenStates, MaxTypes: o.MaxTypes, Threads: o.Threads}
	var errs []error
	for _, l := range append(po.limits(), limit{key: "max_streams", v: o.MaxStreams}) {
		if l.v <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive (got %d)", l.key, l.v))
		} else if l.max > 0 && l.v > l.max {
			errs = append(errs, fmt.Errorf("%s: %d is more than %d (%s)", l.key, l.v, l.max, l.why))
		}
	}
	if h := o.ReorderHorizon; h != nil && h.Sign() < 0 {
		if v, hasUnit := h.Seconds(); hasUnit || v != -1 {
			errs = append(errs, fmt.Errorf("reorder_horizon: %s: must be positive, 0 (none, as pj_dump) or -1 (the default, 3 s)", h))
		}
	}
	if o.StreamErrors != "" && o.StreamErrors != "fail" && o.StreamErrors != "drop" {
		errs = append(errs, fmt.Errorf("stream_errors: %q is not fail or drop", o.StreamErrors))
	}
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); o.TimeUnit != "" && o.TimeUnit != "auto" && !ok {
		errs = append(errs, fmt.Errorf("time_unit: %q is not one of auto, s, ms, us, ns", o.TimeUnit))
	}
	return errors.Join(errs...)
}

func newParser(env component.Env, o ParserConfig) (*component.Parser, error) {
	po := DefaultOptions()
	po.Name = env.Stream
	po.Lenient = o.Lenient
	po.NoStrict = o.NoStrict
	po.UserDefined = o.UserDefined
	po.IgnoreIncompleteLinks = o.IgnoreIncompleteLinks
	if h := o.ReorderHorizon; h != nil {
		if s, ok := h.Seconds(); !ok {
			po.ReorderHorizon = s
		} else if s > 0 {
			po.ReorderHorizonSeconds = s
		} else {
			po.ReorderHorizon = 0
		}
	}
	po.MaxBuffered = o.MaxBuffered
	po.MaxLineBytes = o.MaxLineBytes
	po.MaxContainers = o.MaxContainers
	po.MaxOpenStates = o.MaxOpenStates
	po.MaxTypes = o.MaxTypes
	po.TimeUnit = o.TimeUnit
	po.PjdumpQuirks = o.PjdumpQuirks
	po.Threads = o.Threads
	// One parser per stream: a Kafka source interleaves traces. They share
	// their string table and output buffer (they run one at a time).
	po.shared = newStreamShared()
	ps := component.NewPerStream(o.MaxStreams, func(stream string) (tracecast.Processor, error) {
		one := po
		if stream != "" {
			one.Name = stream
		}
		// Lines (tail, Kafka) are resolved on this goroutine, batch by
		// batch as they come (the live path's latency); chunks (a file at
		// full speed) are tokenized on Threads goroutines (chunks.go).
		pr := &processor{p: NewParser(one)}
		pr.report = func(st Stats) { report(env, one.Name, st) }
		return pr, nil
	}).LogTo(env.Logger)
	if o.StreamErrors == "drop" {
		ps.DropFailedStreams(env.Logger)
	}
	return &component.Parser{
		Processor: ps,
		// Pacing reads times in seconds: the unit is given, or detected
		// from the header like the parser does (ms for StarPU).
		NewTimeOf: func() func([]byte) (float64, bool) {
			lt := &LineTimer{}
			if _, given := tracecast.UnitsPerSecond(o.TimeUnit); given {
				lt.SetUnit(o.TimeUnit)
			}
			return lt.Seconds
		},
		TimeScale:      1,
		Stateful:       true,
		Chunks:         true,
		MaxLineBytes:   o.MaxLineBytes,
		SkipBlankLines: true,
	}, nil
}

// report hands a stream's statistics to env.Report, or logs them: skipped
// lines (lenient) and an inexact pj_dump window as warnings, the counts at
// debug level.
func report(env component.Env, stream string, st Stats) {
	if env.Report != nil {
		env.Report(stream, st)
		return
	}
	l := env.Logger
	if n := st.Skipped.Total(); n > 0 {
		l.Warn().Str("stream", stream).Int64("skipped", n).Interface("reasons", st.Skipped).Msg("skipped bad lines")
	}
	if st.QuirksInexact {
		l.Warn().Str("stream", stream).Msg(QuirksInexactMessage)
	}
	l.Debug().Str("stream", stream).Int64("lines", st.Lines).Int64("entities", st.Entities).Int64("late", st.Late).
		Int("max_buffered", st.MaxBuffered).Msg("trace read")
}
