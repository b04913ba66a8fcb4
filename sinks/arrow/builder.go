package arrow

import (
	"fmt"
	"reflect"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/tracecast/tracecast"
)

// Builder turns batches of one table's record type into Arrow records of
// the table's schema with more metadata: what Sink and StreamEncoder do, for
// other writers of the same schemas (the Parquet sink). It reuses one record
// builder, and so its buffers' capacity, across batches. Not safe for
// concurrent use.
type Builder struct {
	b *builder
}

// NewBuilder returns a builder of t's records whose schema is t's with meta
// added to its metadata (meta's values win; nil adds nothing).
func NewBuilder(mem memory.Allocator, t Table, meta map[string]string) *Builder {
	if mem == nil {
		mem = memory.NewGoAllocator()
	}
	return &Builder{b: newBuilder(mem, t, withMetadata(t.Schema(), meta))}
}

// Schema is the schema of the records built, metadata included.
func (b *Builder) Schema() *arrow.Schema { return b.b.rb.Schema() }

// Table is the table the builder builds.
func (b *Builder) Table() Table { return b.b.table }

// Record builds one record from items (of the table's ItemsType); the
// caller releases it before the next call: the record may hold the
// builder's buffers, which the next call refills. It returns nil, nil for
// an empty batch.
func (b *Builder) Record(items any) (arrow.Record, error) { return b.b.record(items) }

// Release frees the builder's buffers.
func (b *Builder) Release() { b.b.release() }

// TableFor returns the table of tables that takes batches of items' type;
// the error lists the types the tables take.
func TableFor(tables []Table, items any) (Table, error) {
	typ := reflect.TypeOf(items)
	known := make([]string, len(tables))
	for i, t := range tables {
		if t.ItemsType() == typ {
			return t, nil
		}
		known[i] = t.ItemsType().String()
	}
	return nil, fmt.Errorf("no Arrow schema for items of type %T (known: %v)", items, known)
}

// SinkTables returns RecordTables(timeUnit) for a file sink whose
// `records:` option is records: the table of that record type first, since
// the first table is the schema of an output that received no record ("":
// the registry's order, entities first).
func SinkTables(timeUnit, records string) []Table {
	tables := RecordTables(timeUnit)
	if records == "" {
		return tables
	}
	rt, err := tracecast.LookupRecordType(records)
	if err != nil {
		return tables
	}
	for i, t := range tables {
		if t.ItemsType() == rt.Items {
			tables[0], tables[i] = tables[i], tables[0]
		}
	}
	return tables
}
