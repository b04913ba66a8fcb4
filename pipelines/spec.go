package pipelines

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/tracecast/tracecast"
)

// Spec declares a pipeline in code. Commands translate their flags into a
// Spec; Config turns it into the YAML a user would write and parses that, so
// a command and a pipeline file go through the same checks, defaults and
// constructors: an analysis exists once, as its components.
type Spec struct {
	Name string
	// Settings are keys of the settings block (edge_capacity, ...).
	Settings map[string]any
	// Sources, Stages and Sinks are in order; a source's parser is its
	// Node.Parser.
	Sources, Stages, Sinks []Node
}

// Node is one component of a Spec.
type Node struct {
	ID, Type string
	Inputs   []string
	// Options are the component's keys, as in a pipeline file ("path",
	// "window", ...); keys left out take the component's defaults.
	Options map[string]any
	Parser  *Node
}

// YAML renders the spec as a pipeline file.
func (s Spec) YAML() ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	put := func(m *yaml.Node, key string, v any) error {
		var val yaml.Node
		if n, ok := v.(*yaml.Node); ok {
			val = *n
		} else if n, ok := scalarNode(v); ok {
			val = n
		} else if err := val.Encode(v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &val)
		return nil
	}
	var node func(n Node, withInputs bool) (*yaml.Node, error)
	node = func(n Node, withInputs bool) (*yaml.Node, error) {
		m := &yaml.Node{Kind: yaml.MappingNode}
		if err := put(m, "type", n.Type); err != nil {
			return nil, err
		}
		if withInputs {
			if err := put(m, "inputs", n.Inputs); err != nil {
				return nil, err
			}
		}
		keys := make([]string, 0, len(n.Options))
		for k := range n.Options {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := put(m, k, n.Options[k]); err != nil {
				return nil, fmt.Errorf("%s: %w", n.ID, err)
			}
		}
		if n.Parser != nil {
			p, err := node(*n.Parser, false)
			if err != nil {
				return nil, err
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "parser"}, p)
		}
		return m, nil
	}
	section := func(name string, nodes []Node, withInputs bool) error {
		if len(nodes) == 0 {
			return nil
		}
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, n := range nodes {
			v, err := node(n, withInputs)
			if err != nil {
				return err
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: n.ID}, v)
		}
		return put(doc, name, m)
	}
	if err := put(doc, "version", 1); err != nil {
		return nil, err
	}
	if err := put(doc, "name", s.Name); err != nil {
		return nil, err
	}
	if len(s.Settings) > 0 {
		if err := put(doc, "settings", s.Settings); err != nil {
			return nil, err
		}
	}
	for _, sec := range []struct {
		name   string
		nodes  []Node
		inputs bool
	}{{"sources", s.Sources, false}, {"stages", s.Stages, true}, {"sinks", s.Sinks, true}} {
		if err := section(sec.name, sec.nodes, sec.inputs); err != nil {
			return nil, err
		}
	}
	return yaml.Marshal(doc)
}

// scalarNode is the node of v when v is a string (valid UTF-8), a bool, an
// int or a finite float64, or a list of such strings: what yaml's
// Node.Encode makes of it, once marshalled (TestScalarNode), without
// Encode's round trip through text. (A command's spec has a few dozen
// options: the round trips took 0.4 ms of every command's start.)
func scalarNode(v any) (yaml.Node, bool) {
	switch x := v.(type) {
	case string:
		// Quoted when marshalled if it reads as another type. Encode
		// also quotes YAML 1.1's booleans (yes, off) and sexagesimal
		// numbers (1:20): those, and any string with a colon, are
		// left to it.
		if utf8.ValidString(x) && !strings.Contains(x, ":") && !yaml11Bool[strings.ToLower(x)] {
			return yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x}, true
		}
	case bool:
		return yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}, true
	case int:
		return yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(x)}, true
	case float64:
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			// As yaml's encoder writes it: "1" reads back as an int,
			// which a float option takes.
			return yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(x, 'g', -1, 64)}, true
		}
	case []string:
		seq := yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			n, ok := scalarNode(e)
			if !ok {
				return yaml.Node{}, false
			}
			seq.Content = append(seq.Content, &n)
		}
		return seq, true
	}
	return yaml.Node{}, false
}

// yaml11Bool holds YAML 1.1's booleans, lower-cased.
var yaml11Bool = map[string]bool{"y": true, "yes": true, "on": true, "n": true, "no": true, "off": true}

// Config renders the spec and parses it like a file named "<name> command".
func (s Spec) Config() (*Config, error) {
	data, err := s.YAML()
	if err != nil {
		return nil, err
	}
	return Parse(data, s.Name+" command")
}

// SinkFunc adapts a function to a Sink, for a command that consumes records
// in-process (a summary it prints). Close does nothing.
type SinkFunc func(ctx context.Context, b tracecast.Batch) error

// Write calls f.
func (f SinkFunc) Write(ctx context.Context, b tracecast.Batch) error { return f(ctx, b) }

// Close does nothing.
func (f SinkFunc) Close(context.Context) error { return nil }
