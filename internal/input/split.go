package input

import (
	"bytes"
	"io"
)

// MaxChunkBytes bounds a chunk, and so the longest line a Splitter hands
// out whatever its Max says: offsets into a chunk fit in 31 bits.
const MaxChunkBytes = 1<<31 - 1

// Chunk is a run of whole lines cut by a Splitter. Its buffer is reused
// from one Fill to the next.
type Chunk struct {
	// Buf is the chunk's buffer; Data is a prefix of it.
	Buf []byte
	// Data holds whole lines, each with its newline, except the input's
	// last line, which may lack it.
	Data []byte
	// First is true for the input's first chunk (its first line may start
	// with a byte order mark); TooLong for a chunk that stands for one line
	// longer than the maximum, whose bytes were dropped (Data is nil).
	First, TooLong bool
}

// Splitter cuts its input into chunks of whole lines of about Size bytes,
// so that the lines can be split and tokenized in parallel downstream
// without copying each line. A line longer than Size grows the chunk, up
// to Max+1 bytes; a longer one is dropped and stood for by a TooLong chunk.
// It is used by one goroutine at a time.
type Splitter struct {
	// Cut makes a line longer than Max come cut to its first Max bytes
	// (and its newline), the rest read and dropped, instead of as a
	// TooLong chunk: for a consumer that refuses or skips such lines
	// itself, naming them.
	Cut bool

	r         io.Reader
	max, size int
	carry     []byte // the start of the next chunk's first line
	skipping  bool   // dropping the rest of a line longer than max
	dropped   int64  // bytes of long lines dropped so far
	eof       bool
	first     bool // the first chunk has been filled
}

// NewSplitter returns a splitter of r into chunks of about size bytes,
// with lines of at most max bytes.
func NewSplitter(r io.Reader, size, maxLine int) *Splitter {
	return &Splitter{r: r, max: maxLine, size: max(size, 1)}
}

// Dropped is how many bytes of the input long lines lost so far (cut or
// stood for by a TooLong chunk): what was read is the chunks' bytes plus
// Dropped.
func (s *Splitter) Dropped() int64 { return s.dropped }

// Fill fills c with the next lines. It returns false at the end of the
// input, with the read error if there was one.
func (s *Splitter) Fill(c *Chunk) (bool, error) {
	if cap(c.Buf) < s.size || cap(c.Buf) > 4*s.size {
		// A chunk grown for a long line goes back to the normal size.
		c.Buf = make([]byte, 0, s.size)
	}
	c.First, c.TooLong = !s.first, false
	data := append(c.Buf[:0], s.carry...)
	s.carry = s.carry[:0]
	for {
		var err error
		for !s.eof && len(data) < cap(data) {
			var n int
			n, err = s.r.Read(data[len(data):cap(data)])
			data = data[:len(data)+n]
			if err == io.EOF {
				s.eof, err = true, nil
			} else if err != nil {
				break
			}
		}
		if err != nil {
			// A read error ends the input where it happens.
			c.Buf = data
			return false, err
		}
		if s.skipping {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				s.dropped += int64(len(data))
				data = data[:0]
				if s.eof {
					c.Buf = data
					return false, nil
				}
				continue
			}
			s.skipping = false
			s.dropped += int64(i + 1)
			data = data[:copy(data, data[i+1:])]
			if !s.eof {
				continue
			}
		}
		if s.eof {
			c.Buf = data
			if len(data) == 0 {
				return false, nil
			}
			c.Data = data
			s.first = true
			return true, nil
		}
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			s.carry = append(s.carry, data[i+1:]...)
			c.Buf, c.Data = data, data[:i+1]
			s.first = true
			return true, nil
		}
		// The buffer is full and holds part of one line.
		if len(data) > s.max || len(data) >= MaxChunkBytes {
			// Too long: cut, or it stands for the line; its bytes are
			// dropped up to its newline.
			if s.Cut {
				n := min(s.max, len(data)-1)
				s.dropped += int64(len(data) - n - 1) // the newline added stands for the line's own
				data = append(data[:n], '\n')
				c.Buf, c.Data = data, data
			} else {
				c.Buf, c.Data, c.TooLong = data, nil, true
			}
			s.skipping = true
			s.first = true
			return true, nil
		}
		grown := make([]byte, len(data), min(2*cap(data), s.max+1, MaxChunkBytes))
		copy(grown, data)
		data = grown
	}
}
