package pipelines

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
)

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
}

// Validator is implemented by options structs that check themselves after
// decoding; the error is reported against the component, with its line.
type Validator interface {
	Validate() error
}

// StreamNamer is implemented by source options that know the name of their
// stream (a file path), which their parser uses in messages.
type StreamNamer interface {
	StreamName() string
}

// Registry maps component type names to constructors. It is explicit (no
// init-time registration): build one with NewRegistry, then RegisterBuiltins
// or, in tests, register fakes.
type Registry struct {
	entries map[Kind]map[string]*entry
}

type entry struct {
	kind    Kind
	name    string
	newOpts func() any // pointer to a fresh options value, defaults applied
	build   func(env Env, opts any) (any, error)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{entries: map[Kind]map[string]*entry{}}
}

func register[O, T any](r *Registry, kind Kind, name string, defaults func() O, build func(Env, O) (T, error)) {
	if name == "" || build == nil {
		panic(fmt.Sprintf("pipelines: registering %s %q: empty name or nil constructor", kind, name))
	}
	if r.entries[kind] == nil {
		r.entries[kind] = map[string]*entry{}
	}
	if _, dup := r.entries[kind][name]; dup {
		panic(fmt.Sprintf("pipelines: %s type %q registered twice", kind, name))
	}
	r.entries[kind][name] = &entry{
		kind: kind,
		name: name,
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
// it has one. build runs only when the pipeline starts. Registering a name
// twice panics.
func RegisterSource[O any](r *Registry, name string, defaults func() O, build func(env Env, opts O) (tracecast.Source, error)) {
	register(r, KindSource, name, defaults, build)
}

// RegisterParser registers a parser type (declared under a source).
func RegisterParser[O any](r *Registry, name string, defaults func() O, build func(env Env, opts O) (*Parser, error)) {
	register(r, KindParser, name, defaults, build)
}

// RegisterStage registers a stage type. A stage may also implement
// InputProcessor to learn which input each batch comes from.
func RegisterStage[O any](r *Registry, name string, defaults func() O, build func(env Env, opts O) (tracecast.Processor, error)) {
	register(r, KindStage, name, defaults, build)
}

// RegisterSink registers a sink type.
func RegisterSink[O any](r *Registry, name string, defaults func() O, build func(env Env, opts O) (tracecast.Sink, error)) {
	register(r, KindSink, name, defaults, build)
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

// DefaultOptions returns a pointer to the default options of a registered
// type (for documentation: KnownKeys, or printing as YAML).
func (r *Registry) DefaultOptions(kind Kind, name string) (any, bool) {
	e, ok := r.entries[kind][name]
	if !ok {
		return nil, false
	}
	return e.newOpts(), true
}

// plan is a config whose components have known types and decoded options.
type plan struct {
	cfg     *Config
	entries map[*Component]*entry
	opts    map[*Component]any
}

// Check resolves every component's type and decodes its options strictly,
// without building anything. Errors are a *ConfigError.
func (r *Registry) Check(cfg *Config) error {
	_, err := r.plan(cfg)
	return err
}

func (r *Registry) plan(cfg *Config) (*plan, error) {
	ps := &problems{file: cfg.File}
	p := &plan{cfg: cfg, entries: map[*Component]*entry{}, opts: map[*Component]any{}}
	check := func(c *Component) {
		e, ok := r.entries[c.Kind][c.Type]
		if !ok {
			known := r.Types(c.Kind)
			list := strings.Join(known, ", ")
			if len(known) == 0 {
				list = "none registered"
			}
			ps.add(c.Line, c.path+".type", "unknown %s type %q (known: %s)", c.Kind, c.Type, list)
			return
		}
		opts := e.newOpts()
		before := len(ps.list)
		decodeStrict(ps, c.options, opts, c.path)
		if len(ps.list) == before {
			if err := validate(opts); err != nil {
				// One problem per joined error, so each gets its own line.
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					for _, e := range j.Unwrap() {
						ps.add(c.Line, c.path, "%v", e)
					}
				} else {
					ps.add(c.Line, c.path, "%v", err)
				}
			}
		}
		p.entries[c], p.opts[c] = e, opts
	}
	for _, c := range cfg.Components() {
		check(c)
		if c.Parser != nil {
			check(c.Parser)
		}
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return p, nil
}

func validate(opts any) error {
	if v, ok := opts.(Validator); ok { // *O
		return v.Validate()
	}
	return nil
}

// Validate loads a pipeline file and checks it completely (structure, types,
// options) without starting anything. reg nil means the built-in components
// (NewRegistry + RegisterBuiltins). Errors are a *ConfigError.
func Validate(path string, reg *Registry) (*Config, error) {
	cfg, err := Load(path)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		reg = Builtins()
	}
	if err := reg.Check(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}
