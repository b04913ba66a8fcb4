// Package gziptest reads test fixtures whole, gzip-compressed (the demo
// trace, the power streams, the SMPI traces) or not, failing the test on
// an error.
package gziptest

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"
)

// ReadFile returns the content of the file at path, decompressed when its
// name ends in .gz.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	gz, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return gz
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err == nil {
		var b []byte
		if b, err = io.ReadAll(zr); err == nil {
			return b
		}
	}
	t.Fatalf("%s: %v", path, err)
	return nil
}
