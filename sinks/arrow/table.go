package arrow

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Table maps batches of one record type onto an Arrow schema. Build one with
// NewTable; the interface is sealed so that every table goes through the same
// builder bookkeeping.
type Table interface {
	// Schema is the schema of the records the table builds.
	Schema() *arrow.Schema
	// ItemsType is the type of the tracecast.Batch Items the table accepts
	// ([]T for a NewTable[T]).
	ItemsType() reflect.Type
	// encoder binds the table to a record builder of its schema.
	encoder(b *array.RecordBuilder) func(items any) int
}

// NewTable returns a Table for batches of []T. bind is called once per
// record builder, with a builder of schema; it should look up and type-assert
// the column builders there and return a function appending one item to
// them. Doing the type assertions once keeps the per-record path free of
// interface conversions and allocations:
//
//	arrow.NewTable(schema, func(b *array.RecordBuilder) func(*Sample) {
//		t := b.Field(0).(*array.Float64Builder)
//		w := b.Field(1).(*array.Float64Builder)
//		return func(s *Sample) { t.Append(s.Time); w.Append(s.Watts) }
//	})
func NewTable[T any](schema *arrow.Schema, bind func(b *array.RecordBuilder) func(item *T)) Table {
	if schema == nil || bind == nil {
		panic("arrow.NewTable: nil schema or bind")
	}
	return &table[T]{schema: schema, bind: bind}
}

type table[T any] struct {
	schema *arrow.Schema
	bind   func(b *array.RecordBuilder) func(item *T)
}

func (t *table[T]) Schema() *arrow.Schema { return t.schema }

func (t *table[T]) ItemsType() reflect.Type { return reflect.TypeFor[[]T]() }

func (t *table[T]) encoder(b *array.RecordBuilder) func(items any) int {
	add := t.bind(b)
	return func(items any) int {
		s := items.([]T)
		b.Reserve(len(s))
		for i := range s {
			add(&s[i])
		}
		return len(s)
	}
}

// builder turns batches into records for one table, reusing one record
// builder (and so its buffers' capacity) across batches.
type builder struct {
	table  Table
	rb     *array.RecordBuilder
	encode func(items any) int
	// rec builds the records of a recordingTable (entities).
	rec recorder
}

// newBuilder builds records of t with schema: t's own, or t's with more
// metadata (withMetadata).
func newBuilder(mem memory.Allocator, t Table, schema *arrow.Schema) *builder {
	rb := array.NewRecordBuilder(mem, schema)
	b := &builder{table: t, rb: rb, encode: t.encoder(rb)}
	if r, ok := t.(recordingTable); ok {
		b.rec = r.recorder(schema)
	}
	return b
}

// record builds a record from items; the caller releases it, before the
// next call (the record may hold the builder's buffers). It returns nil
// for an empty batch.
func (b *builder) record(items any) (arrow.Record, error) {
	if reflect.TypeOf(items) != b.table.ItemsType() {
		return nil, fmt.Errorf("items are %T, this output's schema takes %v", items, b.table.ItemsType())
	}
	if b.rec != nil {
		if reflect.ValueOf(items).Len() == 0 {
			return nil, nil
		}
		return b.rec.record(items), nil
	}
	if b.encode(items) == 0 {
		return nil, nil
	}
	return b.rb.NewRecord(), nil
}

func (b *builder) release() { b.rb.Release() }

// withMetadata returns schema with meta added to its metadata (meta's
// values win), or schema itself when meta is empty.
func withMetadata(schema *arrow.Schema, meta map[string]string) *arrow.Schema {
	if len(meta) == 0 {
		return schema
	}
	md := schema.Metadata()
	keys, values := []string{}, []string{}
	for i, k := range md.Keys() {
		if _, over := meta[k]; !over {
			keys, values = append(keys, k), append(values, md.Values()[i])
		}
	}
	// In key order: the same metadata gives the same bytes.
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		keys, values = append(keys, k), append(values, meta[k])
	}
	m := arrow.NewMetadata(keys, values)
	return arrow.NewSchema(schema.Fields(), &m)
}
