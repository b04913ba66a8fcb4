package parquet

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// The Parquet writer of flat tables. arrow/go v15's writer took 2.0 s
// and 130 MiB on the 41 MB StarPU trace, against 0.16 s and 37 MiB for
// pj_dump lines: a new zstd encoder for every page (its history buffers,
// 1.2 GB allocated a run), an interface conversion (an allocation) for
// every string value its dictionary encoder looked up, the Arrow records
// built first. This one writes the same file layout (version 2 data pages,
// string columns dictionary-encoded while their dictionary stays under
// its limit, chunk statistics) from column buffers it reuses: no
// allocation per value, page or row group in the steady state, one zstd
// encoder when zstd is asked for. Without its zstd codec even (snappy,
// below), arrow/go's writer took 1.4 s.
//
// Snappy rather than zstd by default: zstd's default level compresses the
// doubles of times at 50–65 MB/s here (0.3 s more CPU time on this
// trace), its fastest level gains little on them (ratio 0.96–0.99) and
// still takes 0.2 s; snappy (s2's encoder) takes 0.07 s, for a 20.3 MB
// file against 16.4.

// kind is a column's value type.
type kind uint8

const (
	kindString kind = iota
	kindBool
	kindInt32
	kindInt64
	kindDouble
)

// logical is a column's Parquet logical and converted type.
type logical struct {
	str       bool // STRING / UTF8
	intBits   int8 // INTEGER(bits, signed) / INT_32, INT_64; 0: none
	timestamp int8 // TIMESTAMP unit: 1 millis, 2 micros, 3 nanos; 0: none
	utc       bool // the timestamp is adjusted to UTC
}

// column is one column of the table: the page being filled, the column
// chunk of the current row group (its data pages, encoded and compressed)
// and the chunk's statistics.
type column struct {
	w        *writer
	name     string
	kind     kind
	optional bool
	logical  logical

	// The page being filled: one definition level per row (optional
	// columns), the non-null values.
	def   []uint8
	rows  int
	nulls int
	f64   []float64
	i64   []int64
	i32   []int32
	bools []bool
	idx   []uint32 // dictionary indices
	plain []byte   // plain-encoded strings, after a dictionary fallback

	// Strings: the chunk's dictionary; fallback is set once it outgrew
	// the limit (the chunk's later pages are plain).
	dict     *dictionary
	fallback bool

	// The chunk: its data pages (headers and bodies), sizes, statistics.
	chunk blocks
	// The page being ended (endPages): its encoded values, definition
	// levels and compressed values, per column so that the pages that
	// end together are compressed on two cores (endPages).
	page         pageOut
	uncompressed int64
	values       int64
	chunkNulls   int64
	plainPages   bool
	dictPages    bool
	hasMinMax    bool
	minF, maxF   float64
	minI, maxI   int64
	minS, maxS   string
	minB, maxB   bool
}

// chunkMeta is what the footer says of a written column chunk.
type chunkMeta struct {
	encodings    []int32
	values       int64
	uncompressed int64
	compressed   int64
	dataOffset   int64
	dictOffset   int64 // -1: no dictionary page
	st           stats
}

// start is the offset of the chunk's first page.
func (m *chunkMeta) start() int64 {
	if m.dictOffset >= 0 {
		return m.dictOffset
	}
	return m.dataOffset
}

type rowGroupMeta struct {
	rows, offset, uncompressed, compressed int64
	cols                                   []chunkMeta
}

// writer writes a Parquet file of cols to out.
type writer struct {
	out        io.Writer
	pos        int64
	cols       []*column
	kv         [][2]string
	pageBytes  int // a page ends once its values take this many bytes
	codec      int32
	zstd       *zstd.Encoder // zstd's encoder, reused
	groups     []rowGroupMeta
	rows       int64     // rows in the written row groups
	groupRows  int64     // rows in the current row group
	body, comp []byte    // the dictionary pages'
	job        []*column // endPages' pages being ended
	tw         thriftWriter
	err        error
}

func newWriter(out io.Writer, cols []*column, kv [][2]string, pageBytes, dictBytes int, codec Compression) (*writer, error) {
	w := &writer{out: out, cols: cols, kv: kv, pageBytes: pageBytes}
	switch codec {
	case Snappy:
		w.codec = codecSnappy
	case Zstd:
		w.codec = codecZstd
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1),
			zstd.WithZeroFrames(true))
		if err != nil {
			return nil, err
		}
		w.zstd = enc
	case Uncompressed:
		w.codec = codecNone
	default:
		return nil, fmt.Errorf("unknown compression %q", codec)
	}
	free := new([][]byte)
	for _, c := range cols {
		c.w = w
		c.chunk.free = free
		c.reserve(pageBytes)
		if c.kind == kindString {
			c.dict = newDictionary(dictBytes)
		}
	}
	w.write([]byte("PAR1"))
	return w, nil
}

// compressPage compresses a data page's values with the file's codec.
func (w *writer) compressPage(body []byte) ([]byte, bool) {
	if w.codec == codecNone {
		return body, false
	}
	return w.compress(body), true
}

// compress compresses a page's values (or dictionary) with the file's
// codec, into a buffer reused by the next call.
func (w *writer) compress(body []byte) []byte {
	switch w.codec {
	case codecSnappy:
		// s2's snappy-compatible encoder: 5% fewer instructions than
		// golang/snappy's on this data.
		w.comp = s2.EncodeSnappy(w.comp[:cap(w.comp)], body)
	case codecZstd:
		w.comp = w.zstd.EncodeAll(body, w.comp[:0])
	default:
		w.comp = append(w.comp[:0], body...)
	}
	return w.comp
}

func (w *writer) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.out.Write(b)
	w.pos += int64(n)
	w.err = err
}

// reserve allocates the buffers of the page being filled, to the size a
// page reaches: a page ends after the batch that made it reach pageBytes
// (batchSlack rows at most, for the paje parser's batches of 2048).
func (c *column) reserve(pageBytes int) {
	const batchSlack = 2048
	if c.optional {
		c.def = make([]uint8, 0, pageBytes+batchSlack)
	}
	switch c.kind {
	case kindDouble:
		c.f64 = make([]float64, 0, pageBytes/8+batchSlack)
	case kindInt64:
		c.i64 = make([]int64, 0, pageBytes/8+batchSlack)
	case kindInt32:
		c.i32 = make([]int32, 0, pageBytes/4+batchSlack)
	case kindString:
		c.idx = make([]uint32, 0, pageBytes/4+batchSlack)
	}
}

// null appends a null to an optional column.
func (c *column) null() {
	c.def = append(c.def, 0)
	c.rows++
	c.nulls++
}

// present counts a row holding a value.
func (c *column) present() {
	if c.optional {
		c.def = append(c.def, 1)
	}
	c.rows++
}

// str appends a string, possibly one of the parser's interned strings
// (the dictionary's cache is keyed by the string's address).
func (c *column) str(s string) {
	c.present()
	c.value(s)
}

// value appends s to the values, without its definition level.
func (c *column) value(s string) {
	if !c.fallback {
		c.idx = append(c.idx, c.dict.index(s))
		return
	}
	c.appendPlain(s)
}

// strCopy appends a string whose bytes may change after the call (a
// view of a buffer): copied when kept.
func (c *column) strCopy(s string) {
	c.present()
	c.valueCopy(s)
}

// valueCopy appends s, copied when kept, without its definition level.
func (c *column) valueCopy(s string) {
	if !c.fallback {
		c.idx = append(c.idx, c.dict.indexCopy(s))
		return
	}
	c.appendPlain(s)
}

func (c *column) appendPlain(s string) {
	c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(len(s)))
	c.plain = append(c.plain, s...)
	if !c.hasMinMax {
		c.minS, c.maxS, c.hasMinMax = strings.Clone(s), strings.Clone(s), true
	} else if s < c.minS {
		c.minS = strings.Clone(s)
	} else if s > c.maxS {
		c.maxS = strings.Clone(s)
	}
}

// pendingBytes are the bytes of the page being filled.
func (c *column) pendingBytes() int {
	return len(c.def) + 8*len(c.f64) + 8*len(c.i64) + 4*len(c.i32) + len(c.bools) + 4*len(c.idx) + len(c.plain)
}

// heldBytes are the bytes the column holds for the row group.
func (c *column) heldBytes() int {
	n := c.chunk.n + c.pendingBytes()
	if c.dict != nil {
		n += c.dict.size
	}
	return n
}

// endPages ends the page of every column that reached the page size (or
// of every column that has rows, when all). A dictionary over its size
// limit ends the dictionary pages of its chunk (the page being filled is
// the last): the chunk's later values are plain. (Between batches: a
// page's definition levels and values are appended batch by batch.)
//
// The pages that end together (the fixed-width columns fill at one pace)
// are compressed two at a time: the columns of even rank here, the others
// on a goroutine (snappy was a seventh of `states --format parquet`'s CPU
// time, on the sink's goroutine, the run's longest). Written in column
// order after: the file is the same bytes.
func (w *writer) endPages(all bool) {
	job := w.job[:0]
	for _, c := range w.cols {
		if c.dict != nil && !c.fallback && c.dict.size > c.dict.limit {
			if c.rows > 0 {
				w.encodePage(c)
				job = append(job, c)
			}
			c.fallback = true
			continue
		}
		if c.rows > 0 && (all || c.pendingBytes() >= w.pageBytes) {
			w.encodePage(c)
			job = append(job, c)
		}
	}
	if len(job) >= 2 && w.codec != codecNone {
		done := make(chan struct{})
		go func() {
			for i := 1; i < len(job); i += 2 {
				w.compressOwn(job[i])
			}
			close(done)
		}()
		for i := 0; i < len(job); i += 2 {
			w.compressOwn(job[i])
		}
		<-done
	} else {
		for _, c := range job {
			w.compressOwn(c)
		}
	}
	for _, c := range job {
		w.writePage(c)
	}
	clear(job)
	w.job = job[:0]
}

// pageOut is a data page being ended: its header's fields and buffers.
type pageOut struct {
	body, levels, comp []byte
	enc                int32
	compressed         bool
	own                bool // body is the page's buffer (not a view of the values)
}

// compressOwn compresses c's page into c.page.comp (snappy: safe on any
// goroutine; zstd's EncodeAll too).
func (w *writer) compressOwn(c *column) {
	pg := &c.page
	switch w.codec {
	case codecNone:
		pg.comp, pg.compressed = pg.body, false
		return
	case codecSnappy:
		pg.comp = s2.EncodeSnappy(pg.comp[:cap(pg.comp)], pg.body)
	case codecZstd:
		pg.comp = w.zstd.EncodeAll(pg.body, pg.comp[:0])
	}
	pg.compressed = true
}

// encodePage encodes c's page being filled (values, definition levels,
// statistics) into c.page.
func (w *writer) encodePage(c *column) {
	body := c.page.body[:0]
	if !c.page.own {
		body = nil
	}
	enc := int32(encPlain)
	switch c.kind {
	case kindDouble:
		body = plainOf(body, c.f64, 8, func(b []byte, v float64) []byte {
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		})
		if mn, mx, ok := minMaxFloat64(c.f64); ok {
			if !c.hasMinMax {
				c.minF, c.maxF, c.hasMinMax = mn, mx, true
			} else {
				c.minF, c.maxF = math.Min(c.minF, mn), math.Max(c.maxF, mx)
			}
		}
	case kindInt64:
		body = plainOf(body, c.i64, 8, func(b []byte, v int64) []byte { return binary.LittleEndian.AppendUint64(b, uint64(v)) })
		if len(c.i64) > 0 {
			mn, mx := c.i64[0], c.i64[0]
			for _, v := range c.i64 {
				mn, mx = min(mn, v), max(mx, v)
			}
			c.mergeInt(mn, mx)
		}
	case kindInt32:
		body = plainOf(body, c.i32, 4, func(b []byte, v int32) []byte { return binary.LittleEndian.AppendUint32(b, uint32(v)) })
		if len(c.i32) > 0 {
			mn, mx := c.i32[0], c.i32[0]
			for _, v := range c.i32 {
				mn, mx = min(mn, v), max(mx, v)
			}
			c.mergeInt(int64(mn), int64(mx))
		}
	case kindBool:
		var b byte
		for i, v := range c.bools {
			if v {
				b |= 1 << (i % 8)
			}
			if i%8 == 7 {
				body = append(body, b)
				b = 0
			}
		}
		if len(c.bools)%8 != 0 {
			body = append(body, b)
		}
		for _, v := range c.bools {
			if !c.hasMinMax {
				c.minB, c.maxB, c.hasMinMax = v, v, true
			}
			c.minB, c.maxB = c.minB && v, c.maxB || v
		}
	case kindString:
		if !c.fallback {
			enc = encRLEDictionary
			width := bitWidth(len(c.dict.vals))
			body = append(body, byte(width))
			body = appendHybrid(body, c.idx, width)
			c.dictPages = true
		} else {
			body = append(body, c.plain...)
			c.plainPages = true
		}
	}
	levels := c.page.levels[:0]
	if c.optional {
		levels = appendHybrid(levels, c.def, 1)
	}
	c.page.body, c.page.levels, c.page.enc = body, levels, enc
	c.page.own = c.kind != kindDouble && c.kind != kindInt64 && c.kind != kindInt32 || !littleEndian
}

// writePage writes c's encoded and compressed page into its chunk and
// starts the next page.
func (w *writer) writePage(c *column) {
	pg := &c.page
	body, levels, comp, enc := pg.body, pg.levels, pg.comp, pg.enc
	h := pageHeader{typ: pageDataV2, uncompressed: int32(len(levels) + len(body)), compressed: int32(len(levels) + len(comp)),
		values: int32(c.rows), nulls: int32(c.nulls), rows: int32(c.rows), encoding: enc, defBytes: int32(len(levels)),
		isCompressed: pg.compressed}
	w.tw.buf = w.tw.buf[:0]
	w.tw.pageHeader(&h)
	c.chunk.write(w.tw.buf)
	c.chunk.write(levels)
	c.chunk.write(comp)
	c.uncompressed += int64(len(w.tw.buf) + len(levels) + len(body))
	c.values += int64(c.rows)
	c.chunkNulls += int64(c.nulls)
	if !pg.own {
		pg.body = nil // a view of the values, which the next page overwrites
	}
	if w.codec == codecNone {
		pg.comp = nil
	}
	c.def, c.f64, c.i64, c.i32, c.bools, c.idx = c.def[:0], c.f64[:0], c.i64[:0], c.i32[:0], c.bools[:0], c.idx[:0]
	if enc == encPlain {
		c.plain = c.plain[:0]
	}
	c.rows, c.nulls = 0, 0
}

func (c *column) mergeInt(mn, mx int64) {
	if !c.hasMinMax {
		c.minI, c.maxI, c.hasMinMax = mn, mx, true
		return
	}
	c.minI, c.maxI = min(c.minI, mn), max(c.maxI, mx)
}

// littleEndian: the machine's numbers are laid out as Parquet's plain
// encoding lays them out.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// plainOf is the plain encoding of vs (size bytes each): their memory
// itself on a little-endian machine, else appended to dst by put.
func plainOf[T int32 | int64 | float64](dst []byte, vs []T, size int, put func([]byte, T) []byte) []byte {
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vs))), size*len(vs))
	}
	for _, v := range vs {
		dst = put(dst, v)
	}
	return dst
}

// minMaxFloat64 are the least and greatest of vs but NaNs; ok is false
// when there are none.
func minMaxFloat64(vs []float64) (mn, mx float64, ok bool) {
	mn, mx = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		// Comparisons with NaN are false: NaNs are skipped.
		if v < mn {
			mn = v
		}
		if v > mx {
			mx = v
		}
	}
	return mn, mx, mn <= mx
}

// endRowGroup writes the current row group: every column's pending page,
// then the column chunks one after the other (dictionary page first).
func (w *writer) endRowGroup() error {
	if w.groupRows == 0 {
		return w.err
	}
	w.endPages(true)
	g := rowGroupMeta{rows: w.groupRows, offset: w.pos, cols: make([]chunkMeta, len(w.cols))}
	for i, c := range w.cols {
		m := &g.cols[i]
		m.dictOffset = -1
		start := w.pos
		var dictHeader int64
		if c.dict != nil && c.dictPages {
			m.dictOffset = w.pos
			body := w.body[:0]
			for _, s := range c.dict.vals {
				body = binary.LittleEndian.AppendUint32(body, uint32(len(s)))
				body = append(body, s...)
			}
			comp, _ := w.compressPage(body)
			h := pageHeader{typ: pageDictionary, uncompressed: int32(len(body)), compressed: int32(len(comp)), dictionaryValues: int32(len(c.dict.vals))}
			w.tw.buf = w.tw.buf[:0]
			w.tw.pageHeader(&h)
			w.write(w.tw.buf)
			w.write(comp)
			dictHeader = int64(len(w.tw.buf) + len(body))
			w.body = body
			c.stringStats()
		}
		m.dataOffset = w.pos
		for _, b := range c.chunk.blocks {
			w.write(b)
		}
		m.values = c.values
		m.compressed = w.pos - start
		m.uncompressed = c.uncompressed + dictHeader
		m.encodings = encodings(c)
		m.st = c.stats()
		g.uncompressed += m.uncompressed
		g.compressed += m.compressed
		c.reset()
	}
	w.groups = append(w.groups, g)
	w.rows += w.groupRows
	w.groupRows = 0
	return w.err
}

// stringStats sets the chunk's min and max from its dictionary: every
// entry is a value of the chunk.
func (c *column) stringStats() {
	for _, s := range c.dict.vals {
		if !c.hasMinMax {
			c.minS, c.maxS, c.hasMinMax = s, s, true
		} else if s < c.minS {
			c.minS = s
		} else if s > c.maxS {
			c.maxS = s
		}
	}
}

// encodings lists the encodings of a chunk, as arrow/go lists them: the
// values' (RLE_DICTIONARY, PLAIN), then RLE for the levels.
func encodings(c *column) []int32 {
	var e []int32
	if c.dictPages {
		e = append(e, encRLEDictionary, encPlain)
	}
	if c.plainPages && !c.dictPages || c.kind != kindString {
		e = append(e, encPlain)
	}
	return append(e, encRLE)
}

// stats are the chunk's statistics in their plain encoding.
func (c *column) stats() stats {
	s := stats{nulls: c.chunkNulls, has: c.hasMinMax}
	if !s.has {
		return s
	}
	switch c.kind {
	case kindDouble:
		// A zero bound is written -0 as the minimum, +0 as the maximum
		// (parquet.thrift, ColumnOrder), whatever the zeros' signs.
		mn, mx := c.minF, c.maxF
		if mn == 0 {
			mn = math.Copysign(0, -1)
		}
		if mx == 0 {
			mx = 0
		}
		s.min, s.max = float64Bytes(nil, mn), float64Bytes(nil, mx)
	case kindInt64:
		s.min, s.max = binary.LittleEndian.AppendUint64(nil, uint64(c.minI)), binary.LittleEndian.AppendUint64(nil, uint64(c.maxI))
	case kindInt32:
		s.min, s.max = binary.LittleEndian.AppendUint32(nil, uint32(c.minI)), binary.LittleEndian.AppendUint32(nil, uint32(c.maxI))
	case kindBool:
		s.min, s.max = []byte{b2i(c.minB)}, []byte{b2i(c.maxB)}
	case kindString:
		s.min, s.max = []byte(c.minS), []byte(c.maxS)
	}
	return s
}

func b2i(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// reset empties the chunk for the next row group, keeping its buffers.
func (c *column) reset() {
	c.chunk.reset()
	c.plain = c.plain[:0]
	c.uncompressed, c.values, c.chunkNulls = 0, 0, 0
	c.plainPages, c.dictPages, c.hasMinMax, c.fallback = false, false, false, false
	c.minS, c.maxS = "", ""
	if c.dict != nil {
		c.dict.reset()
	}
}

// heldBytes are the bytes held for the current row group.
func (w *writer) heldBytes() int64 {
	n := 0
	for _, c := range w.cols {
		n += c.heldBytes()
	}
	return int64(n)
}

// close writes the last row group and the footer.
func (w *writer) close() error {
	if err := w.endRowGroup(); err != nil {
		return err
	}
	t := &w.tw
	t.buf = t.buf[:0]
	t.begin(0)
	t.i32(1, fileFormatVersion)
	t.list(2, ctStruct, len(w.cols)+1)
	t.begin(0)
	t.i32(3, repRequired)
	t.string(4, "schema")
	t.i32(5, int32(len(w.cols)))
	t.end()
	for _, c := range w.cols {
		c.schemaElement(t)
	}
	t.i64(3, w.rows)
	t.list(4, ctStruct, len(w.groups))
	for i, g := range w.groups {
		t.begin(0)
		t.list(1, ctStruct, len(g.cols))
		for j, m := range g.cols {
			t.begin(0)
			t.i64(2, m.start())
			t.begin(3)
			t.i32(1, w.cols[j].physical())
			t.list(2, ctI32, len(m.encodings))
			for _, e := range m.encodings {
				t.varint(int64(e))
			}
			t.list(3, ctBinary, 1)
			t.uvarint(uint64(len(w.cols[j].name)))
			t.buf = append(t.buf, w.cols[j].name...)
			t.i32(4, w.codec)
			t.i64(5, m.values)
			t.i64(6, m.uncompressed)
			t.i64(7, m.compressed)
			t.i64(9, m.dataOffset)
			if m.dictOffset >= 0 {
				t.i64(11, m.dictOffset)
			}
			t.statistics(12, &m.st)
			t.end()
			t.end()
		}
		t.i64(2, g.uncompressed)
		t.i64(3, g.rows)
		t.i64(5, g.offset)
		t.i64(6, g.compressed)
		t.field(7, ctI16)
		t.varint(int64(i))
		t.end()
	}
	if len(w.kv) > 0 {
		t.list(5, ctStruct, len(w.kv))
		for _, kv := range w.kv {
			t.begin(0)
			t.string(1, kv[0])
			t.string(2, kv[1])
			t.end()
		}
	}
	t.string(6, "tracecast")
	t.list(7, ctStruct, len(w.cols))
	for range w.cols {
		t.begin(0)
		t.begin(1) // TYPE_ORDER
		t.end()
		t.end()
	}
	t.end()
	t.buf = binary.LittleEndian.AppendUint32(t.buf, uint32(len(t.buf)))
	t.buf = append(t.buf, "PAR1"...)
	w.write(t.buf)
	return w.err
}

// physical is the column's Parquet physical type.
func (c *column) physical() int32 {
	switch c.kind {
	case kindBool:
		return typeBoolean
	case kindInt32:
		return typeInt32
	case kindInt64:
		return typeInt64
	case kindDouble:
		return typeDouble
	}
	return typeByteArray
}

// schemaElement writes the column's SchemaElement.
func (c *column) schemaElement(t *thriftWriter) {
	t.begin(0)
	t.i32(1, c.physical())
	rep := int32(repRequired)
	if c.optional {
		rep = repOptional
	}
	t.i32(3, rep)
	t.string(4, c.name)
	l := c.logical
	switch {
	case l.str:
		t.i32(6, convertedUTF8)
	case l.intBits == 32:
		t.i32(6, convertedInt32)
	case l.intBits == 64:
		t.i32(6, convertedInt64)
	case l.timestamp == 1:
		t.i32(6, convertedTimestampMillis)
	case l.timestamp == 2:
		t.i32(6, convertedTimestampMicros)
	}
	switch {
	case l.str:
		t.begin(10)
		t.begin(1)
		t.end()
		t.end()
	case l.intBits != 0:
		t.begin(10)
		t.begin(10)
		t.i8(1, l.intBits)
		t.bool(2, true)
		t.end()
		t.end()
	case l.timestamp != 0:
		t.begin(10)
		t.begin(8)
		t.bool(1, l.utc)
		t.begin(2)
		t.begin(int16(l.timestamp))
		t.end()
		t.end()
		t.end()
		t.end()
	}
	t.end()
}

// dictionary maps a column chunk's distinct strings to their indices.
// Lookups of the same string (the same bytes at the same address, as the
// Paje parser's interned names and values are) hit a small cache keyed by
// address before the map.
type dictionary struct {
	m     map[string]uint32
	vals  []string
	size  int // the plain encoding's bytes
	limit int
	cache [dictCache]cacheEntry
}

// dictCache is the number of cache entries (index by a uint8).
const dictCache = 256

type cacheEntry struct {
	p   *byte
	n   int // -1: empty
	idx uint32
}

func newDictionary(limit int) *dictionary {
	d := &dictionary{m: map[string]uint32{}, limit: limit}
	d.reset()
	return d
}

func (d *dictionary) reset() {
	clear(d.m)
	clear(d.vals)
	d.vals = d.vals[:0]
	d.size = 0
	for i := range d.cache {
		d.cache[i] = cacheEntry{n: -1}
	}
}

// index returns the index of s, added if new. s is kept as it is: a Go
// string does not change.
func (d *dictionary) index(s string) uint32 {
	p := unsafe.StringData(s)
	e := &d.cache[uint8(uint64(uintptr(unsafe.Pointer(p)))*0x9e3779b97f4a7c15>>56)]
	if e.p == p && e.n == len(s) {
		return e.idx
	}
	return d.miss(s, e)
}

// miss looks s up in the map, and caches its index in e.
//
//go:noinline
func (d *dictionary) miss(s string, e *cacheEntry) uint32 {
	i, ok := d.m[s]
	if !ok {
		i = d.add(s)
	}
	*e = cacheEntry{p: unsafe.StringData(s), n: len(s), idx: i}
	return i
}

// indexCopy returns the index of s, added (copied) if new.
func (d *dictionary) indexCopy(s string) uint32 {
	if i, ok := d.m[s]; ok {
		return i
	}
	return d.add(strings.Clone(s))
}

func (d *dictionary) add(s string) uint32 {
	i := uint32(len(d.vals))
	d.m[s] = i
	d.vals = append(d.vals, s)
	d.size += 4 + len(s)
	return i
}

// release frees the zstd encoder's state.
func (w *writer) release() {
	if w.zstd != nil {
		w.zstd.Close()
	}
}

// blocks hold a column chunk's pages in blocks of blockSize bytes, taken
// from and given back to a free list shared by the columns: a chunk grows
// without copying, and a row group's blocks serve the next.
type blocks struct {
	blocks [][]byte
	n      int
	free   *[][]byte
}

const blockSize = 64 << 10

func (b *blocks) write(p []byte) {
	b.n += len(p)
	for len(p) > 0 {
		if len(b.blocks) == 0 || len(b.blocks[len(b.blocks)-1]) == blockSize {
			var blk []byte
			if f := *b.free; len(f) > 0 {
				blk, *b.free = f[len(f)-1], f[:len(f)-1]
			} else {
				blk = make([]byte, 0, blockSize)
			}
			b.blocks = append(b.blocks, blk)
		}
		last := &b.blocks[len(b.blocks)-1]
		k := copy((*last)[len(*last):blockSize], p)
		*last = (*last)[:len(*last)+k]
		p = p[k:]
	}
}

// reset gives the blocks back to the free list.
func (b *blocks) reset() {
	for _, blk := range b.blocks {
		*b.free = append(*b.free, blk[:0])
	}
	clear(b.blocks)
	b.blocks = b.blocks[:0]
	b.n = 0
}
