package component

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"

	"gopkg.in/yaml.v3"
)

// Description documents a registered component type: what `tracecast
// components` prints, generated from the same config struct the runtime
// decodes into, so that the list cannot drift from what a pipeline accepts.
type Description struct {
	Kind    Kind
	Name    string
	Doc     string
	Options []OptionDescription
}

// OptionDescription is one key of a component's config.
type OptionDescription struct {
	Key  string
	Type string
	// Default is the default value as YAML ("" when the zero value means
	// unset).
	Default string
}

// Describe documents every registered type, by kind then name.
func (r *Registry) Describe() []Description {
	var out []Description
	for _, k := range Kinds {
		for _, name := range r.Types(k) {
			e := r.entries[k][name]
			d := Description{Kind: k, Name: name, Doc: e.Doc}
			v := reflect.ValueOf(e.newOpts()).Elem()
			if v.Kind() == reflect.Struct {
				d.Options = describeFields(v)
			}
			out = append(out, d)
		}
	}
	return out
}

func describeFields(v reflect.Value) []OptionDescription {
	var out []OptionDescription
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" || key == "-" || !f.IsExported() {
			continue
		}
		o := OptionDescription{Key: key, Type: typeName(f.Type)}
		if fv := v.Field(i); !fv.IsZero() {
			b, err := yaml.Marshal(fv.Interface())
			if err == nil {
				o.Default = strings.TrimSpace(string(b))
				if fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map {
					var flow any
					_ = yaml.Unmarshal(b, &flow)
					o.Default = flowYAML(flow)
				}
			}
		}
		out = append(out, o)
	}
	return out
}

// typeName names a config field's type as a YAML user sees it.
func typeName(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[interface{ String() string }]():
		return "string"
	case t.String() == "time.Duration":
		return "duration"
	case t.String() == "tracecast.TraceTime":
		return "duration or trace units" // 1ms, or a plain number in the trace's unit
	case t.String() == "tracecast.Seconds":
		return "duration" // 500ms, or a plain number of seconds
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.Slice:
		return "list of " + typeName(t.Elem())
	case reflect.Map:
		return "map of " + typeName(t.Key()) + " to " + typeName(t.Elem())
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "integer"
	case reflect.Float64, reflect.Float32:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Struct:
		var keys []string
		for i := range t.NumField() {
			if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" && t.Field(i).IsExported() {
				keys = append(keys, k)
			}
		}
		return "mapping {" + strings.Join(keys, ", ") + "}"
	}
	return "string"
}

// flowYAML writes a list or map on one line: [a, b], {k: v}.
func flowYAML(v any) string {
	n := &yaml.Node{}
	if err := n.Encode(v); err != nil {
		return ""
	}
	n.Style = yaml.FlowStyle
	b, err := yaml.Marshal(n)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// WriteTable writes descriptions as `tracecast components` prints them:
// each type's kind, name and doc, then one line per option with its key,
// type and default.
func WriteTable(w io.Writer, ds []Description) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, d := range ds {
		fmt.Fprintf(tw, "%s %s\t%s\n", d.Kind, d.Name, d.Doc)
		for _, o := range d.Options {
			def := o.Default
			if def != "" {
				def = "default " + def
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", o.Key, o.Type, def)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
