package pipelines

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Problem is one thing wrong with a pipeline file, with where it is.
type Problem struct {
	File string
	// Line is 1-based; 0 when the problem is not tied to a line.
	Line int
	// Path names the offending key: "sources.trace.speed".
	Path string
	Msg  string
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		b.WriteByte(':')
	}
	if p.Line > 0 {
		b.WriteString(strconv.Itoa(p.Line))
		b.WriteByte(':')
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ConfigError lists every problem found in a pipeline file, so that one
// validate run reports them all. The CLI maps it to exit code 2 (a usage
// error, like a bad flag).
type ConfigError struct {
	Problems []Problem
}

func (e *ConfigError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// problems collects Problems for one file.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(line int, path, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &ConfigError{Problems: slices.Clone(ps.list)}
}

var (
	durationType    = reflect.TypeFor[time.Duration]()
	nodeType        = reflect.TypeFor[yaml.Node]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodeStrict decodes node into out (a pointer), reporting every key that
// out's type does not declare, with its line and the keys that are known.
// yaml.v3 only offers strict decoding (KnownFields) on a Decoder reading a
// whole document; component options are sub-trees of the pipeline file, so
// the check is done here, by reflection over the yaml tags, before
// node.Decode fills the values.
func decodeStrict(ps *problems, node *yaml.Node, out any, path string) {
	before := len(ps.list)
	checkKeys(ps, node, reflect.TypeOf(out), path)
	if len(ps.list) > before {
		return
	}
	if err := node.Decode(out); err != nil {
		addDecodeError(ps, node, path, err)
	}
}

// lineRE matches the "line N: " prefix of yaml.v3 type errors.
var lineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

func addDecodeError(ps *problems, node *yaml.Node, path string, err error) {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		ps.add(node.Line, path, "%v", err)
		return
	}
	used := map[*yaml.Node]bool{}
	for _, msg := range te.Errors {
		line, p := node.Line, path
		if m := lineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
			if kp := keyPathAtLine(node, line, path, quotedValue(msg), used); kp != "" {
				p = kp
			}
		}
		ps.add(line, p, "%s", msg)
	}
}

// valueRE matches the value a yaml.v3 type error quotes: `1e30`, or its
// first 7 bytes and "..." when it is longer than 10.
var valueRE = regexp.MustCompile("`([^`]*)`")

// quotedValue is the value quoted in a yaml.v3 type error ("" if none).
func quotedValue(msg string) string {
	if m := valueRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// atLine is a scalar value on a line and the path of its key.
type atLine struct {
	path string
	node *yaml.Node
}

// keyPathAtLine returns the path of the key whose scalar value sits on
// line, to name the key of a yaml.v3 type error (which only gives a line
// and the value): in a flow mapping ({period: 1, max_samples: 1e30})
// several do, and the one whose value the error quotes is meant, the first
// not named already (used) when several are equal; the deepest key on the
// line when the error quotes no value (a mapping or a sequence).
func keyPathAtLine(node *yaml.Node, line int, path, value string, used map[*yaml.Node]bool) string {
	var all []atLine
	scalarsAtLine(node, line, path, &all)
	if len(all) == 0 {
		return ""
	}
	matches := func(v string) bool {
		if short, ok := strings.CutSuffix(value, "..."); ok && len(v) > 10 {
			return strings.HasPrefix(v, short)
		}
		return v == value
	}
	if value != "" {
		for _, a := range all {
			if !used[a.node] && matches(a.node.Value) {
				used[a.node] = true
				return a.path
			}
		}
	}
	return all[0].path
}

// scalarsAtLine appends the scalar values on line under node, in document
// order, with the paths of their keys.
func scalarsAtLine(node *yaml.Node, line int, path string, out *[]atLine) {
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	switch node.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			kp := joinPath(path, k.Value)
			if v.Kind == yaml.ScalarNode && v.Line == line {
				*out = append(*out, atLine{kp, v})
			}
			scalarsAtLine(v, line, kp, out)
		}
	case yaml.SequenceNode:
		for i, v := range node.Content {
			ip := fmt.Sprintf("%s[%d]", path, i)
			if v.Kind == yaml.ScalarNode && v.Line == line {
				*out = append(*out, atLine{ip, v})
			}
			scalarsAtLine(v, line, ip, out)
		}
	}
}

// checkKeys walks node along type t and reports unknown and duplicate keys.
func checkKeys(ps *problems, node *yaml.Node, t reflect.Type, path string) {
	if node == nil {
		return
	}
	for node.Kind == yaml.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nodeType || t == durationType || reflect.PointerTo(t).Implements(unmarshalerType) ||
		reflect.PointerTo(t).Implements(textType) {
		return // decoded by custom code: trust it
	}
	switch t.Kind() {
	case reflect.Struct:
		if node.Kind != yaml.MappingNode {
			return // a type error, reported by Decode
		}
		fields := yamlFields(t)
		seen := map[string]int{}
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			if k.Value == "<<" && k.Tag == "!!merge" {
				continue
			}
			kp := joinPath(path, k.Value)
			if line, dup := seen[k.Value]; dup {
				ps.add(k.Line, kp, "duplicate key (first at line %d)", line)
				continue
			}
			seen[k.Value] = k.Line
			ft, ok := fields[k.Value]
			if !ok {
				ps.add(k.Line, kp, "unknown key %q%s (known: %s)", k.Value, inWhat(path), knownKeys(fields))
				continue
			}
			checkKeys(ps, v, ft, kp)
		}
	case reflect.Map:
		if node.Kind != yaml.MappingNode {
			return
		}
		seen := map[string]int{}
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			kp := joinPath(path, k.Value)
			if line, dup := seen[k.Value]; dup {
				ps.add(k.Line, kp, "duplicate key (first at line %d)", line)
				continue
			}
			seen[k.Value] = k.Line
			checkKeys(ps, v, t.Elem(), kp)
		}
	case reflect.Slice, reflect.Array:
		if node.Kind != yaml.SequenceNode {
			return
		}
		for i, v := range node.Content {
			checkKeys(ps, v, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

func inWhat(path string) string {
	if path == "" {
		return " at the top level"
	}
	return ""
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps the YAML keys of struct type t to their field types,
// following yaml.v3's rules: the tag name, else the lowercased field name;
// "-" skips; ",inline" merges an embedded struct's keys.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if slices.Contains(strings.Split(opts, ","), "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					out[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// KnownKeys lists the YAML keys of an options struct, sorted; the CLI can use
// it to document a component.
func KnownKeys(opts any) []string {
	t := reflect.TypeOf(opts)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	keys := make([]string, 0, t.NumField())
	for k := range yamlFields(t) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func knownKeys(fields map[string]reflect.Type) string {
	if len(fields) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
