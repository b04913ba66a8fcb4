package arrow

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// StreamEncoder turns batches into standalone Arrow IPC streams (the schema,
// one record batch, the end marker): one self-describing message per batch,
// e.g. a Kafka message. It reuses a record builder per record type. Not safe
// for concurrent use.
type StreamEncoder struct {
	mem      memory.Allocator
	tables   map[reflect.Type]Table
	builders map[reflect.Type]*builder
	buf      bytes.Buffer
}

// NewStreamEncoder returns an encoder for the record types of tables.
func NewStreamEncoder(tables []Table) *StreamEncoder {
	e := &StreamEncoder{mem: memory.NewGoAllocator(), tables: map[reflect.Type]Table{}, builders: map[reflect.Type]*builder{}}
	for _, t := range tables {
		e.tables[t.ItemsType()] = t
	}
	return e
}

// Encode returns items ([]T of a known table) as an IPC stream; nil for an
// empty batch.
func (e *StreamEncoder) Encode(items any) ([]byte, error) {
	typ := reflect.TypeOf(items)
	b := e.builders[typ]
	if b == nil {
		t, ok := e.tables[typ]
		if !ok {
			return nil, fmt.Errorf("no Arrow schema for items of type %T", items)
		}
		b = newBuilder(e.mem, t, t.Schema())
		e.builders[typ] = b
	}
	rec, err := b.record(items)
	if err != nil || rec == nil {
		return nil, err
	}
	defer rec.Release()
	e.buf.Reset()
	w := ipc.NewWriter(&e.buf, ipc.WithSchema(b.table.Schema()), ipc.WithAllocator(e.mem))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(e.buf.Bytes()), nil
}

// Release frees the builders' buffers.
func (e *StreamEncoder) Release() {
	for _, b := range e.builders {
		b.release()
	}
	e.builders = map[reflect.Type]*builder{}
}
