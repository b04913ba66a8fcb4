package paje

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/input"
)

// refChunkTokenize is chunk.tokenize as it was before the bitmap: the
// chunk split at newlines, each line tokenized alone (tokenize).
func refChunkTokenize(c *chunk, max int, snap *defSnap) {
	c.lines, c.toks, c.reasons, c.nlines = c.lines[:0], c.toks[:0], c.reasons[:0], 0
	data := c.Data
	for pos := 0; pos < len(data); {
		line := data[pos:]
		var flags uint8
		next := len(data)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], pos+i+1
		} else {
			flags = linePartial
		}
		c.nlines++
		if len(line) > max {
			c.lines = append(c.lines, lineRec{rel: uint32(c.nlines), reason: -1, flags: lineTooLong})
			pos = next
			continue
		}
		if flags == 0 {
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
		}
		if c.nlines == 1 && c.First {
			line = input.TrimBOM(line)
		}
		start := len(c.toks)
		toks, reason := tokenize(line, nil)
		pos = next
		if len(toks) == 0 && reason == "" {
			continue
		}
		c.toks = append(c.toks, toks...)
		l := lineRec{rel: uint32(c.nlines), tok: uint32(start), reason: -1, flags: flags}
		if reason != "" {
			l.reason = int32(len(c.reasons))
			c.reasons = append(c.reasons, reason)
		} else {
			l.dec.decode(toks, snap)
		}
		l.end = uint32(len(c.toks))
		c.lines = append(c.lines, l)
	}
}

// checkChunkTokenize compares chunk.tokenize with the reference on data:
// the same lines, the same tokens (the same bytes of data), the same
// complaints.
func checkChunkTokenize(t *testing.T, data []byte, first bool, max int) {
	t.Helper()
	snap := testSnap(t)
	got, want := newChunk(), newChunk()
	got.Data, got.First = data, first
	want.Data, want.First = data, first
	got.tokenize(max, snap)
	refChunkTokenize(want, max, snap)
	if got.nlines != want.nlines || len(got.lines) != len(want.lines) || len(got.toks) != len(want.toks) {
		t.Fatalf("%q: %d lines, %d records, %d tokens; want %d, %d, %d", data, got.nlines, len(got.lines), len(got.toks), want.nlines, len(want.lines), len(want.toks))
	}
	for i := range got.lines {
		g, w := got.lines[i], want.lines[i]
		gr, wr := "", ""
		if g.reason >= 0 {
			gr = got.reasons[g.reason]
		}
		if w.reason >= 0 {
			wr = want.reasons[w.reason]
		}
		g.reason, w.reason = 0, 0
		if g != w || gr != wr {
			t.Fatalf("%q: line record %d is %+v %q, want %+v %q", data, i, g, gr, w, wr)
		}
	}
	for i := range got.toks {
		g, w := got.toks[i], want.toks[i]
		if !bytes.Equal(g.b, w.b) || g.quoted() != w.quoted() || len(w.b) > 0 && &g.b[0] != &w.b[0] {
			t.Fatalf("%q: token %d is %q (quoted %v), want %q (quoted %v)", data, i, g.b, g.quoted(), w.b, w.quoted())
		}
	}
}

// testSnap is the definitions of hdr, so that event lines are decoded too.
func testSnap(t testing.TB) *defSnap {
	p := NewParser(DefaultOptions())
	for i, l := range strings.Split(hdr, "\n") {
		if err := p.Line([]byte(l), int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	return p.hdr.snap.Load()
}

// TestChunkTokenizeMatchesReference: chunks made of every kind of byte
// and line end, at every offset of the bitmap's 64-byte words (quotes,
// comments and bad bytes across them, a byte order mark, carriage
// returns, lines too long, a last line without its newline), and the
// repository's traces cut in chunks, are tokenized as line by line.
func TestChunkTokenizeMatchesReference(t *testing.T) {
	alphabet := []string{"a", "bc", "12345678", " ", "\t", "  ", "\"", "#", "!", "\"q q\"", "\x00", "\x01", "\x7f", "\xff", "é", "\xc3",
		"\r", "\v", "\f", "$", "4146.657716000", "\n", "\n", "\r\n", "\n\n", "4 1.5 w1 S Idle\n", "5 2 w1 S \"A\"\n", "\ufeff"}
	r := rand.New(rand.NewPCG(7, 8))
	n := 30000
	if testing.Short() {
		n = 3000 // make test runs it under the race detector, and FuzzChunkTokenize
	}
	for range n {
		var sb strings.Builder
		if r.IntN(8) == 0 {
			sb.WriteString("\ufeff")
		}
		for range r.IntN(60) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		checkChunkTokenize(t, []byte(sb.String()), r.IntN(2) == 0, 1+r.IntN(80))
	}
	traces, _ := filepath.Glob("../../testdata/*/*.trace")
	traces = append(traces, "")
	for _, tr := range traces {
		var data []byte
		if tr == "" {
			data = gziptest.ReadFile(t, starpuTrace)
		} else {
			var err error
			if data, err = os.ReadFile(tr); err != nil {
				t.Fatal(err)
			}
		}
		for i, ch := range cutChunks(t, data, 1000+len(tr)) {
			checkChunkTokenize(t, ch, i == 0, 1<<20)
		}
	}
}

// cutChunks cuts data into chunks of whole lines of about size bytes, as
// the file source does.
func cutChunks(t *testing.T, data []byte, size int) [][]byte {
	t.Helper()
	var chunks [][]byte
	sp := input.NewSplitter(bytes.NewReader(data), size, 1<<20)
	for {
		var ch input.Chunk
		ok, err := sp.Fill(&ch)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return chunks
		}
		chunks = append(chunks, append([]byte(nil), ch.Data...))
	}
}

// FuzzChunkTokenize checks chunk.tokenize against the reference on
// arbitrary chunks.
func FuzzChunkTokenize(f *testing.F) {
	f.Add([]byte("\ufeff10\t4146.657716000\tw1\tWS\t\"P\"\r\n# c\x00\n\"a\n"), true, 100)
	f.Add([]byte(strings.Repeat("x", 63)+"\"q\xff\"\n"+strings.Repeat(" ", 64)+"#\xc3"), false, 10)
	f.Fuzz(func(t *testing.T, data []byte, first bool, max int) {
		checkChunkTokenize(t, data, first, 1+max&0xffff)
	})
}

// markRef is markSpecials byte by byte.
func markRef(data []byte) []uint64 {
	dst := make([]uint64, (len(data)+63)/64)
	for k, b := range data {
		if b < 0x24 || b >= 0x7f {
			dst[k/64] |= 1 << (k % 64)
		}
	}
	return dst
}

// TestMarkSpecials: the bitmap flags exactly the bytes below 0x24, DEL and
// the non-ASCII ones, at every length and alignment of the input.
func TestMarkSpecials(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	buf := make([]byte, 1000)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for i := range 256 { // every byte value, everywhere in a word
		buf[i] = byte(i)
	}
	for off := range 70 {
		for _, n := range []int{0, 1, 7, 63, 64, 65, 127, 128, 500, 1000 - off} {
			data := buf[off : off+min(n, len(buf)-off)]
			got, want := markSpecials(nil, data), markRef(data)
			if len(got) != len(want) {
				t.Fatalf("%d bytes at %d: %d words, want %d", len(data), off, len(got), len(want))
			}
			for w := range got {
				if got[w] != want[w] {
					t.Fatalf("%d bytes at %d: word %d is %064b, want %064b", len(data), off, w, got[w], want[w])
				}
			}
		}
	}
}

// TestTokenizeBitsFull: tokenizeBits never grows dst. With room for fewer
// tokens than the line has, whichever field overflows (after a tab, after
// another separator, a quoted field, before a comment, at the end of the
// line), it says reasonFull; with room for all of them it gives tokenize's
// tokens.
func TestTokenizeBitsFull(t *testing.T) {
	for _, line := range []string{
		"10\t1.5\tw1\tS\tB",
		"10 1.5\r\vw1\fS\rB",
		`9 1.5 w1 E "a b" "" x`,
		"10 1.5 w1 # a comment",
		"10\t1.5\tw1#tail",
	} {
		want, wantReason := tokenize([]byte(line), nil)
		data := []byte(line + "\nnext line\n")
		bm := markSpecials(nil, data)
		for room := range len(want) + 1 {
			got, reason, end := tokenizeBits(data, bm, 0, make([]token, 0, room))
			if room < len(want) {
				if reason != reasonFull {
					t.Errorf("%q with room for %d of %d tokens: reason %q, want %q", line, room, len(want), reason, reasonFull)
				}
				continue
			}
			if reason != wantReason || end != len(line) || len(got) != len(want) {
				t.Errorf("%q: %d tokens, reason %q, end %d; want %d, %q, %d", line, len(got), reason, end, len(want), wantReason, len(line))
				continue
			}
			for i := range got {
				if string(got[i].b) != string(want[i].b) || got[i].quoted() != want[i].quoted() {
					t.Errorf("%q: token %d is %q (quoted %v), want %q (%v)", line, i, got[i].b, got[i].quoted(), want[i].b, want[i].quoted())
				}
			}
		}
	}
}
