// Package iocall reads I/O-call streams — strace text output (`strace -f -tt
// -T`, `-ttt`, `-y`/`-yy`, interleaved pids with <unfinished ...>/<...
// resumed> pairs, signals and exits), or the CSV and JSON-lines schema
// documented in docs/io.md — into typed IOCall records.
//
// The strace reader tracks, per process, which path each file descriptor
// names (open/openat/creat results, -y annotations, close, dup/dup2/dup3,
// fcntl F_DUPFD, fd tables shared by clone(CLONE_FILES) or copied by fork)
// and the file offset of each open file description, so that every data
// call carries its offset and is classified as sequential or random.
package iocall

import (
	"github.com/tracecast/tracecast/parsers/lineerr"
	"strconv"
	"strings"
)

// Access is the access pattern of a data call.
type Access uint8

// Access patterns. A data call is Random when its offset is known and differs
// from the end of the previous data call on the same open file; otherwise it
// is Sequential. Non-data calls have AccessNone.
const (
	AccessNone Access = iota
	Sequential
	Random
)

func (a Access) String() string {
	switch a {
	case Sequential:
		return "seq"
	case Random:
		return "rand"
	}
	return "-"
}

// IOCall is one completed I/O system call.
type IOCall struct {
	// Time is when the call started, in seconds: since midnight for
	// strace -tt/-t, since the epoch for -ttt, as given for CSV/JSON.
	Time float64
	// PID is the process (thread) id, or the MPI rank for CSV/JSON input;
	// 0 when the strace line has no pid prefix.
	PID int
	// Op is the system call name as strace prints it (read, pread64, openat…).
	Op string
	// Path is the file the call touched, when known.
	Path string
	// FD is the file descriptor argument (or the one returned by
	// open/openat/creat); -1 when none.
	FD int
	// Offset is the file offset at which a data call started; -1 unknown.
	Offset int64
	// Req is the number of bytes requested (count, or the sum of iov_len);
	// Bytes is the number returned (-1 on error). Both are -1 for calls
	// that move no data.
	Req, Bytes int64
	// Dur is the time spent in the call (strace -T), in seconds; 0 when
	// not recorded.
	Dur float64
	// Err is the errno name when the call failed ("ENOENT"), else "".
	Err string
	// Access is the access pattern of data calls.
	Access Access
	// Flags are the open flags that change an open's cost (O_CREAT,
	// O_TRUNC, O_APPEND, O_DIRECT); creat() has Create|Trunc.
	Flags OpenFlags
	// Line is the line of the input the call ended on.
	Line int64
}

// OpenFlags is a set of open flags.
type OpenFlags uint8

// The open flags kept.
const (
	Create OpenFlags = 1 << iota
	Trunc
	Append
	Direct
)

var flagNames = []string{"creat", "trunc", "append", "direct"}

// String writes the set as "creat|trunc" ("" for none).
func (f OpenFlags) String() string {
	var b strings.Builder
	for i, n := range flagNames {
		if f&(1<<i) != 0 {
			if b.Len() > 0 {
				b.WriteByte('|')
			}
			b.WriteString(n)
		}
	}
	return b.String()
}

// ParseOpenFlags reads "creat|trunc" or strace's "O_WRONLY|O_CREAT|O_TRUNC".
func ParseOpenFlags(s string) (OpenFlags, bool) {
	var f OpenFlags
	for _, p := range strings.Split(s, "|") {
		switch strings.TrimPrefix(strings.ToLower(strings.TrimSpace(p)), "o_") {
		case "creat":
			f |= Create
		case "trunc":
			f |= Trunc
		case "append":
			f |= Append
		case "direct":
			f |= Direct
		case "", "rdonly", "wronly", "rdwr", "cloexec", "largefile", "nonblock", "excl", "noctty", "directory", "nofollow", "sync", "dsync", "noatime", "path", "tmpfile":
		default:
			return f, false
		}
	}
	return f, true
}

// Kind is the operation class of an op: read, write, copy (in-kernel
// copy_file_range, sendfile), open, close, seek, sync, mmap, stat; "" for
// ops this package does not classify.
func Kind(op string) string {
	switch op {
	case "read", "pread64", "readv", "preadv", "preadv2", "pread":
		return "read"
	case "write", "pwrite64", "writev", "pwritev", "pwritev2", "pwrite":
		return "write"
	case "open", "openat", "openat2", "creat":
		return "open"
	case "copy_file_range", "sendfile", "sendfile64":
		return "copy"
	case "close":
		return "close"
	case "lseek", "_llseek", "llseek", "seek":
		return "seek"
	case "fsync", "fdatasync", "sync_file_range", "sync":
		return "sync"
	case "mmap", "munmap", "mmap2":
		return "mmap"
	case "stat", "lstat", "fstat", "newfstatat", "fstatat64", "statx", "stat64", "lstat64", "fstat64":
		return "stat"
	}
	return ""
}

// IsData reports whether the op moves data (read, write or copy kinds).
func IsData(op string) bool { k := Kind(op); return k == "read" || k == "write" || k == "copy" }

// Error is a problem with one line of input: "FILE:LINE: reason".
type Error = lineerr.Error

// Stats counts what the parser read and, in lenient mode, what it skipped.
type Stats struct {
	Lines int64
	// Calls is the number of IOCall records produced.
	Calls int64
	// Other counts syscall lines of calls this package ignores; Signals
	// counts signal, exit and strace diagnostic lines.
	Other, Signals int64
	// Unmatched counts <... resumed> lines without their <unfinished ...>
	// half and unfinished calls never resumed (counted at Finish).
	Unmatched int64
	// Skipped counts skipped lines by reason (lenient mode).
	Skipped lineerr.Skipped
}

// String summarises the stats in one line.
func (s *Stats) String() string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(s.Lines, 10) + " lines, " + strconv.FormatInt(s.Calls, 10) + " I/O calls")
	if n := s.Skipped.Total(); n > 0 {
		b.WriteString(", " + strconv.FormatInt(n, 10) + " skipped")
	}
	return b.String()
}

// Options configure a parser.
type Options struct {
	// File names the input in errors.
	File string
	// Lenient counts and skips bad lines instead of failing on the first.
	Lenient bool
	// MaxLineBytes is the longest accepted line (default 1 MiB).
	MaxLineBytes int
	// All keeps calls on every fd, including sockets, pipes and ttys
	// (-yy annotations "socket:[…]", "pipe:[…]", paths under /dev/pts);
	// by default only calls on files (or on fds of unknown nature) are kept.
	All bool
}

func (o *Options) defaults() {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 1 << 20
	}
	if o.File == "" {
		o.File = "-"
	}
}
