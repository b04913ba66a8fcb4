package input

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

func TestOpenPlainAndGzip(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("a\nb\n"))
	zw.Close()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"plain", []byte("a\nb\n")},
		{"gzip", gz.Bytes()},
		{"empty", nil},
	} {
		path := filepath.Join(dir, tc.name)
		os.WriteFile(path, tc.data, 0o644)
		r, name, closeIn, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, err := io.ReadAll(r)
		closeIn()
		want := "a\nb\n"
		if tc.data == nil {
			want = ""
		}
		if err != nil || string(b) != want || name != path {
			t.Errorf("%s: %q %v (%s)", tc.name, b, err, name)
		}
		// ReadFile reads the same, whole.
		if b, err := ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s: ReadFile %q %v", tc.name, b, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file read")
	}
}

func TestSpool(t *testing.T) {
	p, err := Spool(strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(p)
	if b, err := os.ReadFile(p); err != nil || string(b) != "hello" {
		t.Fatalf("%q %v", b, err)
	}
}

// recordingReader serves data and counts the reads into the caller's
// buffer and into other ones (a bufio.Reader's).
type recordingReader struct {
	data   []byte
	caller *byte // the start of the buffer the test reads into
	direct int   // reads into it
	other  int   // reads into other buffers
}

func (r *recordingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	if len(p) > 0 && &p[0] == r.caller {
		r.direct++
	} else {
		r.other++
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestDecompressDirect: after the bytes peeked to detect gzip, plain input
// is read straight into the caller's buffer, 64 KiB less a carried line
// start at a time as a Splitter reads; through a bufio.Reader (Decompress)
// every byte was copied once more. Gzip input is decompressed.
func TestDecompressDirect(t *testing.T) {
	data := bytes.Repeat([]byte("12\t1517.445398000\tt22038\tUS\n"), 20000)
	buf := make([]byte, 64<<10)
	for _, tc := range []struct {
		name   string
		open   func(io.Reader) (io.Reader, error)
		direct bool
	}{{"Decompress", Decompress, false}, {"DecompressDirect", DecompressDirect, true}} {
		rr := &recordingReader{data: data, caller: &buf[40]}
		r, err := tc.open(rr)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for {
			n, err := r.Read(buf[40:]) // room after a carried line start
			got = append(got, buf[40:40+n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("%s: read %d bytes, not the input's %d", tc.name, len(got), len(data))
		}
		// The first read fills the detection buffer.
		if direct := rr.other == 1 && rr.direct > 0; direct != tc.direct {
			t.Errorf("%s: %d reads into the caller's buffer, %d into another; direct = %v, want %v", tc.name, rr.direct, rr.other, direct, tc.direct)
		}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	r, err := DecompressDirect(&gz)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, data) {
		t.Errorf("gzip: %d bytes, %v", len(got), err)
	}
}
