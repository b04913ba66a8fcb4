package parquet

import (
	"bytes"
	"encoding/base64"
	"fmt"

	arrowlib "github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// The record tables' schemas are flat, of a few Arrow types; this file
// maps them onto Parquet columns as arrow/go's pqarrow does (same physical
// and logical types, the Arrow schema serialized in ARROW:schema). The
// schema's root is REQUIRED, as Arrow C++ (pyarrow) writes it, not
// REPEATED as pqarrow does: the Parquet format gives the root no
// repetition, and readers that take a REPEATED root at its word
// (hyparquet, parquet-go, Impala, Snowflake, Velox) see every column as
// repeated and fail on its pages. (Importing pqarrow would also link
// arrow/go's Flight and gRPC, which doubled tracecast's binary and added
// 13–15 MB to the resident memory of every command.)

// columnsOf returns the Parquet columns of a flat Arrow schema: utf8 →
// BYTE_ARRAY (STRING), bool → BOOLEAN, int32/int64 → INT32/INT64 (INT
// signed), float64 → DOUBLE, timestamp → INT64 (TIMESTAMP, UTC-adjusted
// for "UTC"); nullable fields OPTIONAL, the others REQUIRED.
func columnsOf(s *arrowlib.Schema) ([]*column, error) {
	cols := make([]*column, 0, s.NumFields())
	for _, f := range s.Fields() {
		c := &column{name: f.Name, optional: f.Nullable}
		switch t := f.Type.(type) {
		case *arrowlib.StringType:
			c.kind, c.logical.str = kindString, true
		case *arrowlib.BooleanType:
			c.kind = kindBool
		case *arrowlib.Int32Type:
			c.kind, c.logical.intBits = kindInt32, 32
		case *arrowlib.Int64Type:
			c.kind, c.logical.intBits = kindInt64, 64
		case *arrowlib.Float64Type:
			c.kind = kindDouble
		case *arrowlib.TimestampType:
			unit := map[arrowlib.TimeUnit]int8{arrowlib.Millisecond: 1, arrowlib.Microsecond: 2, arrowlib.Nanosecond: 3}
			u, ok := unit[t.Unit]
			if !ok {
				return nil, fmt.Errorf("column %s: no Parquet timestamp in %s", f.Name, t.Unit)
			}
			c.kind = kindInt64
			c.logical.timestamp, c.logical.utc = u, t.TimeZone == "" || t.TimeZone == "UTC"
		default:
			return nil, fmt.Errorf("column %s: no Parquet mapping for Arrow type %s", f.Name, f.Type)
		}
		cols = append(cols, c)
	}
	return cols, nil
}

// keyValueMetadata is the file's key-value metadata: the Arrow schema's
// metadata, then "ARROW:schema", the Arrow schema as an IPC stream (schema
// message, end of stream) in base64, as pqarrow and pyarrow store it.
func keyValueMetadata(s *arrowlib.Schema, mem memory.Allocator) ([][2]string, error) {
	var kv [][2]string
	md := s.Metadata()
	for i, k := range md.Keys() {
		kv = append(kv, [2]string{k, md.Values()[i]})
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s), ipc.WithAllocator(mem))
	if err := w.Close(); err != nil {
		return nil, err
	}
	return append(kv, [2]string{"ARROW:schema", base64.StdEncoding.EncodeToString(buf.Bytes())}), nil
}

// appendArray appends rows [lo, hi) of a, an array of c's Arrow type.
func (c *column) appendArray(a arrowlib.Array, lo, hi int) error {
	switch x := a.(type) {
	case *array.String:
		if c.kind != kindString {
			break
		}
		for i := lo; i < hi; i++ {
			if x.IsNull(i) {
				c.null()
			} else {
				c.strCopy(x.Value(i)) // a view of x's buffer
			}
		}
		return nil
	case *array.Float64:
		if c.kind != kindDouble {
			break
		}
		v := x.Float64Values()
		for i := lo; i < hi; i++ {
			if x.IsNull(i) {
				c.null()
			} else {
				c.present()
				c.f64 = append(c.f64, v[i])
			}
		}
		return nil
	case *array.Int32:
		if c.kind != kindInt32 {
			break
		}
		v := x.Int32Values()
		for i := lo; i < hi; i++ {
			if x.IsNull(i) {
				c.null()
			} else {
				c.present()
				c.i32 = append(c.i32, v[i])
			}
		}
		return nil
	case *array.Int64:
		if c.kind != kindInt64 {
			break
		}
		v := x.Int64Values()
		for i := lo; i < hi; i++ {
			if x.IsNull(i) {
				c.null()
			} else {
				c.present()
				c.i64 = append(c.i64, v[i])
			}
		}
		return nil
	case *array.Timestamp:
		if c.kind != kindInt64 {
			break
		}
		v := x.TimestampValues()
		for i := lo; i < hi; i++ {
			if x.IsNull(i) {
				c.null()
			} else {
				c.present()
				c.i64 = append(c.i64, int64(v[i]))
			}
		}
		return nil
	case *array.Boolean:
		if c.kind != kindBool {
			break
		}
		for i := lo; i < hi; i++ {
			if x.IsNull(i) {
				c.null()
			} else {
				c.present()
				c.bools = append(c.bools, x.Value(i))
			}
		}
		return nil
	}
	return fmt.Errorf("column %s: unexpected Arrow array %s", c.name, a.DataType())
}
