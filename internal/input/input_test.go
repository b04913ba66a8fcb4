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
