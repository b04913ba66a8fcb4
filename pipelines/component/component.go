// Package component is what a pipeline component needs to exist: the
// registry of component types, the environment a constructor receives, and
// the per-stream helper most parsers and stages use. Each component (a
// source, parser, stage or sink) lives in its own package with its config
// struct, defaults, validation and constructor, and registers itself with one
// call; package pipelines (the runtime) and pipelines' list of built-ins are
// the only places that know them all. This package imports no component, so
// every component can import it.
package component

import (
	"fmt"
	"slices"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
)

// Kind is the role of a component in the graph.
type Kind string

// The component kinds. A parser belongs to a source (it is declared under
// it) and runs in its own goroutine right after it.
const (
	KindSource Kind = "source"
	KindParser Kind = "parser"
	KindStage  Kind = "stage"
	KindSink   Kind = "sink"
)

// Kinds lists the kinds in pipeline order.
var Kinds = []Kind{KindSource, KindParser, KindStage, KindSink}

// Env is what the runtime hands a component's constructor besides its
// options.
type Env struct {
	// Pipeline is the pipeline's name.
	Pipeline string
	// ID is the component's id; a parser gets the id of its source.
	ID   string
	Kind Kind
	// Logger is tagged with the component's id and kind.
	Logger zerolog.Logger
	// Stream names the stream a parser reads, for its error messages (the
	// source's StreamName, else the source id). Empty for other kinds.
	Stream string
	// Parser is the source's parser, for a source that wants its
	// format-specific hooks (pacing by trace time); nil otherwise.
	Parser *Parser
	// Report, when set, receives what the component has to say about a
	// stream when it ends — a parser's statistics (paje.Stats: lines,
	// entities, lines skipped by reason) — instead of the log: a command
	// prints it its own way. It is called on the component's goroutine.
	Report func(stream string, report any)
	// Live says the pipeline follows input as it comes (a source that is
	// a Follower: a Kafka topic, a growing file, a replay paced by trace
	// time): a sink writing
	// a file writes it in place, read while written and flushed batch by
	// batch, rather than as PATH.tmp renamed at the end. Set for sinks.
	Live bool
}

// ReadinessReporter is implemented by components that can be running yet
// unable to do their work for a while — a kafka sink while its broker is
// down or its disk full: Unready says why, "" when ready. The runtime's
// /readyz answers 503 with the reason. It is called on the scrape's
// goroutine, concurrently with the component, which must make that safe.
type ReadinessReporter interface {
	Unready() string
}

// Follower is implemented by sources that follow their input as it comes
// (a Kafka topic, a tailed file) rather than read it to its end: their
// pipeline's file sinks write in place (Env.Live).
type Follower interface {
	Follows() bool
}

// Parser is a built parser: the processor that turns a source's lines into
// records, plus optional hooks a source can use without understanding the
// format.
type Parser struct {
	tracecast.Processor
	// NewTimeOf, when set, returns a timestamp extractor for raw lines, fed
	// every line in order; file sources use it to pace replays.
	NewTimeOf func() func(line []byte) (t float64, ok bool)
	// TimeScale is trace time units per second when the options say (1000
	// for milliseconds), 0 when unknown.
	TimeScale float64
	// Stateful: the parser's output depends on everything before in the
	// stream (a Paje trace's containers and open states), so a source that
	// resumes mid-stream must read it again from its start.
	Stateful bool
	// Chunks: the processor also takes batches of []tracecast.Chunk, runs
	// of whole lines it splits itself. A file source replaying at full
	// speed sends those instead of one Line per line, without copying the
	// lines, and the parser splits and tokenizes them on every core.
	Chunks bool
	// MaxLineBytes, when positive, is the longest line the parser accepts:
	// a source may hand it a longer line cut to MaxLineBytes+1 bytes,
	// enough for the parser to refuse it (FILE:LINE, or skipped when
	// lenient), instead of holding all of it (a 200 MB line).
	MaxLineBytes int
	// SkipBlankLines: empty lines mean nothing to the parser; a source may
	// drop them (the next line keeps its number). A flood of newlines then
	// costs what reading it costs.
	SkipBlankLines bool
}

// Validator is implemented by options structs that check themselves after
// decoding; the error is reported against the component, with its line.
type Validator interface {
	Validate() error
}

// PathUser is implemented by options that name files: those the component
// reads (inputs) and those it creates, truncates or replaces (outputs; "-"
// is standard output, not a file). The runtime refuses, before anything is
// opened, a pipeline where an output is also an input or another output.
type PathUser interface {
	Paths() (inputs, outputs []string)
}

// StreamNamer is implemented by source options that know the name of their
// stream (a file path), which their parser uses in messages.
type StreamNamer interface {
	StreamName() string
}

// Registry maps component type names to constructors. It is explicit (no
// init-time registration): build one, then register the built-ins
// (pipelines.RegisterBuiltins) or, in tests, fakes.
type Registry struct {
	entries map[Kind]map[string]*Entry
}

// Entry is one registered component type.
type Entry struct {
	Kind Kind
	Name string
	// Doc is the one-line description shown by `tracecast components`.
	Doc     string
	newOpts func() any // pointer to a fresh options value, defaults applied
	build   func(env Env, opts any) (any, error)
}

// NewOptions returns a pointer to a fresh options value with the type's
// defaults, ready to be decoded into.
func (e *Entry) NewOptions() any { return e.newOpts() }

// Build constructs the component from options returned by NewOptions.
func (e *Entry) Build(env Env, opts any) (any, error) { return e.build(env, opts) }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{entries: map[Kind]map[string]*Entry{}}
}

func register[O, T any](r *Registry, kind Kind, name, doc string, defaults func() O, build func(Env, O) (T, error)) {
	if name == "" || build == nil {
		panic(fmt.Sprintf("component: registering %s %q: empty name or nil constructor", kind, name))
	}
	if r.entries[kind] == nil {
		r.entries[kind] = map[string]*Entry{}
	}
	if _, dup := r.entries[kind][name]; dup {
		panic(fmt.Sprintf("component: %s type %q registered twice", kind, name))
	}
	r.entries[kind][name] = &Entry{
		Kind: kind,
		Name: name,
		Doc:  doc,
		newOpts: func() any {
			o := new(O)
			if defaults != nil {
				*o = defaults()
			}
			return o
		},
		build: func(env Env, opts any) (any, error) { return build(env, *opts.(*O)) },
	}
}

// RegisterSource registers a source type. Its options (the component's keys
// other than type and parser) are decoded strictly into O, starting from
// defaults() (nil: the zero value), then checked by O's Validate method if
// it has one. build runs only when the pipeline starts. doc is a one-line
// description. Registering a name twice panics.
func RegisterSource[O any](r *Registry, name, doc string, defaults func() O, build func(env Env, opts O) (tracecast.Source, error)) {
	register(r, KindSource, name, doc, defaults, build)
}

// RegisterParser registers a parser type (declared under a source).
func RegisterParser[O any](r *Registry, name, doc string, defaults func() O, build func(env Env, opts O) (*Parser, error)) {
	register(r, KindParser, name, doc, defaults, build)
}

// RegisterStage registers a stage type. A stage may also implement
// pipelines.InputProcessor to learn which input each batch comes from.
func RegisterStage[O any](r *Registry, name, doc string, defaults func() O, build func(env Env, opts O) (tracecast.Processor, error)) {
	register(r, KindStage, name, doc, defaults, build)
}

// RegisterSink registers a sink type.
func RegisterSink[O any](r *Registry, name, doc string, defaults func() O, build func(env Env, opts O) (tracecast.Sink, error)) {
	register(r, KindSink, name, doc, defaults, build)
}

// RegisterSinkValue registers a sink type whose every instance is s (no
// options): how a command plugs its own consumer into a pipeline.
func RegisterSinkValue(r *Registry, name string, s tracecast.Sink) {
	RegisterSink(r, name, "the command's own consumer", nil, func(Env, struct{}) (tracecast.Sink, error) { return s, nil })
}

// Types lists the registered type names of a kind, sorted.
func (r *Registry) Types(kind Kind) []string {
	names := make([]string, 0, len(r.entries[kind]))
	for n := range r.entries[kind] {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Lookup returns a registered type.
func (r *Registry) Lookup(kind Kind, name string) (*Entry, bool) {
	e, ok := r.entries[kind][name]
	return e, ok
}

// DefaultOptions returns a pointer to the default options of a registered
// type (for documentation, or printing as YAML).
func (r *Registry) DefaultOptions(kind Kind, name string) (any, bool) {
	e, ok := r.entries[kind][name]
	if !ok {
		return nil, false
	}
	return e.newOpts(), true
}

// SourceProgress is how far a source is through its input.
type SourceProgress struct {
	// Read is the number of bytes read as stored; Total the input size, or
	// -1 when unknown.
	Read, Total int64
}

// ProgressReporter is implemented by sources that know their progress; the
// status line and the progress hook use it.
type ProgressReporter interface {
	SourceProgress() SourceProgress
}
