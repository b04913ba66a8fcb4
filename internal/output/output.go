// Package output opens what tracecast writes: a file, created with its
// directory as users expect of out/run/x.csv, or standard output ("-"),
// which is never closed.
//
// A file is written under a temporary name in its directory (PATH.tmp) and
// renamed to PATH only once complete (File.Commit): a run that fails — a
// full disk, a bad line, a hard stop — removes PATH.tmp (File.Abort) and
// leaves PATH as it was, absent or the previous complete file, so that a
// truncated output never passes for a whole one. Every sink, report and
// plot opens its files here; Error names the file (PATH, not PATH.tmp) and
// the cause: "out.csv: no space left on device".
//
// Two kinds of outputs are written in place instead: a device or a named
// pipe (InPlace: /dev/null, a consumer's FIFO — a rename would replace it
// with a regular file), and, when asked (Options.InPlace), a file that is
// read while it is written (a live pipeline's JSON lines or Arrow stream,
// flushed batch by batch, whose offsets are committed once flushed).
package output

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/rs/zerolog"
)

// Options say how Open opens an output.
type Options struct {
	// Stdout replaces os.Stdout for the path "-".
	Stdout io.Writer
	// InPlace writes PATH itself, created or truncated, rather than
	// PATH.tmp renamed at the end: for a file read while written. A
	// failed run leaves what was written.
	InPlace bool
	// Logger receives the warning about a stale PATH.tmp removed (left by
	// a run killed before its rename); the zero value logs nothing.
	Logger zerolog.Logger
}

// File is an output opened by Open. Write errors, and those of Commit,
// are *Error values naming the output's path. A File is used by one
// goroutine.
type File struct {
	name string // the path, or "stdout"
	path string // "" for standard output
	tmp  string // PATH.tmp, "" when written in place
	f    *os.File
	w    io.Writer
	// device: a device or a pipe, written in place: neither synced nor
	// renamed, and no footer written after Abort.
	device bool
	err    error // the first write error
	done   bool
}

// Open opens path for writing: "-" is standard output, a device or a
// named pipe is written in place (InPlace), and any other path is written
// as PATH.tmp, created with its directory, until Commit renames it (or
// PATH directly with o.InPlace). A PATH.tmp already there is stale: left
// by a run that was killed (SIGKILL, a crash) before its rename. It is
// removed first — the link itself if it is a symbolic link, never what it
// points to — with a warning, and the new one is created exclusively.
func Open(path string, o Options) (*File, error) {
	if path == "-" {
		w := o.Stdout
		if w == nil {
			w = os.Stdout
		}
		return &File{name: "stdout", w: w, device: true}, nil
	}
	f := &File{name: path, path: path}
	var err error
	switch {
	case InPlace(path):
		f.device = true
		f.f, err = os.OpenFile(path, os.O_WRONLY, 0)
	case o.InPlace:
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			f.f, err = os.Create(path)
		}
	default:
		f.tmp = path + ".tmp"
		var stale bool
		var size int64
		if f.f, stale, size, err = createTemp(f.tmp); stale {
			LogStale(o.Logger, f.tmp, size)
		}
	}
	if errors.Is(err, errIsDir) {
		return nil, &Error{Path: f.tmp, Err: errIsDir}
	} else if err != nil {
		return nil, f.wrap(err)
	}
	f.w = f.f
	if fault := currentFault(); fault != nil {
		f.w = fault(path, f.f)
	}
	return f, nil
}

// Name is the output's name for messages: its path, or "stdout".
func (f *File) Name() string { return f.name }

// Temp reports whether the output is written under a temporary name
// (PATH.tmp) until Commit.
func (f *File) Temp() bool { return f.tmp != "" }

// Write writes p. An error is an *Error naming the output; after one,
// every Write returns it again.
func (f *File) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.done {
		return 0, f.wrap(os.ErrClosed)
	}
	n, err := f.w.Write(p)
	if err != nil {
		f.err = f.wrap(err)
		return n, f.err
	}
	return n, nil
}

// Commit makes the output complete: it syncs the file (not a device nor a
// pipe), closes it and renames PATH.tmp to PATH. On any error the
// temporary file is removed, PATH is left as it was, and the error names
// PATH and the cause. Standard output is left open. After Commit or
// Abort, Commit does nothing.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.f == nil {
		return f.err
	}
	err := f.err
	if err == nil && !f.device {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && f.tmp != "" {
		err = os.Rename(f.tmp, f.path)
	}
	if err != nil && f.tmp != "" {
		os.Remove(f.tmp)
	}
	if err != nil {
		return f.wrap(err)
	}
	return nil
}

// Abort discards the output: the file is closed and PATH.tmp removed, PATH
// is left as it was. An output written in place keeps what was written.
// It returns an error only when PATH.tmp could not be removed. After
// Commit or Abort, Abort does nothing.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.f == nil {
		return nil
	}
	f.f.Close()
	if f.tmp == "" {
		return nil
	}
	if err := os.Remove(f.tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return f.wrap(err)
	}
	return nil
}

// Close is Commit, for the io.Closer of a caller that writes the whole
// output before closing it.
func (f *File) Close() error { return f.Commit() }

// wrap names f's path (not PATH.tmp) and err's cause.
func (f *File) wrap(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Path: f.name, Err: cause(err), kept: f.tmp == "" && f.f != nil}
}

// Error is a failed output: "PATH: cause", where PATH is the output's
// final path (never PATH.tmp) and the cause the system's error (no space
// left on device, permission denied), followed, for a full disk or quota,
// by what happened to the file and what to do.
type Error struct {
	Path string
	Err  error
	kept bool // written in place: what was written is left
}

func (e *Error) Error() string {
	s := e.Path + ": " + e.Err.Error()
	if errors.Is(e.Err, syscall.ENOSPC) || errors.Is(e.Err, syscall.EDQUOT) {
		if e.kept {
			s += fmt.Sprintf(" (%s holds what was written before; free some space on its filesystem and run again)", e.Path)
		} else {
			s += fmt.Sprintf(" (%s left as it was: free some space on its filesystem and run again)", e.Path)
		}
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// cause strips the operation and the file name (PATH.tmp) from err: a
// *fs.PathError, *os.LinkError or *os.SyscallError gives its errno.
func cause(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	case errors.As(err, &se):
		return se.Err
	}
	return err
}

// WriteFile writes path through write, as Open and Commit do: PATH.tmp
// renamed once write returned nil and the file is synced, removed on any
// error (PATH left as it was).
func WriteFile(path string, write func(w io.Writer) error) error {
	f, err := Open(path, Options{})
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		var e *Error
		if errors.As(err, &e) || f.err == nil {
			return err
		}
		return f.err
	}
	return f.Commit()
}

// createTemp creates tmp with its directory; a tmp already there is
// removed first (stale, with its size).
func createTemp(tmp string) (f *os.File, stale bool, staleSize int64, err error) {
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
// socket — after following symbolic links (/dev/stdout). Open writes such
// an output in place: the rename would replace the device or pipe with a
// regular file (/dev/null itself, when run as root), and fsync refuses it
// (EINVAL).
func InPlace(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}

// Fault, for tests, wraps the writer of every file Open opens (not
// standard output): a test that cannot fill a filesystem (no tmpfs to
// mount) injects a writer that fails with syscall.ENOSPC instead.
type Fault func(path string, w io.Writer) io.Writer

var (
	faultMu sync.Mutex
	fault   Fault
)

// SetFault installs f for the files opened from now on (nil: none) and
// returns a function that restores the previous one. Tests only.
func SetFault(f Fault) (restore func()) {
	faultMu.Lock()
	defer faultMu.Unlock()
	prev := fault
	fault = f
	return func() {
		faultMu.Lock()
		defer faultMu.Unlock()
		fault = prev
	}
}

func currentFault() Fault {
	faultMu.Lock()
	defer faultMu.Unlock()
	return fault
}

// Annotate prefixes err with what failed ("csv sink") and the output's
// name: "csv sink out.csv: reason". An *Error is returned as it is: it
// names the file, the cause and what to do ("out.csv: no space left on
// device (out.csv left as it was: ...)"), and is what the commands print
// whatever wrote the file — a prefix said "parquet sink: " in backfill's
// message and not in states'.
func Annotate(what, name string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("%s %s: %w", what, name, err)
}

// Finish ends a sink's output f once its writers are closed, errs being
// what closing them returned: with keep and no error PATH.tmp becomes PATH
// (Commit); otherwise it is removed (Abort), and without keep what was
// written and its errors are discarded. The error is Annotate's.
func Finish(f *File, keep bool, what, name string, errs ...error) error {
	err := errors.Join(errs...)
	switch {
	case !keep:
		err = f.Abort() // what it wrote is discarded, errors too
	case err != nil:
		f.Abort()
	default:
		err = f.Commit()
	}
	if err != nil {
		return Annotate(what, name, err)
	}
	return nil
}

// AbortSink is a sink's Abort (tracecast.Aborter) for a sink that writes
// f and sets *closed when it is closed: PATH.tmp is removed and PATH left
// as it was; an output written in place (standard output, a pipe, a live
// pipeline's file) is closed by close instead, keeping what was written.
// Once closed, it does nothing.
func AbortSink(f *File, closed *bool, close func() error) error {
	if *closed {
		return nil
	}
	if !f.Temp() {
		return close()
	}
	*closed = true
	return f.Abort()
}
