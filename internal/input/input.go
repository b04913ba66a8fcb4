// Package input opens what tracecast reads: a file or standard input ("-"),
// plain or gzip-compressed (recognised by its magic bytes, not its name),
// so that every reader accepts the same inputs and detects compression the
// same way.
package input

import (
	"bufio"
	"bytes"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
)

// IsGzip reports whether the next bytes of br start a gzip stream.
func IsGzip(br *bufio.Reader) bool {
	magic, _ := br.Peek(2)
	return len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
}

// Decompress wraps r so that gzip-compressed input is decompressed
// transparently; other input is returned buffered.
func Decompress(r io.Reader) (io.Reader, error) { return decompress(r, false) }

// DecompressDirect is Decompress for a reader that reads large blocks (a
// Splitter): plain input is read from r directly once the bytes peeked are
// read (Unbuffered).
func DecompressDirect(r io.Reader) (io.Reader, error) { return decompress(r, true) }

func decompress(r io.Reader, direct bool) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if _, err := br.Peek(2); err != nil && err != io.EOF {
		return nil, err
	}
	if IsGzip(br) {
		return gzip.NewReader(br)
	}
	if direct {
		return Unbuffered(br, r), nil
	}
	return br, nil
}

// Unbuffered returns what br holds followed by the rest of r, br's reader.
// A Splitter's chunks are as large as a bufio.Reader's usual buffer, and
// the room left after a carried line start is a little smaller, which
// bufio does not read into directly: through br, every byte of the input
// would be copied once more.
func Unbuffered(br *bufio.Reader, r io.Reader) io.Reader {
	head, _ := br.Peek(br.Buffered())
	return io.MultiReader(bytes.NewReader(head), r)
}

// Open opens path ("-": standard input) for reading, decompressed. name is
// how messages should call it ("<stdin>" for standard input); close
// releases the file.
func Open(path string) (r io.Reader, name string, close func() error, err error) {
	if path == "-" {
		r, err := Decompress(os.Stdin)
		return r, "<stdin>", func() error { return nil }, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, nil, err
	}
	r, err = Decompress(f)
	if err != nil {
		f.Close()
		return nil, path, nil, err
	}
	return r, path, f.Close, nil
}

// BOM is the UTF-8 byte order mark some editors put at the start of a text
// file. Every reader skips it there (it is not part of the first line).
var BOM = []byte{0xEF, 0xBB, 0xBF}

// SkipBOM discards a UTF-8 byte order mark at the start of br.
func SkipBOM(br *bufio.Reader) {
	if b, _ := br.Peek(len(BOM)); bytes.Equal(b, BOM) {
		br.Discard(len(BOM))
	}
}

// TrimBOM returns the first line of an input without its byte order mark.
func TrimBOM(line []byte) []byte { return bytes.TrimPrefix(line, BOM) }

// ReadFile reads a whole file (plain or gzip; "-": standard input), for the
// small inputs read at once: model and parameter files, benchmark results.
func ReadFile(path string) ([]byte, error) {
	r, _, closeIn, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer closeIn()
	return io.ReadAll(r)
}
