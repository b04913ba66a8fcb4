package arrow

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/tracecast/tracecast"
)

// StructTable returns a Table for []T where T is a flat struct of strings,
// bools, ints, floats and time.Time (timestamp[us, UTC]) — the result records (windows, predictions,
// verdicts, alerts). Columns are the exported fields in order, named by
// their json tag, else in snake_case (HorizonS → horizon_s); ints become
// int64. A *float64 is a nullable float64 (nil: null); a map[string]float64
// and a json.RawMessage are utf8 columns holding a JSON object (keys
// sorted), as the entity table's extra. Fields tagged `tracecast:"nullable"`
// are nullable columns: null where the record says the field is absent
// (tracecast.Partial), or holds NaN, a negative integer, the zero time or
// an empty string, as in the JSON outputs. The schema metadata
// carries "tracecast.schema" = name (versioned, like "tracecast.prediction/1")
// plus meta. Reflection runs once per column per record, not per byte: fine
// for result records, which are few; hot record types (entities, samples)
// have hand-written tables.
func StructTable[T any](name string, meta map[string]string) Table {
	return structTable(reflect.TypeFor[T](), name, meta)
}

// structTable is StructTable for a struct type known at run time (a
// tracecast.RecordType's element type).
func structTable(rt reflect.Type, name string, meta map[string]string) Table {
	if rt.Kind() != reflect.Struct {
		panic(fmt.Sprintf("arrow.StructTable: %v is not a struct", rt))
	}
	keys, values := []string{"tracecast.schema"}, []string{name}
	for k, v := range meta {
		keys, values = append(keys, k), append(values, v)
	}
	var fields []arrow.Field
	var idx []int
	for i := range rt.NumField() {
		f := rt.Field(i)
		if !f.IsExported() {
			continue
		}
		var dt arrow.DataType
		nullable := false
		switch {
		case f.Type == reflect.TypeFor[time.Time]():
			dt = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		case f.Type == reflect.TypeFor[*float64]():
			dt, nullable = arrow.PrimitiveTypes.Float64, true
		case f.Type == reflect.TypeFor[map[string]float64](), f.Type == reflect.TypeFor[json.RawMessage]():
			dt, nullable = arrow.BinaryTypes.String, true
		default:
			dt = primitive(rt, f)
		}
		fields = append(fields, arrow.Field{Name: columnName(f), Type: dt, Nullable: nullable || f.Tag.Get("tracecast") == "nullable"})
		idx = append(idx, i)
	}
	partial := reflect.PointerTo(rt).Implements(reflect.TypeFor[tracecast.Partial]())
	md := arrow.NewMetadata(keys, values)
	schema := arrow.NewSchema(fields, &md)
	return &reflectTable{schema: schema, items: reflect.SliceOf(rt), bind: func(b *array.RecordBuilder) func(reflect.Value) {
		add := make([]func(reflect.Value), len(idx))
		for c, i := range idx {
			ft := rt.Field(i).Type
			switch fb := b.Field(c).(type) {
			case *array.StringBuilder:
				switch ft {
				case reflect.TypeFor[map[string]float64](), reflect.TypeFor[json.RawMessage]():
					add[c] = func(v reflect.Value) { appendJSON(fb, v.Field(i)) }
				default:
					add[c] = func(v reflect.Value) { fb.Append(v.Field(i).String()) }
				}
			case *array.BooleanBuilder:
				add[c] = func(v reflect.Value) { fb.Append(v.Field(i).Bool()) }
			case *array.Int64Builder:
				add[c] = func(v reflect.Value) { fb.Append(v.Field(i).Int()) }
			case *array.Float64Builder:
				if ft.Kind() == reflect.Pointer {
					add[c] = func(v reflect.Value) {
						if p := v.Field(i); p.IsNil() {
							fb.AppendNull()
						} else {
							fb.Append(p.Elem().Float())
						}
					}
				} else {
					add[c] = func(v reflect.Value) { fb.Append(v.Field(i).Float()) }
				}
			case *array.TimestampBuilder:
				add[c] = func(v reflect.Value) {
					fb.Append(arrow.Timestamp(v.Field(i).Interface().(time.Time).UnixMicro()))
				}
			}
			if fields[c].Nullable {
				add[c] = orNull(add[c], b.Field(c), i, fields[c].Name, partial)
			}
		}
		return func(v reflect.Value) {
			for _, a := range add {
				a(v)
			}
		}
	}}
}

// orNull wraps the appender of a nullable column (field i, column name):
// null when the record says the field is absent (tracecast.Partial), or
// holds NaN, a negative integer, the zero time or an empty string — as
// the generated JSON encoders write them (internal/recordgen).
func orNull(add func(reflect.Value), b array.Builder, i int, name string, partial bool) func(reflect.Value) {
	return func(v reflect.Value) {
		absent := partial && v.CanAddr() && v.Addr().Interface().(tracecast.Partial).Absent(name)
		switch f := v.Field(i); {
		case absent:
		case f.Kind() == reflect.Float64 || f.Kind() == reflect.Float32:
			absent = math.IsNaN(f.Float())
		case f.CanInt():
			absent = f.Int() < 0 // -1: none (an energy row's window on the totals)
		case f.Type() == reflect.TypeFor[time.Time]():
			absent = f.Interface().(time.Time).IsZero()
		case f.Kind() == reflect.String:
			absent = f.Len() == 0
		}
		if absent {
			b.AppendNull()
		} else {
			add(v)
		}
	}
}

// appendJSON appends a map or raw JSON field as its JSON text; nil (or an
// empty raw message) is null.
func appendJSON(fb *array.StringBuilder, v reflect.Value) {
	if v.IsNil() || v.Len() == 0 && v.Kind() == reflect.Slice {
		fb.AppendNull()
		return
	}
	if raw, ok := v.Interface().(json.RawMessage); ok {
		fb.Append(string(raw))
		return
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		// Only non-finite numbers fail: the producers do not emit them.
		fb.AppendNull()
		return
	}
	fb.Append(string(b))
}

// reflectTable is a Table for a slice type known at run time.
type reflectTable struct {
	schema *arrow.Schema
	items  reflect.Type
	bind   func(b *array.RecordBuilder) func(item reflect.Value)
}

func (t *reflectTable) Schema() *arrow.Schema { return t.schema }

func (t *reflectTable) ItemsType() reflect.Type { return t.items }

func (t *reflectTable) encoder(b *array.RecordBuilder) func(items any) int {
	add := t.bind(b)
	return func(items any) int {
		v := reflect.ValueOf(items)
		b.Reserve(v.Len())
		for i := range v.Len() {
			add(v.Index(i))
		}
		return v.Len()
	}
}

// RecordTables returns a table for every record type of the root registry
// (tracecast.RecordTypes) that has an Arrow form: entities and signal
// samples with their hand-written tables, flat structs through
// StructTable's mapping. timeUnit ("" for none) is recorded as the
// "time_unit" schema metadata of the trace-time record types.
func RecordTables(timeUnit string) []Table {
	meta := map[string]string{"time_unit": timeUnit}
	if timeUnit == "" {
		meta = nil
	}
	var out []Table
	for _, rt := range tracecast.RecordTypes() {
		switch rt.Items {
		case reflect.TypeFor[[]tracecast.Entity]():
			out = append(out, EntityTable(timeUnit))
		case reflect.TypeFor[[]tracecast.Sample]():
			out = append(out, SampleTable(meta))
		case reflect.TypeFor[[]tracecast.EnergyRow](), reflect.TypeFor[[]tracecast.PowerSample]():
			// In seconds whatever the trace's unit: no time_unit.
			out = append(out, structTable(rt.Items.Elem(), rt.Schema, nil))
		case reflect.TypeFor[[]tracecast.IOCall]():
			// Access and flags are enums without an Arrow mapping yet.
		default:
			out = append(out, structTable(rt.Items.Elem(), rt.Schema, meta))
		}
	}
	return out
}

// primitive maps a field of a basic kind to its Arrow type.
func primitive(rt reflect.Type, f reflect.StructField) arrow.DataType {
	switch f.Type.Kind() {
	case reflect.String:
		return arrow.BinaryTypes.String
	case reflect.Bool:
		return arrow.FixedWidthTypes.Boolean
	case reflect.Int, reflect.Int64, reflect.Int32:
		return arrow.PrimitiveTypes.Int64
	case reflect.Float64, reflect.Float32:
		return arrow.PrimitiveTypes.Float64
	}
	panic(fmt.Sprintf("arrow.StructTable: field %s.%s of kind %v", rt, f.Name, f.Type.Kind()))
}

// columnName is a field's column: the name of its json tag, as in the
// record's JSON, else snake(f.Name).
func columnName(f reflect.StructField) string {
	if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
		return name
	}
	return snake(f.Name)
}

// snake turns a Go field name into a column name: HorizonS → horizon_s,
// MissesInARow → misses_in_a_row, ID → id.
func snake(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) {
			prevLower := i > 0 && unicode.IsLower(r[i-1])
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1]) && i > 0 && unicode.IsUpper(r[i-1])
			if i > 0 && (prevLower || nextLower) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(c))
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}
