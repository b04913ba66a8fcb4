package arrow

import (
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// StructTable returns a Table for []T where T is a flat struct of strings,
// bools, ints, floats and time.Time (timestamp[us, UTC]) — the result records (windows, predictions,
// verdicts, alerts). Columns are the exported fields in order, named in
// snake_case (HorizonS → horizon_s); ints become int64. The schema metadata
// carries "tracecast.schema" = name (versioned, like "tracecast.prediction/1")
// plus meta. Reflection runs once per column per record, not per byte: fine
// for result records, which are few; hot record types (entities, samples)
// have hand-written tables.
func StructTable[T any](name string, meta map[string]string) Table {
	rt := reflect.TypeFor[T]()
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
		switch {
		case f.Type == reflect.TypeFor[time.Time]():
			dt = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		default:
			dt = primitive(rt, f)
		}
		fields = append(fields, arrow.Field{Name: snake(f.Name), Type: dt})
		idx = append(idx, i)
	}
	md := arrow.NewMetadata(keys, values)
	schema := arrow.NewSchema(fields, &md)
	return NewTable(schema, func(b *array.RecordBuilder) func(*T) {
		add := make([]func(reflect.Value), len(idx))
		for c, i := range idx {
			switch fb := b.Field(c).(type) {
			case *array.StringBuilder:
				add[c] = func(v reflect.Value) { fb.Append(v.Field(i).String()) }
			case *array.BooleanBuilder:
				add[c] = func(v reflect.Value) { fb.Append(v.Field(i).Bool()) }
			case *array.Int64Builder:
				add[c] = func(v reflect.Value) { fb.Append(v.Field(i).Int()) }
			case *array.Float64Builder:
				add[c] = func(v reflect.Value) { fb.Append(v.Field(i).Float()) }
			case *array.TimestampBuilder:
				add[c] = func(v reflect.Value) {
					fb.Append(arrow.Timestamp(v.Field(i).Interface().(time.Time).UnixMicro()))
				}
			}
		}
		return func(item *T) {
			v := reflect.ValueOf(item).Elem()
			for _, a := range add {
				a(v)
			}
		}
	})
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
