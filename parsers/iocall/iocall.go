// Package iocall reads I/O-call streams — strace text output (`strace -f -tt
// -T`, `-ttt`, `-y`/`-yy`, interleaved pids with <unfinished ...>/<...
// resumed> pairs, signals and exits), or the CSV and JSON-lines schema
// documented in docs/io.md — into typed tracecast.IOCall records.
//
// The strace reader tracks, per process, which path each file descriptor
// names (open/openat/creat results, -y annotations, close, dup/dup2/dup3,
// fcntl F_DUPFD, fd tables shared by clone(CLONE_FILES) or copied by fork)
// and the file offset of each open file description, so that every data
// call carries its offset and is classified as sequential or random.
package iocall

import (
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/lineerr"
)

// ParseOpenFlags reads "creat|trunc" or strace's "O_WRONLY|O_CREAT|O_TRUNC".
func ParseOpenFlags(s string) (tracecast.OpenFlags, bool) {
	var f tracecast.OpenFlags
	for _, p := range strings.Split(s, "|") {
		switch strings.TrimPrefix(strings.ToLower(strings.TrimSpace(p)), "o_") {
		case "creat":
			f |= tracecast.OpenCreate
		case "trunc":
			f |= tracecast.OpenTrunc
		case "append":
			f |= tracecast.OpenAppend
		case "direct":
			f |= tracecast.OpenDirect
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
	// Calls is the number of tracecast.IOCall records produced.
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
	// MaxPIDs bounds the processes tracked at once (default 65 536): a
	// process is forgotten at its exit ("+++ exited with"), and a line
	// that would track one more is an error ("limit"), or skipped in
	// lenient mode.
	MaxPIDs int
	// MaxOpenCalls bounds the unfinished calls (<unfinished ...> waiting
	// for their <... resumed> half) held at once (default 16 384).
	MaxOpenCalls int
	// MaxFDs bounds the file descriptors tracked over all processes
	// (default 1 Mi); closed ones and those of exited processes are
	// forgotten. In the CSV and JSON-lines formats it bounds the open files
	// whose offsets classify accesses.
	MaxFDs int
	// All keeps calls on every fd, including sockets, pipes and ttys
	// (-yy annotations "socket:[…]", "pipe:[…]", paths under /dev/pts);
	// by default only calls on files (or on fds of unknown nature) are kept.
	All bool
	// Logger receives, from a Processor at the end of its input, the lines
	// skipped in lenient mode (a warning: results leave them out) and what
	// was read (debug). The zero value logs nothing.
	Logger zerolog.Logger
}

// Defaults of the limits, used when an Options field is 0 or less.
const (
	DefaultMaxLineBytes = 1 << 20
	DefaultMaxPIDs      = 1 << 16
	DefaultMaxOpenCalls = 1 << 14
	DefaultMaxFDs       = 1 << 20
)

// What a Parser holds is bounded by its options, whatever the input's
// length. The costs are upper bounds per item with the maps that hold it
// (TestHeapBound measures them).
const (
	// A tracked process: its descriptor table and map entries.
	bytesPerPID = 512
	// A tracked descriptor: its open file description and map entries,
	// beside its path (at most MaxPathBytes).
	bytesPerFD = 256
	// An unfinished call: its record and map entry, beside its first
	// half (at most OpenCallBytes on average: MaxOpenCalls × OpenCallBytes
	// over all of them).
	bytesPerOpenCall = 128
	// OpenCallBytes is the room per unfinished call for the halves held.
	OpenCallBytes = 4096
	// MaxPathBytes is the longest path kept for a descriptor.
	MaxPathBytes = 4096
	// Interned paths: at most 65 536 of at most 256 bytes.
	internBytes = 1 << 16 * (256 + 64)
	fixedBytes  = 1 << 20
)

// HeapBound is an upper bound, in bytes, on the heap a strace Parser keeps
// live with these options (zero limits count as their defaults): the line
// and its copies, the processes, descriptors (with their paths) and
// unfinished calls the limits allow, and the interned paths.
func (o Options) HeapBound() int64 {
	o.defaults()
	return fixedBytes + 3*int64(o.MaxLineBytes) + internBytes + int64(o.MaxPIDs)*bytesPerPID +
		int64(o.MaxFDs)*(bytesPerFD+MaxPathBytes) + int64(o.MaxOpenCalls)*(bytesPerOpenCall+OpenCallBytes)
}

func (o *Options) defaults() {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxPIDs <= 0 {
		o.MaxPIDs = DefaultMaxPIDs
	}
	if o.MaxOpenCalls <= 0 {
		o.MaxOpenCalls = DefaultMaxOpenCalls
	}
	if o.MaxFDs <= 0 {
		o.MaxFDs = DefaultMaxFDs
	}
	if o.File == "" {
		o.File = "-"
	}
}
