// Package output opens what tracecast's text sinks write: a file, created
// with its directory as users expect of out/run/x.csv, or standard output
// ("-"), which is never closed.
package output

import (
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"
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

// CreateTemp creates tmp, the file a sink writes until it renames it to
// its output (PATH.tmp), with its directory. A tmp already there is stale:
// left by a run that was killed (SIGKILL, a crash) before its rename. It
// is removed first — the link itself if it is a symbolic link, never what
// it points to — and the new file is created exclusively; stale says that
// one was removed, for the caller to log. Its size is returned too.
func CreateTemp(tmp string) (f *os.File, stale bool, staleSize int64, err error) {
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return nil, false, 0, err
	}
	if fi, err := os.Lstat(tmp); err == nil {
		if fi.IsDir() {
			return nil, false, 0, &os.PathError{Op: "create", Path: tmp, Err: errIsDir}
		}
		if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
			return nil, false, 0, err
		}
		stale, staleSize = true, fi.Size()
	}
	f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	return f, stale, staleSize, err
}

var errIsDir = errors.New("is a directory, not a stale temporary file: remove it or choose another output")

// LogStale logs that a stale temporary file was removed.
func LogStale(log zerolog.Logger, tmp string, size int64) {
	log.Warn().Str("path", tmp).Int64("bytes", size).
		Msg("removed a stale temporary file left by an interrupted run (killed before its rename); writing it again")
}

// InPlace reports whether path names an existing file that is not a
// regular file or a directory — a device (/dev/null), a named pipe, a
// socket — after following symbolic links (/dev/stdout). A sink that
// writes PATH.tmp and renames it writes such an output in place instead:
// the rename would replace the device or pipe with a regular file
// (/dev/null itself, when run as root), and fsync refuses it (EINVAL).
func InPlace(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}
