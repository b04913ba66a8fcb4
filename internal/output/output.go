// Package output opens what tracecast's text sinks write: a file, created
// with its directory as users expect of out/run/x.csv, or standard output
// ("-"), which is never closed.
package output

import (
	"io"
	"os"
	"path/filepath"
)

// Create opens path for writing. "-" is stdout (os.Stdout when nil), named
// "stdout"; any other path is a file, created or truncated, with its
// directory. close closes the file (nothing for standard output).
func Create(path string, stdout io.Writer) (w io.Writer, name string, close func() error, err error) {
	if path == "-" {
		if stdout == nil {
			stdout = os.Stdout
		}
		return stdout, "stdout", func() error { return nil }, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, path, nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, path, nil, err
	}
	return f, path, f.Close, nil
}
