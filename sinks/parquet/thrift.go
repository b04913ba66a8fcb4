package parquet

import (
	"encoding/binary"
	"math"
)

// The Parquet footer and page headers are Thrift structures in Thrift's
// compact protocol. This file writes the few the sink needs (parquet.thrift:
// FileMetaData, RowGroup, ColumnChunk, ColumnMetaData, Statistics,
// SchemaElement, LogicalType, KeyValue, PageHeader, DataPageHeaderV2,
// DictionaryPageHeader), field by field.

// Compact protocol field types.
const (
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI16    = 4
	ctI32    = 5
	ctI64    = 6
	ctBinary = 8
	ctList   = 9
	ctStruct = 12
)

// thriftWriter appends a compact-protocol encoding to buf.
type thriftWriter struct {
	buf   []byte
	last  int16   // the last field id of the current struct
	stack []int16 // the enclosing structs' last field ids
}

func (w *thriftWriter) uvarint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }

func (w *thriftWriter) varint(v int64) { w.uvarint(uint64(v<<1) ^ uint64(v>>63)) }

func (w *thriftWriter) field(id int16, typ byte) {
	if d := id - w.last; d > 0 && d <= 15 {
		w.buf = append(w.buf, byte(d)<<4|typ)
	} else {
		w.buf = append(w.buf, typ)
		w.varint(int64(id))
	}
	w.last = id
}

func (w *thriftWriter) i32(id int16, v int32) {
	w.field(id, ctI32)
	w.varint(int64(v))
}

func (w *thriftWriter) i64(id int16, v int64) {
	w.field(id, ctI64)
	w.varint(v)
}

func (w *thriftWriter) i8(id int16, v int8) {
	w.field(id, ctByte)
	w.buf = append(w.buf, byte(v))
}

func (w *thriftWriter) bool(id int16, v bool) {
	if v {
		w.field(id, ctTrue)
	} else {
		w.field(id, ctFalse)
	}
}

func (w *thriftWriter) binary(id int16, b []byte) {
	w.field(id, ctBinary)
	w.uvarint(uint64(len(b)))
	w.buf = append(w.buf, b...)
}

func (w *thriftWriter) string(id int16, s string) {
	w.field(id, ctBinary)
	w.uvarint(uint64(len(s)))
	w.buf = append(w.buf, s...)
}

// begin starts a struct field (id > 0) or a struct element of a list
// (id == 0).
func (w *thriftWriter) begin(id int16) {
	if id > 0 {
		w.field(id, ctStruct)
	}
	w.stack = append(w.stack, w.last)
	w.last = 0
}

// end ends a struct.
func (w *thriftWriter) end() {
	w.buf = append(w.buf, 0)
	w.last = w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
}

// list starts a list field of n elements of type elem.
func (w *thriftWriter) list(id int16, elem byte, n int) {
	w.field(id, ctList)
	if n < 15 {
		w.buf = append(w.buf, byte(n)<<4|elem)
	} else {
		w.buf = append(w.buf, 0xf0|elem)
		w.uvarint(uint64(n))
	}
}

// Values of parquet.thrift's enums.
const (
	typeBoolean   = 0
	typeInt32     = 1
	typeInt64     = 2
	typeDouble    = 5
	typeByteArray = 6

	repRequired = 0
	repOptional = 1

	convertedUTF8            = 0
	convertedTimestampMillis = 9
	convertedTimestampMicros = 10
	convertedInt32           = 17
	convertedInt64           = 18

	encPlain          = 0
	encPlainDict      = 2
	encRLE            = 3
	encRLEDictionary  = 8
	codecNone         = 0
	codecSnappy       = 1
	codecZstd         = 6
	pageData          = 0
	pageDictionary    = 2
	pageDataV2        = 3
	fileFormatVersion = 2
)

// stats are a column chunk's statistics: null count, and min and max as
// Parquet stores them (plain encoding of the value; absent when every
// value is null or NaN).
type stats struct {
	nulls    int64
	has      bool
	min, max []byte
}

func (w *thriftWriter) statistics(id int16, s *stats) {
	w.begin(id)
	w.i64(3, s.nulls)
	if s.has {
		w.binary(5, s.max)
		w.binary(6, s.min)
	}
	w.end()
}

// pageHeader writes a PageHeader: a version 2 data page (dict == nil is
// not a dictionary page) or a dictionary page.
type pageHeader struct {
	typ                      int32
	uncompressed, compressed int32
	values, nulls, rows      int32
	encoding                 int32
	defBytes                 int32
	dictionaryValues         int32
	isCompressed             bool // a data page's values
}

func (w *thriftWriter) pageHeader(h *pageHeader) {
	w.begin(0)
	w.i32(1, h.typ)
	w.i32(2, h.uncompressed)
	w.i32(3, h.compressed)
	switch h.typ {
	case pageDictionary:
		w.begin(7)
		w.i32(1, h.dictionaryValues)
		w.i32(2, encPlain)
		w.end()
	case pageDataV2:
		w.begin(8)
		w.i32(1, h.values)
		w.i32(2, h.nulls)
		w.i32(3, h.rows)
		w.i32(4, h.encoding)
		w.i32(5, h.defBytes)
		w.i32(6, 0) // repetition levels: none in a flat table
		w.bool(7, h.isCompressed)
		w.end()
	}
	w.end()
}

// float64Bytes is v's plain encoding.
func float64Bytes(dst []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
}
