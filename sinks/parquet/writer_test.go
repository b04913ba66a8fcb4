package parquet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pq "github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/sinks/arrow"
)

// decodeHybrid decodes n values of the RLE / bit-packing hybrid encoding,
// as parquet-format's Encodings.md describes it; it fails on a run that
// goes past the input.
func decodeHybrid(b []byte, width, n int) ([]uint32, error) {
	var out []uint32
	for len(out) < n {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, fmt.Errorf("bad run header after %d values", len(out))
		}
		b = b[k:]
		if h&1 == 0 {
			vb := (width + 7) / 8
			if len(b) < vb {
				return nil, fmt.Errorf("short RLE run after %d values", len(out))
			}
			var v uint32
			for i := range vb {
				v |= uint32(b[i]) << (8 * i)
			}
			b = b[vb:]
			for range h >> 1 {
				out = append(out, v)
			}
			continue
		}
		groups := int(h >> 1)
		if len(b) < groups*width {
			return nil, fmt.Errorf("short bit-packed run after %d values", len(out))
		}
		for i := range groups * 8 {
			var v uint32
			for j := range width {
				bit := i*width + j
				v |= uint32(b[bit/8]>>(bit%8)&1) << j
			}
			out = append(out, v)
		}
		b = b[groups*width:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes left after %d values", len(b), n)
	}
	// Only the last run may be padded.
	if len(out)-n >= 8 {
		return nil, fmt.Errorf("%d values decoded for %d", len(out), n)
	}
	return out[:n], nil
}

// TestHybridRoundTrip: random runs and literals of every width from 1 to
// 24 bits, and definition levels, decode to what was encoded.
func TestHybridRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for width := 1; width <= 24; width++ {
		for trial := range 40 {
			var vals []uint32
			n := r.IntN(3000)
			if trial < 10 {
				n = trial // the shortest inputs
			}
			for len(vals) < n {
				v := uint32(r.Uint64N(1 << width))
				k := 1 + r.IntN(20)
				if r.IntN(3) == 0 {
					k = 1 // literals
				}
				for range min(k, n-len(vals)) {
					vals = append(vals, v)
				}
			}
			enc := appendHybrid(nil, vals, width)
			got, err := decodeHybrid(enc, width, len(vals))
			if err != nil || !slices.Equal(got, vals) {
				t.Fatalf("width %d, %d values: %v\ngot  %v\nwant %v", width, len(vals), err, got, vals)
			}
			if width == 1 {
				levels := make([]uint8, len(vals))
				for i, v := range vals {
					levels[i] = uint8(v)
				}
				if enc8 := appendHybrid(nil, levels, 1); !bytes.Equal(enc8, enc) {
					t.Fatalf("definition levels encode as %x, the same values as indices as %x", enc8, enc)
				}
			}
		}
	}
}

// write writes batches of entities to a new Parquet file with opts
// (Path set here) and returns its path; recordPath sends them through
// Arrow records rather than appendEntities.
func writeEntities(t *testing.T, opts Options, recordPath bool, batches ...[]tracecast.Entity) string {
	t.Helper()
	opts.Path = filepath.Join(t.TempDir(), "x.parquet")
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := s.start(b); err != nil {
			t.Fatal(err)
		}
		if recordPath {
			s.entities = false
		}
		if err := s.Write(t.Context(), tracecast.Batch{Items: b}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	return opts.Path
}

// TestEntityPathMatchesRecordPath: entities written straight to the
// columns make the same file, byte for byte, as through the Arrow
// records of the entity table, with pages, row groups and dictionary
// fallbacks on the way, in every codec.
func TestEntityPathMatchesRecordPath(t *testing.T) {
	var batches [][]tracecast.Entity
	for i, n := range []int{1, 7, 300, 2048, 9, 1000} {
		b := entities(n)
		for j := range b {
			b[j].Start += float64(1000 * i)
			b[j].Value = fmt.Sprint("v", (i*7+j)%29, strings.Repeat("x", j%5))
		}
		batches = append(batches, b)
	}
	for _, codec := range []Compression{Snappy, Zstd, Uncompressed} {
		for _, opts := range []Options{{}, {RowGroupRows: 500, RowGroupBytes: 8 << 10}} {
			opts.Compression = codec
			opts.Tables = arrow.RecordTables("ms")
			direct, _ := os.ReadFile(writeEntities(t, opts, false, batches...))
			records, _ := os.ReadFile(writeEntities(t, opts, true, batches...))
			if len(direct) == 0 || !bytes.Equal(direct, records) {
				t.Errorf("%s, %d rows / %d bytes a row group: %d bytes through appendEntities, %d through Arrow records",
					codec, opts.RowGroupRows, opts.RowGroupBytes, len(direct), len(records))
			}
		}
	}
}

// TestDictionaryFallback: a string column whose dictionary outgrows its
// limit (a sixteenth of RowGroupBytes) goes on in plain pages: the chunk
// lists both encodings, and every value reads back.
func TestDictionaryFallback(t *testing.T) {
	ents := entities(3000)
	for i := range ents {
		ents[i].Value = fmt.Sprintf("unique-value-%06d", i) // 20 bytes each: past 4 KiB after 200
	}
	path := writeEntities(t, Options{RowGroupBytes: 64 << 10, RowGroupRows: 1 << 20}, false, ents[:1000], ents[1000:2000], ents[2000:])
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	plain := false
	for g := range r.NumRowGroups() {
		cc, err := r.MetaData().RowGroup(g).ColumnChunk(7) // value
		if err != nil {
			t.Fatal(err)
		}
		encs := cc.Encodings()
		if slices.Contains(encs, pq.Encodings.RLEDict) && slices.Contains(encs, pq.Encodings.Plain) && cc.NumValues() > 300 {
			plain = true
		}
	}
	if !plain {
		t.Error("no row group of the value column fell back to plain pages")
	}
	tbl, _, _ := readTable(t, path)
	got := rows(tbl)
	if len(got) != len(ents) {
		t.Fatalf("%d rows, want %d", len(got), len(ents))
	}
	for i, row := range got {
		if v := strings.Split(row, "|")[7]; v != ents[i].Value {
			t.Fatalf("row %d: value %q, want %q", i, v, ents[i].Value)
		}
	}
}

// TestStatistics: every chunk's statistics are its values' null count,
// least and greatest (NaNs left out; a zero bound written -0 as the least
// and +0 as the greatest; none when every value is null or NaN).
func TestStatistics(t *testing.T) {
	ents := entities(50)
	for i := range ents {
		ents[i].Start = []float64{3, math.NaN(), 0, -2.5, math.Copysign(0, -1), 7}[i%6]
		ents[i].End = ents[i].Start + 1
		if i < 5 {
			ents[i].Number = math.NaN()
		}
	}
	ents[1].Value, ents[2].Value = "zz", "a"
	path := writeEntities(t, Options{}, false, ents)
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rg := r.MetaData().RowGroup(0)
	stat := func(col int) metadata.TypedStatistics {
		cc, err := rg.ColumnChunk(col)
		if err != nil {
			t.Fatal(err)
		}
		s, err := cc.Statistics()
		if err != nil || s == nil {
			t.Fatalf("column %d: no statistics (%v)", col, err)
		}
		return s
	}
	start := stat(3).(*metadata.Float64Statistics)
	if start.Min() != -2.5 || start.Max() != 7 || start.NullCount() != 0 {
		t.Errorf("start: min %v max %v nulls %d, want -2.5, 7, 0", start.Min(), start.Max(), start.NullCount())
	}
	number := stat(8).(*metadata.Float64Statistics)
	vars := 0
	for _, e := range ents {
		if e.Nature == tracecast.NatureVariable {
			vars++
		}
	}
	if number.NullCount() != int64(len(ents)-vars) {
		t.Errorf("number: %d nulls, want %d", number.NullCount(), len(ents)-vars)
	}
	value := stat(7).(*metadata.ByteArrayStatistics)
	if string(value.Min()) != "a" || string(value.Max()) != "zz" {
		t.Errorf("value: min %q max %q, want a, zz", value.Min(), value.Max())
	}
	extra := stat(12)
	if extra.NullCount() != int64(len(ents)-10) || !extra.HasMinMax() {
		t.Errorf("extra: %d nulls (want %d), min and max %v", extra.NullCount(), len(ents)-10, extra.HasMinMax())
	}

	// Zeros, NaNs and nulls alone.
	zeros := entities(4)
	for i := range zeros {
		zeros[i].Nature = tracecast.NatureEvent
		zeros[i].Start = []float64{0, math.Copysign(0, -1), math.NaN(), 0}[i]
		zeros[i].End = zeros[i].Start
	}
	r2, err := file.OpenParquetFile(writeEntities(t, Options{}, false, zeros), false)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	rg = r2.MetaData().RowGroup(0)
	start = stat(3).(*metadata.Float64Statistics)
	if !math.Signbit(start.Min()) || start.Min() != 0 || math.Signbit(start.Max()) || start.Max() != 0 {
		t.Errorf("start of zeros: min %v max %v, want -0 and +0", start.Min(), start.Max())
	}
	if s := stat(8); s.HasMinMax() || s.NullCount() != 4 {
		t.Errorf("number of events: min and max %v, %d nulls; want none, 4", s.HasMinMax(), s.NullCount())
	}
}

func TestCompressionOption(t *testing.T) {
	if _, err := New(Options{Path: filepath.Join(t.TempDir(), "x.parquet"), Compression: "lz4"}); err == nil ||
		!strings.Contains(err.Error(), `unknown compression "lz4"`) {
		t.Errorf("err = %v", err)
	}
	cfg := DefaultSinkConfig()
	cfg.Path, cfg.Compression = "x.parquet", "brotli"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "compression") {
		t.Errorf("Validate: %v", err)
	}
}
