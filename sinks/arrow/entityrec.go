package arrow

import (
	"reflect"
	"slices"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/sinks/jsonl"
)

// entityTable is EntityTable: records of its schema are built by an
// entityRecorder, column by column into buffers it reuses, rather than
// through arrow/go's RecordBuilder (bindEntity), which cost 1.5 billion
// instructions on the 41 MB StarPU trace's 957 k entities (a call per
// value, a bounds check and a capacity check per byte of offsets) and
// allocated its buffers again for every batch. Both make the same record
// (TestEntityRecorderMatchesBuilder: the same IPC bytes).
type entityTable struct {
	schema *arrow.Schema
}

func (t *entityTable) Schema() *arrow.Schema { return t.schema }

func (t *entityTable) ItemsType() reflect.Type { return reflect.TypeFor[[]tracecast.Entity]() }

func (t *entityTable) encoder(b *array.RecordBuilder) func(items any) int {
	return NewTable(t.schema, bindEntity).encoder(b)
}

func (t *entityTable) recorder(schema *arrow.Schema) recorder {
	return &entityRecorder{schema: schema}
}

// recorder builds the records of a table itself. A record it returns
// holds the recorder's buffers: it is valid until the next call.
type recorder interface {
	record(items any) arrow.Record
}

// recordingTable is a Table whose records a recorder builds.
type recordingTable interface {
	recorder(schema *arrow.Schema) recorder
}

// entityRecorder builds entity records in buffers reused from one record
// to the next.
type entityRecorder struct {
	schema *arrow.Schema
	// nature, container, type, value, start_container, end_container,
	// key, extra
	strs                         [8]stringColumn
	start, end, duration, number []float64
	numberValid                  []byte
	imbrication                  []int32
}

// stringColumn is a utf8 column being built: offsets, bytes, validity.
type stringColumn struct {
	offsets []int32
	data    []byte
	valid   []byte
	nulls   int
}

func (c *stringColumn) reset(n int) {
	c.offsets = slices.Grow(c.offsets[:0], n+1)[:1]
	c.offsets[0] = 0
	c.data = c.data[:0]
	c.valid = c.valid[:0]
	c.nulls = 0
}

// strings sets the column to the entities' string field at offset off.
// (The loops below keep the column's slices in locals: appending to the
// fields would load and store them at each value.)
func (c *stringColumn) strings(es []tracecast.Entity, off uintptr) {
	offsets, data := c.offsets[:len(es)+1], c.data[:0]
	for i := range es {
		data = append(data, *(*string)(unsafe.Add(unsafe.Pointer(&es[i]), off))...)
		offsets[i+1] = int32(len(data))
	}
	c.offsets, c.data = offsets, data
}

// natures sets the column to the entities' natures.
func (c *stringColumn) natures(es []tracecast.Entity) {
	offsets, data := c.offsets[:len(es)+1], c.data[:0]
	for i := range es {
		data = append(data, es[i].Nature.String()...)
		offsets[i+1] = int32(len(data))
	}
	c.offsets, c.data = offsets, data
}

// links sets the column to the links' string field at offset off of
// their EntityExt, null for the other entities.
func (c *stringColumn) links(es []tracecast.Entity, off uintptr) {
	n := len(es)
	offsets, data := c.offsets[:n+1], c.data[:0]
	c.valid = slices.Grow(c.valid[:0], (n+7)/8)[:(n+7)/8]
	valid := c.valid
	clear(valid)
	for i := range es {
		if e := &es[i]; e.Nature == tracecast.NatureLink {
			if e.Ext != nil { // else "", as e.StartContainer() and the others say
				data = append(data, *(*string)(unsafe.Add(unsafe.Pointer(e.Ext), off))...)
			}
			valid[i/8] |= 1 << (i % 8)
		} else {
			c.nulls++
		}
		offsets[i+1] = int32(len(data))
	}
	c.offsets, c.data = offsets, data
}

// addNullable appends s, or a null when ok is false, to a column whose
// validity bitmap is kept.
func (c *stringColumn) addNullable(s string, ok bool) {
	i := len(c.offsets) - 1
	if i%8 == 0 {
		c.valid = append(c.valid, 0)
	}
	if ok {
		c.valid[i/8] |= 1 << (i % 8)
		c.data = append(c.data, s...)
	} else {
		c.nulls++
	}
	c.offsets = append(c.offsets, int32(len(c.data)))
}

// array makes the column's array over its buffers.
func (c *stringColumn) array() arrow.Array {
	n := len(c.offsets) - 1
	var valid *memory.Buffer
	if c.nulls > 0 {
		valid = memory.NewBufferBytes(c.valid)
	}
	return array.MakeFromData(array.NewData(arrow.BinaryTypes.String, n,
		[]*memory.Buffer{valid, memory.NewBufferBytes(bytesOf(c.offsets)), memory.NewBufferBytes(c.data)}, nil, c.nulls, 0))
}

// bytesOf is the memory of s (Arrow's buffers are in the machine's byte
// order, as arrow/go's builders write them).
func bytesOf[T int32 | float64](s []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// numeric makes a float64 or int32 array over vs, with a validity bitmap
// when nulls > 0.
func numeric[T int32 | float64](dt arrow.DataType, vs []T, valid []byte, nulls int) arrow.Array {
	var v *memory.Buffer
	if nulls > 0 {
		v = memory.NewBufferBytes(valid)
	}
	return array.MakeFromData(array.NewData(dt, len(vs), []*memory.Buffer{v, memory.NewBufferBytes(bytesOf(vs))}, nil, nulls, 0))
}

func (r *entityRecorder) record(items any) arrow.Record {
	es := items.([]tracecast.Entity)
	n := len(es)
	for i := range r.strs {
		r.strs[i].reset(n)
	}
	nature, container, typ, value := &r.strs[0], &r.strs[1], &r.strs[2], &r.strs[3]
	startC, endC, key, extra := &r.strs[4], &r.strs[5], &r.strs[6], &r.strs[7]
	nature.natures(es)
	container.strings(es, unsafe.Offsetof(tracecast.Entity{}.Container))
	typ.strings(es, unsafe.Offsetof(tracecast.Entity{}.Type))
	value.strings(es, unsafe.Offsetof(tracecast.Entity{}.Value))
	r.start = slices.Grow(r.start[:0], n)[:n]
	r.end = slices.Grow(r.end[:0], n)[:n]
	r.duration = slices.Grow(r.duration[:0], n)[:n]
	r.number = slices.Grow(r.number[:0], n)[:n]
	r.imbrication = slices.Grow(r.imbrication[:0], n)[:n]
	r.numberValid = slices.Grow(r.numberValid[:0], (n+7)/8)[:(n+7)/8]
	clear(r.numberValid)
	start, end, duration, number, imb, nv := r.start[:n], r.end[:n], r.duration[:n], r.number[:n], r.imbrication[:n], r.numberValid
	numberNulls, links, extras := 0, 0, 0
	for i := range es {
		e := &es[i]
		start[i], end[i], duration[i] = e.Start, e.End, e.End-e.Start
		imb[i] = int32(e.Imbrication)
		if e.Nature == tracecast.NatureVariable {
			number[i] = e.Number
			nv[i/8] |= 1 << (i % 8)
		} else {
			number[i] = 0
			numberNulls++
		}
		if e.Nature == tracecast.NatureLink {
			links++
		}
		if e.Ext != nil && len(e.Ext.Extra) > 0 {
			extras++
		}
	}
	for _, c := range []*stringColumn{startC, endC, key} {
		if links == 0 {
			c.allNull(n)
		}
	}
	if links > 0 {
		startC.links(es, unsafe.Offsetof(tracecast.EntityExt{}.StartContainer))
		endC.links(es, unsafe.Offsetof(tracecast.EntityExt{}.EndContainer))
		key.links(es, unsafe.Offsetof(tracecast.EntityExt{}.Key))
	}
	if extras == 0 {
		extra.allNull(n)
	} else {
		var scratch []byte
		for i := range es {
			fields := es[i].Extra()
			if len(fields) == 0 {
				extra.addNullable("", false)
				continue
			}
			scratch = jsonl.AppendFields(scratch[:0], fields)
			extra.addNullable(unsafe.String(unsafe.SliceData(scratch), len(scratch)), true)
		}
	}
	f64, i32 := arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int32
	cols := []arrow.Array{
		nature.array(), container.array(), typ.array(),
		numeric(f64, start, nil, 0), numeric(f64, end, nil, 0), numeric(f64, duration, nil, 0),
		numeric(i32, imb, nil, 0), value.array(), numeric(f64, number, nv, numberNulls),
		startC.array(), endC.array(), key.array(), extra.array(),
	}
	rec := array.NewRecord(r.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// allNull makes the column n nulls.
func (c *stringColumn) allNull(n int) {
	c.offsets = slices.Grow(c.offsets[:0], n+1)[:n+1]
	clear(c.offsets)
	c.valid = slices.Grow(c.valid[:0], (n+7)/8)[:(n+7)/8]
	clear(c.valid)
	c.nulls = n
}
