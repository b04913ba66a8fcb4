package gziptest

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFile(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("a\nb\n"))
	zw.Close()
	path := filepath.Join(t.TempDir(), "x.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ReadFile(t, path); string(got) != "a\nb\n" {
		t.Errorf("ReadFile = %q", got)
	}
	plain := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(plain, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ReadFile(t, plain); !bytes.Equal(got, buf.Bytes()) {
		t.Errorf("ReadFile of a plain file = %q", got)
	}
}
