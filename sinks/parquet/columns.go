package parquet

import (
	"bytes"
	"encoding/base64"
	"fmt"

	arrowlib "github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	pq "github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/schema"
)

// The record tables' schemas are flat, of a few Arrow types; this file
// maps them onto Parquet as arrow/go's pqarrow does (same physical and
// logical types, the Arrow schema serialized in ARROW:schema),
// without pqarrow itself: importing it links arrow/go's Flight and gRPC,
// which doubled tracecast's binary (35 → 70 MB) and added 13–15 MB to the
// resident memory of every command.

// parquetSchema is the Parquet schema of a flat Arrow schema: utf8 →
// BYTE_ARRAY (STRING), bool → BOOLEAN, int32/int64 → INT32/INT64 (INT
// signed), float64 → DOUBLE, timestamp → INT64 (TIMESTAMP, UTC-adjusted
// for "UTC"); nullable fields OPTIONAL, the others REQUIRED. The root is
// REQUIRED, as Arrow C++ (pyarrow) writes it, not REPEATED as pqarrow
// does: the Parquet format gives the root no repetition, and readers that
// take a REPEATED root at its word (hyparquet, parquet-go, Impala,
// Snowflake, Velox) see every column as repeated and fail on its pages.
func parquetSchema(s *arrowlib.Schema) (*schema.GroupNode, error) {
	nodes := make(schema.FieldList, 0, s.NumFields())
	for _, f := range s.Fields() {
		rep := pq.Repetitions.Required
		if f.Nullable {
			rep = pq.Repetitions.Optional
		}
		var (
			logical schema.LogicalType = schema.NoLogicalType{}
			phys    pq.Type
		)
		switch t := f.Type.(type) {
		case *arrowlib.StringType:
			phys, logical = pq.Types.ByteArray, schema.StringLogicalType{}
		case *arrowlib.BooleanType:
			phys = pq.Types.Boolean
		case *arrowlib.Int32Type:
			phys, logical = pq.Types.Int32, schema.NewIntLogicalType(32, true)
		case *arrowlib.Int64Type:
			phys, logical = pq.Types.Int64, schema.NewIntLogicalType(64, true)
		case *arrowlib.Float64Type:
			phys = pq.Types.Double
		case *arrowlib.TimestampType:
			unit := map[arrowlib.TimeUnit]schema.TimeUnitType{arrowlib.Millisecond: schema.TimeUnitMillis,
				arrowlib.Microsecond: schema.TimeUnitMicros, arrowlib.Nanosecond: schema.TimeUnitNanos}
			u, ok := unit[t.Unit]
			if !ok {
				return nil, fmt.Errorf("column %s: no Parquet timestamp in %s", f.Name, t.Unit)
			}
			phys, logical = pq.Types.Int64, schema.NewTimestampLogicalTypeForce(t.TimeZone == "" || t.TimeZone == "UTC", u)
		default:
			return nil, fmt.Errorf("column %s: no Parquet mapping for Arrow type %s", f.Name, f.Type)
		}
		n, err := schema.NewPrimitiveNodeLogical(f.Name, rep, logical, phys, -1, -1)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		nodes = append(nodes, n)
	}
	return schema.NewGroupNode("schema", pq.Repetitions.Required, nodes, -1)
}

// keyValueMetadata is the file's key-value metadata: the Arrow schema's
// metadata, then "ARROW:schema", the Arrow schema as an IPC stream (schema
// message, end of stream) in base64, as pqarrow and pyarrow store it.
func keyValueMetadata(s *arrowlib.Schema, mem memory.Allocator) (metadata.KeyValueMetadata, error) {
	kv := metadata.NewKeyValueMetadata()
	md := s.Metadata()
	for i, k := range md.Keys() {
		if err := kv.Append(k, md.Values()[i]); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s), ipc.WithAllocator(mem))
	if err := w.Close(); err != nil {
		return nil, err
	}
	return kv, kv.Append("ARROW:schema", base64.StdEncoding.EncodeToString(buf.Bytes()))
}

// columnWriter appends Arrow arrays to Parquet column chunks, reusing its
// scratch buffers.
type columnWriter struct {
	def     []int16
	strs    []pq.ByteArray
	floats  []float64
	int32s  []int32
	int64s  []int64
	bools   []bool
	present []int // positions of the valid values
}

// levels sets the definition levels of a (nil for a required column, 1
// for a value, 0 for a null) and the positions of its valid values.
func (c *columnWriter) levels(a arrowlib.Array, optional bool) []int16 {
	n := a.Len()
	c.present = c.present[:0]
	if !optional {
		for i := range n {
			c.present = append(c.present, i)
		}
		return nil
	}
	c.def = c.def[:0]
	for i := range n {
		if a.IsValid(i) {
			c.def = append(c.def, 1)
			c.present = append(c.present, i)
		} else {
			c.def = append(c.def, 0)
		}
	}
	return c.def
}

// write appends a to w, the column chunk of the same column.
func (c *columnWriter) write(w file.ColumnChunkWriter, a arrowlib.Array) error {
	def := c.levels(a, w.Descr().MaxDefinitionLevel() > 0)
	var err error
	switch cw := w.(type) {
	case *file.ByteArrayColumnChunkWriter:
		s, ok := a.(*array.String)
		if !ok {
			return fmt.Errorf("column %s: %s is not utf8", w.Descr().Name(), a.DataType())
		}
		offs, data := s.ValueOffsets(), s.ValueBytes()
		c.strs = c.strs[:0]
		for _, i := range c.present {
			c.strs = append(c.strs, data[offs[i]-offs[0]:offs[i+1]-offs[0]])
		}
		_, err = cw.WriteBatch(c.strs, def, nil)
	case *file.Float64ColumnChunkWriter:
		v := a.(*array.Float64).Float64Values()
		c.floats = c.floats[:0]
		for _, i := range c.present {
			c.floats = append(c.floats, v[i])
		}
		_, err = cw.WriteBatch(c.floats, def, nil)
	case *file.Int32ColumnChunkWriter:
		v := a.(*array.Int32).Int32Values()
		c.int32s = c.int32s[:0]
		for _, i := range c.present {
			c.int32s = append(c.int32s, v[i])
		}
		_, err = cw.WriteBatch(c.int32s, def, nil)
	case *file.Int64ColumnChunkWriter:
		c.int64s = c.int64s[:0]
		switch x := a.(type) {
		case *array.Int64:
			v := x.Int64Values()
			for _, i := range c.present {
				c.int64s = append(c.int64s, v[i])
			}
		case *array.Timestamp:
			v := x.TimestampValues()
			for _, i := range c.present {
				c.int64s = append(c.int64s, int64(v[i]))
			}
		default:
			return fmt.Errorf("column %s: %s is not int64 or timestamp", w.Descr().Name(), a.DataType())
		}
		_, err = cw.WriteBatch(c.int64s, def, nil)
	case *file.BooleanColumnChunkWriter:
		v := a.(*array.Boolean)
		c.bools = c.bools[:0]
		for _, i := range c.present {
			c.bools = append(c.bools, v.Value(i))
		}
		_, err = cw.WriteBatch(c.bools, def, nil)
	default:
		return fmt.Errorf("column %s: unexpected Parquet writer %T", w.Descr().Name(), w)
	}
	return err
}
