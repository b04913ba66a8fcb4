package input

import (
	"io"
	"os"
)

// Spool copies r into a temporary file and returns its path, for an input
// that must be read twice (standard input); the caller removes the file.
func Spool(r io.Reader) (string, error) {
	f, err := os.CreateTemp("", "tracecast-stdin-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
