package tracecast

import "strings"

// Access is the access pattern of a data call.
type Access uint8

// Access patterns. A data call is AccessRandom when its offset is known and differs
// from the end of the previous data call on the same open file; otherwise it
// is AccessSequential. Non-data calls have AccessNone.
const (
	AccessNone Access = iota
	AccessSequential
	AccessRandom
)

func (a Access) String() string {
	switch a {
	case AccessSequential:
		return "seq"
	case AccessRandom:
		return "rand"
	}
	return "-"
}

// IOCall is one completed I/O system call.
type IOCall struct {
	// Time is when the call started, in seconds: since midnight for
	// strace -tt/-t, since the epoch for -ttt, as given for CSV/JSON.
	Time float64 `json:"time" desc:"when the call started, seconds (since midnight for strace -tt, the epoch for -ttt, as given otherwise)"`
	// PID is the process (thread) id, or the MPI rank for CSV/JSON input;
	// 0 when the strace line has no pid prefix.
	PID int `json:"pid" desc:"process (thread) id, or MPI rank; 0 when strace printed none" schema:"minimum=0"`
	// Op is the system call name as strace prints it (read, pread64, openat…).
	Op string `json:"op" desc:"system call name (read, pwrite64, openat, ...)"`
	// Path is the file the call touched, when known.
	Path string `json:"path" tracecast:"nullable" desc:"the file the call touched; null when unknown"`
	// FD is the file descriptor argument (or the one returned by
	// open/openat/creat); -1 when none.
	FD int `json:"fd" tracecast:"nullable" desc:"file descriptor (the result of an open); null when none" schema:"minimum=0"`
	// Offset is the file offset at which a data call started; -1 unknown.
	Offset int64 `json:"offset" tracecast:"nullable" desc:"file offset a data call started at; null when unknown" schema:"minimum=0"`
	// Req is the number of bytes requested (count, or the sum of iov_len);
	// Bytes is the number returned (-1 on error). Both are -1 for calls
	// that move no data.
	Req   int64 `json:"requested" tracecast:"nullable" desc:"bytes requested; null for calls that move no data" schema:"minimum=0"`
	Bytes int64 `json:"bytes" tracecast:"nullable" desc:"bytes returned; null for calls that move no data, or on error" schema:"minimum=0"`
	// Dur is the time spent in the call (strace -T), in seconds; 0 when
	// not recorded.
	Dur float64 `json:"duration" desc:"time spent in the call (strace -T), seconds; 0 when not recorded" schema:"minimum=0"`
	// Err is the errno name when the call failed ("ENOENT"), else "".
	Err string `json:"err" tracecast:"nullable" desc:"errno name when the call failed (ENOENT); null otherwise"`
	// Access is the access pattern of data calls.
	Access Access `json:"-"`
	// Flags are the open flags that change an open's cost (O_CREAT,
	// O_TRUNC, O_APPEND, O_DIRECT); creat() has OpenCreate|OpenTrunc.
	Flags OpenFlags `json:"flags" tracecast:"nullable" desc:"open flags that change its cost (creat, trunc, append, direct), joined by |; null for none"`
	// Line is the line of the input the call ended on.
	Line int64 `json:"-"`
}

// OpenFlags is a set of open flags.
type OpenFlags uint8

// The open flags kept.
const (
	OpenCreate OpenFlags = 1 << iota
	OpenTrunc
	OpenAppend
	OpenDirect
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
