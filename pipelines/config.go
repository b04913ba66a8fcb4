package pipelines

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tracecast/tracecast/internal/memlimit"

	"github.com/tracecast/tracecast/pipelines/component"
	"gopkg.in/yaml.v3"
)

// Settings are the runtime knobs of a pipeline (the "settings" block).
type Settings struct {
	// EdgeCapacity is the number of batches each edge (channel) holds before
	// its producer blocks: the bound on data in flight. Default 16.
	EdgeCapacity int `yaml:"edge_capacity"`
	// ShutdownTimeout is how long a graceful stop may take (sources stop,
	// stages flush, sinks close) before everything is cancelled. Default 20s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// StatusInterval is the period of the status log line; 0 disables it.
	// Default 30s.
	StatusInterval time.Duration `yaml:"status_interval"`
	// MemoryLimit is the process's soft memory limit while the pipeline
	// runs, in GOMEMLIMIT's syntax (512MiB, 2GiB, off); empty leaves the
	// runtime's (GOMEMLIMIT, or none), and GOMEMLIMIT, when set, wins. A
	// pipeline's live heap is what its limits allow (a live pipeline: about
	// max_streams times the cost of an open trace, docs/live.md); without a
	// limit the collector lets the process grow to twice its live heap
	// between collections, with one it collects more often instead.
	MemoryLimit string `yaml:"memory_limit"`
}

// DefaultSettings returns the settings used for keys a file leaves out.
func DefaultSettings() Settings {
	return Settings{EdgeCapacity: 16, ShutdownTimeout: 20 * time.Second, StatusInterval: 30 * time.Second}
}

// Component is one declared component. Its type-specific options stay as
// YAML until a Registry decodes them into the type's options struct.
type Component struct {
	ID   string
	Kind component.Kind
	Type string
	// Inputs are the ids of the sources and stages feeding a stage or sink,
	// in file order.
	Inputs []string
	// Parser is a source's parser, nil when the source emits raw lines.
	Parser *Component
	// Line is where the component is declared.
	Line int

	options *yaml.Node // mapping of the keys other than type, inputs, parser
	path    string     // "sources.trace", "sources.trace.parser"
}

// Path names the component in messages: "sources.trace", "stages.occ".
func (c *Component) Path() string { return c.path }

// SetOption sets a scalar option of the component, replacing the file's
// value if any, as the CLI does for flags like --speed. It takes effect at
// the next Registry.Check or Run, where it is decoded and validated like the
// file's own keys (an unknown key is reported there).
func (c *Component) SetOption(key, value string) {
	v := &yaml.Node{Kind: yaml.ScalarNode, Value: value, Line: c.Line}
	// A flow list or map ("[a, b]", "{k: v}") is YAML, as in the file.
	if t := strings.TrimSpace(value); strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(t), &doc) == nil && len(doc.Content) == 1 {
			v = doc.Content[0]
		}
	}
	c.setNode(key, v)
}

// SetOptionValue sets an option of the component to value encoded as YAML
// (a list, a struct with yaml tags as a mapping), replacing the file's
// value if any; like SetOption, it is decoded and validated at the next
// Registry.Check or Run.
func (c *Component) SetOptionValue(key string, value any) error {
	v := &yaml.Node{}
	if err := v.Encode(value); err != nil {
		return fmt.Errorf("%s.%s: %w", c.path, key, err)
	}
	setLine(v, c.Line)
	c.setNode(key, v)
	return nil
}

// setLine gives n and its children the component's line, for messages.
func setLine(n *yaml.Node, line int) {
	n.Line = line
	for _, ch := range n.Content {
		setLine(ch, line)
	}
}

func (c *Component) setNode(key string, v *yaml.Node) {
	for i := 0; i+1 < len(c.options.Content); i += 2 {
		if c.options.Content[i].Value == key {
			c.options.Content[i+1] = v
			return
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: c.Line}
	c.options.Content = append(c.options.Content, k, v)
}

// Option returns a scalar option of the component as written in the file
// (or set by SetOption).
func (c *Component) Option(key string) (string, bool) {
	for i := 0; i+1 < len(c.options.Content); i += 2 {
		if c.options.Content[i].Value == key && c.options.Content[i+1].Kind == yaml.ScalarNode {
			return c.options.Content[i+1].Value, true
		}
	}
	return "", false
}

// DecodeOption decodes an option of the component, as written in the file
// or set since, into out; false when the component has no such option.
func (c *Component) DecodeOption(key string, out any) (bool, error) {
	for i := 0; i+1 < len(c.options.Content); i += 2 {
		if c.options.Content[i].Value == key {
			return true, c.options.Content[i+1].Decode(out)
		}
	}
	return false, nil
}

// Config is a parsed and structurally checked pipeline file.
type Config struct {
	// File is the path the config was read from (for messages).
	File     string
	Version  int
	Name     string
	Settings Settings
	// Sources, Stages and Sinks are in file order.
	Sources, Stages, Sinks []*Component
	// Warnings are legal but suspicious things (an output nobody reads).
	Warnings []string
}

// Components returns every component, parsers excluded, in the order
// sources, stages, sinks.
func (c *Config) Components() []*Component {
	return slices.Concat(c.Sources, c.Stages, c.Sinks)
}

// KafkaType is the type name of the kafka source and sink.
const KafkaType = "kafka"

// SetKafka sets an option of every kafka component, sources and sinks, to
// value (see Component.SetOptionValue), replacing the file's: what the
// commands' --brokers, --tls-* and --sasl-* flags do, so that one flag
// reaches every component that talks to Kafka. It returns the components
// set (none when the pipeline has no kafka component).
func (c *Config) SetKafka(key string, value any) ([]*Component, error) {
	var set []*Component
	for _, comp := range slices.Concat(c.Sources, c.Sinks) {
		if comp.Type != KafkaType {
			continue
		}
		if err := comp.SetOptionValue(key, value); err != nil {
			return nil, err
		}
		set = append(set, comp)
	}
	return set, nil
}

// Lookup returns the source, stage or sink with the given id.
func (c *Config) Lookup(id string) *Component {
	for _, comp := range c.Components() {
		if comp.ID == id {
			return comp
		}
	}
	return nil
}

// rawConfig is the top-level shape of a pipeline file.
type rawConfig struct {
	Version  int       `yaml:"version"`
	Name     string    `yaml:"name"`
	Settings Settings  `yaml:"settings"`
	Sources  yaml.Node `yaml:"sources"`
	Stages   yaml.Node `yaml:"stages"`
	Sinks    yaml.Node `yaml:"sinks"`
}

// Load reads and parses a pipeline file; see Parse.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse parses a pipeline file and checks its structure: version, ids,
// inputs and the absence of cycles. It does not look at component types or
// options, which need a Registry (see Registry.Check and Validate). Errors
// are a *ConfigError listing every problem with its file and line.
func Parse(data []byte, file string) (*Config, error) {
	ps := &problems{file: file}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 0
		if m := lineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		if errors.Is(err, io.EOF) {
			msg = "empty pipeline file"
		}
		ps.add(line, "", "%s", msg)
		return nil, ps.err()
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		ps.add(extra.Line, "", "a pipeline file holds one YAML document")
		return nil, ps.err()
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		ps.add(doc.Line, "", "a pipeline file is a mapping with version, name, settings, sources, stages and sinks")
		return nil, ps.err()
	}

	// Unknown top-level and settings keys, with friendly messages...
	checkKeys(ps, doc, reflect.TypeFor[rawConfig](), "")
	if err := ps.err(); err != nil {
		return nil, err
	}
	// ...then yaml.v3's own strict decoding, which also reports type errors.
	raw := rawConfig{Settings: DefaultSettings()}
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if err := strict.Decode(&raw); err != nil {
		addDecodeError(ps, doc, "", err)
		return nil, ps.err()
	}

	cfg := &Config{File: file, Version: raw.Version, Name: raw.Name, Settings: raw.Settings}
	if raw.Version != 1 {
		ps.add(keyLine(doc, "version"), "version", "must be 1 (got %d)", raw.Version)
	}
	checkSettings(ps, doc, cfg.Settings)
	cfg.Sources = parseComponents(ps, &raw.Sources, component.KindSource, keyLine(doc, "sources"))
	cfg.Stages = parseComponents(ps, &raw.Stages, component.KindStage, keyLine(doc, "stages"))
	cfg.Sinks = parseComponents(ps, &raw.Sinks, component.KindSink, keyLine(doc, "sinks"))
	if len(ps.list) == 0 {
		checkGraph(ps, cfg, doc)
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

func checkSettings(ps *problems, doc *yaml.Node, s Settings) {
	line := func(key string) int {
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if doc.Content[i].Value == "settings" && doc.Content[i+1].Kind == yaml.MappingNode {
				return keyLine(doc.Content[i+1], key)
			}
		}
		return keyLine(doc, "settings")
	}
	if s.EdgeCapacity < 1 {
		ps.add(line("edge_capacity"), "settings.edge_capacity", "must be at least 1 (got %d)", s.EdgeCapacity)
	}
	if s.ShutdownTimeout <= 0 {
		ps.add(line("shutdown_timeout"), "settings.shutdown_timeout", "must be positive (got %v)", s.ShutdownTimeout)
	}
	if s.StatusInterval < 0 {
		ps.add(line("status_interval"), "settings.status_interval", "must not be negative (0 disables the status line)")
	}
	if s.MemoryLimit != "" {
		if _, err := memlimit.Parse(s.MemoryLimit); err != nil {
			ps.add(line("memory_limit"), "settings.memory_limit", "%v", err)
		}
	}
}

// keyLine returns the line of key in mapping m, or m's line.
func keyLine(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return m.Line
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// sectionName maps a kind to its top-level key.
func sectionName(k component.Kind) string {
	switch k {
	case component.KindSource:
		return "sources"
	case component.KindStage:
		return "stages"
	}
	return "sinks"
}

func parseComponents(ps *problems, section *yaml.Node, kind component.Kind, line int) []*Component {
	name := sectionName(kind)
	if section.Kind == 0 || (section.Kind == yaml.ScalarNode && section.Tag == "!!null") {
		return nil
	}
	if section.Kind != yaml.MappingNode {
		ps.add(line, name, "must be a mapping of component id to settings")
		return nil
	}
	var out []*Component
	seen := map[string]int{}
	for i := 0; i+1 < len(section.Content); i += 2 {
		k, v := section.Content[i], section.Content[i+1]
		path := name + "." + k.Value
		if first, dup := seen[k.Value]; dup {
			ps.add(k.Line, path, "duplicate id (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		if !idRE.MatchString(k.Value) {
			ps.add(k.Line, path, "invalid id %q: use letters, digits, '_', '-' and '.'", k.Value)
			continue
		}
		if c := parseComponent(ps, k, v, kind, path); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// parseComponent splits a component's mapping into the keys the runtime
// owns (type, inputs, parser) and the type-specific options.
func parseComponent(ps *problems, k, v *yaml.Node, kind component.Kind, path string) *Component {
	if v.Kind != yaml.MappingNode {
		ps.add(k.Line, path, "must be a mapping with at least a type")
		return nil
	}
	c := &Component{ID: k.Value, Kind: kind, Line: k.Line, path: path,
		options: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: v.Line, Column: v.Column}}
	hasInputs := false
	for i := 0; i+1 < len(v.Content); i += 2 {
		key, val := v.Content[i], v.Content[i+1]
		switch {
		case key.Value == "type":
			if val.Kind != yaml.ScalarNode || val.Value == "" {
				ps.add(key.Line, path+".type", "must be a non-empty string")
				continue
			}
			c.Type = val.Value
		case key.Value == "inputs" && kind != component.KindParser:
			hasInputs = true
			if kind == component.KindSource {
				ps.add(key.Line, path+".inputs", "sources have no inputs")
				continue
			}
			if val.Kind != yaml.SequenceNode {
				ps.add(key.Line, path+".inputs", "must be a list of component ids, like [a, b]")
				continue
			}
			for _, in := range val.Content {
				if in.Kind != yaml.ScalarNode || in.Value == "" {
					ps.add(in.Line, path+".inputs", "must be a list of component ids")
					continue
				}
				c.Inputs = append(c.Inputs, in.Value)
			}
		case key.Value == "parser" && kind == component.KindSource:
			if val.Kind != yaml.MappingNode {
				ps.add(key.Line, path+".parser", "must be a mapping with at least a type, like {type: paje}")
				continue
			}
			c.Parser = parseComponent(ps, key, val, component.KindParser, path+".parser")
			if c.Parser != nil {
				c.Parser.ID = c.ID
			}
		default:
			c.options.Content = append(c.options.Content, key, val)
		}
	}
	if c.Type == "" && !slices.ContainsFunc(ps.list, func(p Problem) bool { return p.Path == path+".type" }) {
		ps.add(k.Line, path, "missing type")
	}
	if (kind == component.KindStage || kind == component.KindSink) && !hasInputs {
		ps.add(k.Line, path, "missing inputs: a %s needs at least one input", kind)
	} else if (kind == component.KindStage || kind == component.KindSink) && len(c.Inputs) == 0 && hasInputs {
		ps.add(k.Line, path+".inputs", "must list at least one input")
	}
	return c
}

// checkGraph checks ids across kinds, inputs and cycles.
func checkGraph(ps *problems, cfg *Config, doc *yaml.Node) {
	byID := map[string]*Component{}
	dups := false
	for _, c := range cfg.Components() {
		if other, dup := byID[c.ID]; dup {
			ps.add(c.Line, c.path, "id %q is already used by %s (line %d): ids are unique across sources, stages and sinks",
				c.ID, other.path, other.Line)
			dups = true
			continue
		}
		byID[c.ID] = c
	}
	if dups {
		return // inputs are ambiguous until ids are unique
	}
	if len(cfg.Sources) == 0 {
		ps.add(keyLine(doc, "sources"), "sources", "a pipeline needs at least one source")
	}
	if len(cfg.Sinks) == 0 {
		ps.add(keyLine(doc, "sinks"), "sinks", "a pipeline needs at least one sink")
	}
	consumed := map[string]bool{}
	for _, c := range slices.Concat(cfg.Stages, cfg.Sinks) {
		seen := map[string]bool{}
		for _, in := range c.Inputs {
			switch src := byID[in]; {
			case src == nil:
				ps.add(c.Line, c.path+".inputs", "unknown input %q (known: %s)", in, producerIDs(cfg))
			case src.Kind == component.KindSink:
				ps.add(c.Line, c.path+".inputs", "input %q is a sink, which produces nothing", in)
			case in == c.ID:
				ps.add(c.Line, c.path+".inputs", "a stage cannot read its own output")
			case seen[in]:
				ps.add(c.Line, c.path+".inputs", "input %q is listed twice", in)
			}
			seen[in] = true
			consumed[in] = true
		}
	}
	if cycle := findCycle(cfg.Stages); cycle != nil {
		c := byID[cycle[0]]
		ps.add(c.Line, c.path+".inputs", "cycle: %s", strings.Join(cycle, " -> "))
	}
	for _, c := range slices.Concat(cfg.Sources, cfg.Stages) {
		if !consumed[c.ID] {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: no stage or sink reads the output of %q; it is discarded", c.path, c.ID))
		}
	}
}

func producerIDs(cfg *Config) string {
	var ids []string
	for _, c := range slices.Concat(cfg.Sources, cfg.Stages) {
		ids = append(ids, c.ID)
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// findCycle returns one cycle among stages as a path "a, b, a", or nil.
func findCycle(stages []*Component) []string {
	byID := map[string]*Component{}
	for _, s := range stages {
		byID[s.ID] = s
	}
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(id string) []string
	visit = func(id string) []string {
		state[id] = active
		stack = append(stack, id)
		for _, in := range byID[id].Inputs {
			if _, isStage := byID[in]; !isStage || in == id {
				continue // self-inputs are reported on their own
			}
			switch state[in] {
			case active:
				i := slices.Index(stack, in)
				return append(slices.Clone(stack[i:]), in)
			case unvisited:
				if c := visit(in); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
		return nil
	}
	for _, s := range stages {
		if state[s.ID] == unvisited {
			if c := visit(s.ID); c != nil {
				// Report in data-flow order (producer first).
				slices.Reverse(c)
				return c
			}
		}
	}
	return nil
}

// Override sets one option given as ID.KEY=VALUE, or ID.parser.KEY=VALUE
// for a source's parser (tracecast run --set): see Component.SetOption. A
// malformed override, or one naming no component, is an error quoting it.
func (c *Config) Override(s string) error {
	kv := strings.SplitN(s, "=", 2)
	path := strings.Split(kv[0], ".")
	if len(kv) != 2 || len(path) < 2 {
		return fmt.Errorf("%q: want ID.KEY=VALUE", s)
	}
	comp := c.Lookup(path[0])
	if comp == nil {
		return fmt.Errorf("%q: no component %q in the pipeline", s, path[0])
	}
	if len(path) == 3 && path[1] == "parser" {
		if comp.Parser == nil {
			return fmt.Errorf("%q: source %q has no parser", s, path[0])
		}
		comp = comp.Parser
		path = path[1:]
	}
	if len(path) != 2 {
		return fmt.Errorf("%q: want ID.KEY=VALUE or ID.parser.KEY=VALUE", s)
	}
	comp.SetOption(path[1], kv[1])
	return nil
}
