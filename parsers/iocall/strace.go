package iocall

import (
	"bytes"
	"math"
	"slices"
	"strings"

	"github.com/tracecast/tracecast"
)

// ofile is an open file description: shared by the fds dup'ed from it and
// by the processes that inherited it.
type ofile struct {
	path string
	off  int64 // current offset, -1 unknown
	last int64 // end of the previous data access, -1 none
	file bool  // a regular file (not a socket, pipe, tty or device)
}

// fdTable is a process's file descriptors; processes created with
// CLONE_FILES share one (refs counts them).
type fdTable struct {
	fds  map[int]*ofile
	refs int
}

type pending struct {
	time float64
	buf  []byte
}

// Parser reads strace output line by line. It is not safe for concurrent use.
type Parser struct {
	opts   Options
	stats  Stats
	tables map[int]*fdTable // by pid, at most MaxPIDs
	// nfds counts the descriptors of every table (a shared table once),
	// at most MaxFDs.
	nfds    int
	pending map[int]*pending // unfinished calls by pid, at most MaxOpenCalls
	// pendingBytes is what their halves hold, at most MaxOpenCalls ×
	// OpenCallBytes.
	pendingBytes int
	paths        map[string]string
	args         [][]byte
	scratch      []byte
	scratch2     []byte

	lastRaw   float64
	dayOffset float64
}

// NewParser returns a strace parser.
func NewParser(opts Options) *Parser {
	opts.defaults()
	return &Parser{opts: opts, tables: map[int]*fdTable{}, pending: map[int]*pending{},
		paths: map[string]string{}, lastRaw: math.Inf(-1), stats: Stats{Skipped: map[string]int64{}}}
}

// Stats returns the counters so far.
func (p *Parser) Stats() Stats { return p.stats }

// Finish counts the calls left unfinished at the end of the input.
func (p *Parser) Finish() {
	p.stats.Unmatched += int64(len(p.pending))
	clear(p.pending)
	p.pendingBytes = 0
}

func (p *Parser) bad(num int64, kind, reason string) error {
	if p.opts.Lenient {
		p.stats.Skipped[kind]++
		return nil
	}
	return &Error{File: p.opts.File, Line: num, Kind: kind, Reason: reason}
}

// limit reports a line that would take the parser past one of its limits.
func (p *Parser) limit(num int64, what string, max int, flag string) error {
	return p.bad(num, "limit", "more than "+itoa(max)+" "+what+" (raise --"+flag+")")
}

// intern shares the strings of short paths (at most 65 536 of them).
func (p *Parser) intern(b []byte) string {
	if s, ok := p.paths[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(p.paths) < 1<<16 && len(b) <= 256 {
		p.paths[s] = s
	}
	return s
}

// keptPath is a descriptor's path as kept while it is open: at most
// MaxPathBytes (Linux's PATH_MAX; a longer one cannot be real), so that
// what MaxFDs descriptors hold is bounded.
func keptPath(s string) string {
	if len(s) > MaxPathBytes {
		return strings.Clone(s[:MaxPathBytes])
	}
	return s
}

// table returns pid's descriptors, tracking a new process unless MaxPIDs
// are tracked already (nil: the line was reported).
func (p *Parser) table(pid int, num int64) (*fdTable, error) {
	t := p.tables[pid]
	if t == nil {
		if len(p.tables) >= p.opts.MaxPIDs {
			return nil, p.limit(num, "processes", p.opts.MaxPIDs, "max-pids")
		}
		t = &fdTable{fds: map[int]*ofile{}, refs: 1}
		p.tables[pid] = t
	}
	return t, nil
}

// setTable makes t pid's table (a new process: a clone or fork child).
func (p *Parser) setTable(pid int, t *fdTable, num int64) error {
	old, ok := p.tables[pid]
	if !ok && len(p.tables) >= p.opts.MaxPIDs {
		return p.limit(num, "processes", p.opts.MaxPIDs, "max-pids")
	}
	t.refs++
	if ok {
		// A pid reused without its exit in the log.
		old.refs--
		if old.refs == 0 {
			p.nfds -= len(old.fds)
		}
	}
	p.tables[pid] = t
	return nil
}

// forget drops what the parser knows of an exited process: its
// descriptors (unless shared with a live process) and its unfinished call.
func (p *Parser) forget(pid int) {
	if t := p.tables[pid]; t != nil {
		delete(p.tables, pid)
		if t.refs--; t.refs == 0 {
			p.nfds -= len(t.fds)
		}
	}
	if _, ok := p.pending[pid]; ok {
		delete(p.pending, pid)
		p.stats.Unmatched++
	}
}

// setFD names an open file by a descriptor of t, unless that would track
// more than MaxFDs descriptors (the line is then reported).
func (p *Parser) setFD(t *fdTable, fd int, of *ofile, num int64) error {
	if _, ok := t.fds[fd]; !ok {
		if p.nfds >= p.opts.MaxFDs {
			return p.limit(num, "open file descriptors", p.opts.MaxFDs, "max-fds")
		}
		p.nfds++
	}
	t.fds[fd] = of
	return nil
}

// closeFD forgets a descriptor of t.
func (p *Parser) closeFD(t *fdTable, fd int) {
	if _, ok := t.fds[fd]; ok {
		delete(t.fds, fd)
		p.nfds--
	}
}

// Line parses one line of strace output. It returns the completed I/O call
// the line ends, if any. A bad line is an *Error, or counted and skipped in
// lenient mode.
func (p *Parser) Line(data []byte, num int64) (tracecast.IOCall, bool, error) {
	p.stats.Lines++
	var c tracecast.IOCall
	s := bytes.TrimRight(data, " \r\n\t")
	if len(s) == 0 {
		return c, false, nil
	}
	// pid prefix
	pid := 0
	if bytes.HasPrefix(s, []byte("[pid ")) {
		i := bytes.IndexByte(s, ']')
		if i < 0 {
			return c, false, p.bad(num, "bad pid", "unterminated [pid N] prefix")
		}
		v, ok := atoi(bytes.TrimSpace(s[5:i]))
		if !ok {
			return c, false, p.bad(num, "bad pid", "bad pid in [pid N] prefix")
		}
		pid = v
		s = bytes.TrimLeft(s[i+1:], " ")
	} else if len(s) > 0 && isDigit(s[0]) {
		i := 0
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i < len(s) && s[i] == ' ' {
			v, ok := atoi(s[:i])
			if !ok {
				return c, false, p.bad(num, "bad pid", "bad pid")
			}
			pid = v
			s = bytes.TrimLeft(s[i:], " ")
		}
	}
	// timestamp
	t := 0.0
	if len(s) > 0 && isDigit(s[0]) {
		i := bytes.IndexByte(s, ' ')
		if i < 0 {
			return c, false, p.bad(num, "bad time", "timestamp without a call")
		}
		v, clock, ok := parseTime(s[:i])
		if !ok {
			return c, false, p.bad(num, "bad time", "bad timestamp "+quoteShort(s[:i]))
		}
		t = p.wrap(v, clock)
		s = bytes.TrimLeft(s[i:], " ")
	}
	if len(s) == 0 {
		return c, false, p.bad(num, "no call", "no system call after the prefix")
	}
	switch {
	case bytes.Equal(bytes.TrimSpace(s), []byte("<unfinished ...>")):
		// the tail of a call strace's own message interrupted
		p.stats.Signals++
		return c, false, nil
	case bytes.HasPrefix(s, []byte("+++")):
		p.stats.Signals++
		if bytes.Contains(s, []byte(" exited with ")) || bytes.Contains(s, []byte(" killed by ")) {
			p.forget(pid) // the pid may be reused: nothing of this process is needed
		}
		return c, false, nil
	case bytes.HasPrefix(s, []byte("---")), bytes.HasPrefix(s, []byte("strace:")):
		p.stats.Signals++
		return c, false, nil
	case bytes.HasPrefix(s, []byte("<... ")):
		return p.resumed(s, pid, num)
	}
	name, ok := callName(s)
	if !ok {
		return c, false, p.bad(num, "not a call", "not a system call line: "+quoteShort(s))
	}
	if bytes.HasSuffix(s, []byte("<unfinished ...>")) {
		op := opName(name)
		if op == "" {
			p.stats.Other++
			return c, false, nil
		}
		pd := p.pending[pid]
		if pd == nil {
			if len(p.pending) >= p.opts.MaxOpenCalls {
				return c, false, p.limit(num, "unfinished calls", p.opts.MaxOpenCalls, "max-open-calls")
			}
			pd = &pending{}
			p.pending[pid] = pd
		}
		half := s[:len(s)-len("<unfinished ...>")]
		if grow := len(half) - cap(pd.buf); grow > 0 && p.pendingBytes+grow > p.opts.MaxOpenCalls*OpenCallBytes {
			// A few long halves must not hold what MaxOpenCalls short
			// ones may.
			return c, false, p.limit(num, "bytes of unfinished calls", p.opts.MaxOpenCalls*OpenCallBytes, "max-open-calls")
		}
		p.pendingBytes -= cap(pd.buf)
		pd.time = t
		pd.buf = append(pd.buf[:0], half...)
		p.pendingBytes += cap(pd.buf)
		return c, false, nil
	}
	return p.complete(s, name, pid, t, num)
}

func (p *Parser) resumed(s []byte, pid int, num int64) (tracecast.IOCall, bool, error) {
	var c tracecast.IOCall
	i := bytes.Index(s, []byte(" resumed>"))
	if i < 5 {
		return c, false, p.bad(num, "bad resumed", "<... without resumed>")
	}
	name := s[5:i]
	rest := s[i+len(" resumed>"):]
	op := opName(name)
	pd := p.pending[pid]
	if op == "" {
		p.stats.Other++
		return c, false, nil
	}
	if pd == nil || !bytes.HasPrefix(pd.buf, name) || len(pd.buf) <= len(name) || pd.buf[len(name)] != '(' {
		p.stats.Unmatched++
		return c, false, nil
	}
	delete(p.pending, pid)
	p.pendingBytes -= cap(pd.buf)
	if bytes.HasSuffix(rest, []byte("<unfinished ...>")) || bytes.Contains(rest, []byte("<unfinished ...>)")) {
		p.stats.Unmatched++ // killed while in the call
		return c, false, nil
	}
	p.scratch = append(append(p.scratch[:0], pd.buf...), rest...)
	return p.complete(p.scratch, name, pid, pd.time, num)
}

// callName returns the syscall name at the start of s (before '(').
func callName(s []byte) ([]byte, bool) {
	for i := 0; i < len(s) && i < 64; i++ {
		b := s[i]
		if b == '(' {
			return s[:i], i > 0
		}
		if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b >= 'A' && b <= 'Z' || b == '?') {
			return nil, false
		}
	}
	return nil, false
}

func opName(name []byte) string {
	switch string(name) {
	case "read":
		return "read"
	case "write":
		return "write"
	case "pread64":
		return "pread64"
	case "pwrite64":
		return "pwrite64"
	case "readv":
		return "readv"
	case "writev":
		return "writev"
	case "preadv":
		return "preadv"
	case "pwritev":
		return "pwritev"
	case "preadv2":
		return "preadv2"
	case "pwritev2":
		return "pwritev2"
	case "open":
		return "open"
	case "openat":
		return "openat"
	case "openat2":
		return "openat2"
	case "creat":
		return "creat"
	case "close":
		return "close"
	case "lseek":
		return "lseek"
	case "fsync":
		return "fsync"
	case "fdatasync":
		return "fdatasync"
	case "mmap":
		return "mmap"
	case "stat":
		return "stat"
	case "lstat":
		return "lstat"
	case "fstat":
		return "fstat"
	case "newfstatat":
		return "newfstatat"
	case "statx":
		return "statx"
	case "copy_file_range":
		return "copy_file_range"
	case "sendfile":
		return "sendfile"
	case "sendfile64":
		return "sendfile64"
	case "dup":
		return "dup"
	case "dup2":
		return "dup2"
	case "dup3":
		return "dup3"
	case "fcntl":
		return "fcntl"
	case "clone":
		return "clone"
	case "clone3":
		return "clone3"
	case "fork":
		return "fork"
	case "vfork":
		return "vfork"
	}
	return ""
}

// complete handles a whole call "name(args) = ret [ERR (desc)] [<dur>]".
func (p *Parser) complete(s, name []byte, pid int, t float64, num int64) (tracecast.IOCall, bool, error) {
	var c tracecast.IOCall
	op := opName(name)
	if op == "" {
		p.stats.Other++
		return c, false, nil
	}
	args, end, ok := splitArgs(s[len(name)+1:], p.args[:0])
	p.args = args
	if !ok {
		if bytes.Contains(s, []byte("strace: Process ")) {
			// strace wrote "Process N attached" into the middle of the
			// line (output on stderr): the call is lost.
			p.stats.Unmatched++
			return c, false, nil
		}
		return c, false, p.bad(num, "bad arguments", "unbalanced arguments in "+op+" call")
	}
	rest := s[len(name)+1+end:]
	// duration
	dur, hasDur := 0.0, false
	if n := len(rest); n > 0 && rest[n-1] == '>' {
		j := bytes.LastIndexByte(rest, '<')
		if j < 0 {
			return c, false, p.bad(num, "bad duration", "bad duration")
		}
		d, ok := parseDur(rest[j+1 : n-1])
		if !ok && (j+1 == n-1 || rest[j+1] < '0' || rest[j+1] > '9') {
			// "= 3</a>": a -y annotation where -T's duration should be
			return c, false, p.bad(num, "bad duration", "no duration at the end of the "+op+" call (record with strace -T)")
		}
		if !ok {
			return c, false, p.bad(num, "bad duration", "bad duration "+quoteShort(rest[j:]))
		}
		dur, hasDur = d, true
		rest = rest[:j]
	}
	rest = bytes.TrimSpace(rest)
	if len(rest) == 0 || rest[0] != '=' {
		return c, false, p.bad(num, "bad return", "no return value in "+op+" call")
	}
	rest = bytes.TrimLeft(rest[1:], " ")
	k := bytes.IndexByte(rest, ' ')
	if a := bytes.IndexByte(rest, '<'); a > 0 && (k < 0 || a < k) {
		k = bytes.LastIndexByte(rest, '>') + 1 // -yy annotations hold spaces
		if k == len(rest) {
			k = -1
		}
	}
	retTok := rest
	if k >= 0 {
		retTok = rest[:k]
	}
	if len(retTok) == 1 && retTok[0] == '?' {
		p.stats.Unmatched++
		return c, false, nil
	}
	if !hasDur {
		// Without strace -T (or with the line cut inside "<0.000123>")
		// the time in the call is unknown: reading it as 0 would make
		// every breakdown and prediction 0 s.
		return c, false, p.bad(num, "bad duration", "no duration at the end of the "+op+" call (record with strace -T)")
	}
	ret, retPath, ok := parseRet(retTok)
	if !ok {
		return c, false, p.bad(num, "bad return", "bad return value "+quoteShort(retTok)+" in "+op+" call")
	}
	errno := ""
	if ret < 0 && k >= 0 {
		e := bytes.TrimLeft(rest[k:], " ")
		if m := bytes.IndexByte(e, ' '); m >= 0 {
			e = e[:m]
		}
		errno = errName(e)
	}
	c = tracecast.IOCall{Time: t, PID: pid, Op: op, FD: -1, Offset: -1, Req: -1, Bytes: -1, Dur: dur, Err: errno, Line: num}
	return p.apply(&c, args, ret, retPath, num)
}

func (p *Parser) apply(c *tracecast.IOCall, args [][]byte, ret int64, retPath []byte, num int64) (tracecast.IOCall, bool, error) {
	arg := func(i int) []byte {
		if i < len(args) {
			return args[i]
		}
		return nil
	}
	tb, err := p.table(c.PID, num)
	if tb == nil {
		return *c, false, err
	}
	if c.Op != "mmap" && !(c.Op == "open" || c.Op == "creat" || c.Op == "stat" || c.Op == "lstat" || c.Op == "sendfile" || c.Op == "sendfile64") {
		if fd, _, ok := fdAnnot(arg(0)); ok && fd >= 0 {
			c.FD = fd
		}
	}
	need := func(n int) error {
		if len(args) < n {
			return p.bad(num, "bad arguments", c.Op+" call with "+itoa(len(args))+" arguments")
		}
		return nil
	}
	switch c.Op {
	case "read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev", "preadv2", "pwritev2":
		if err := need(3); err != nil {
			return *c, false, err
		}
		of, ok, err := p.fdArg(tb, arg(0), num)
		if err != nil || !ok {
			return *c, false, err
		}
		if !of.file && !p.opts.All {
			p.stats.Other++
			return *c, false, nil
		}
		c.Path = of.path
		switch c.Op {
		case "read", "write", "pread64", "pwrite64":
			n, ok := atoi64(arg(2))
			if !ok || n < 0 {
				return *c, false, p.bad(num, "bad arguments", "bad count "+quoteShort(arg(2))+" in "+c.Op+" call")
			}
			c.Req = n
		default:
			c.Req = iovLen(arg(1))
		}
		positional := c.Op == "pread64" || c.Op == "pwrite64" || c.Op == "preadv" || c.Op == "pwritev" || c.Op == "preadv2" || c.Op == "pwritev2"
		if positional {
			if err := need(4); err != nil {
				return *c, false, err
			}
			o, ok := atoi64(arg(3))
			if !ok {
				return *c, false, p.bad(num, "bad arguments", "bad offset in "+c.Op+" call")
			}
			if o < 0 { // preadv2 with offset -1: current offset
				positional = false
			} else {
				c.Offset = o
			}
		}
		if !positional {
			c.Offset = of.off
		}
		if ret >= 0 {
			c.Bytes = ret
		}
		c.Access = tracecast.AccessSequential
		if c.Offset >= 0 && of.last >= 0 && c.Offset != of.last {
			c.Access = tracecast.AccessRandom
		}
		if ret >= 0 {
			if c.Offset >= 0 {
				of.last = c.Offset + ret
			}
			if !positional && of.off >= 0 {
				of.off += ret
			}
		}
	case "copy_file_range", "sendfile", "sendfile64":
		// copy_file_range(in, off_in, out, off_out, len, flags)
		// sendfile(out, in, offset, count)
		in, inOff, out, outOff, cnt := 0, 1, 2, 3, 4
		if c.Op != "copy_file_range" {
			in, inOff, out, outOff, cnt = 1, 2, 0, -1, 3
		}
		if err := need(cnt + 1); err != nil {
			return *c, false, err
		}
		src, ok, err := p.fdArg(tb, arg(in), num)
		if err != nil || !ok {
			return *c, false, err
		}
		dst, ok, err := p.fdArg(tb, arg(out), num)
		if err != nil || !ok {
			return *c, false, err
		}
		if (!src.file || !dst.file) && !p.opts.All {
			p.stats.Other++
			return *c, false, nil
		}
		c.FD, _, _ = fdAnnot(arg(in))
		c.Path = src.path
		n, ok := atoi64(arg(cnt))
		if !ok || n < 0 {
			return *c, false, p.bad(num, "bad arguments", "bad count "+quoteShort(arg(cnt))+" in "+c.Op+" call")
		}
		c.Req = n
		explicit := func(a []byte) (int64, bool) {
			// "[0]" or "[0] => [100]"
			if len(a) < 3 || a[0] != '[' {
				return 0, false
			}
			j := bytes.IndexByte(a, ']')
			if j < 0 {
				return 0, false
			}
			v, ok := atoi64(a[1:j])
			return v, ok
		}
		o, pos := explicit(arg(inOff))
		if pos {
			c.Offset = o
		} else {
			c.Offset = src.off
		}
		if ret >= 0 {
			c.Bytes = ret
		}
		c.Access = tracecast.AccessSequential
		if c.Offset >= 0 && src.last >= 0 && c.Offset != src.last {
			c.Access = tracecast.AccessRandom
		}
		if ret >= 0 {
			if c.Offset >= 0 {
				src.last = c.Offset + ret
			}
			if !pos && src.off >= 0 {
				src.off += ret
			}
			dpos := false
			if outOff >= 0 {
				_, dpos = explicit(arg(outOff))
			}
			if !dpos && dst.off >= 0 {
				dst.off += ret
			}
		}
	case "open", "openat", "openat2", "creat":
		pi := 0
		if c.Op == "openat" || c.Op == "openat2" {
			pi = 1
		}
		if err := need(pi + 1); err != nil {
			return *c, false, err
		}
		path := unquote(arg(pi), &p.scratch2)
		if len(retPath) > 0 {
			path = retPath
		} else if pi == 1 && len(path) > 0 && path[0] != '/' {
			if _, ap, ok := fdAnnot(arg(0)); ok && len(ap) > 0 {
				path = append(append(append(p.scratch2[:0:0], ap...), '/'), path...)
			}
		}
		c.Path = p.intern(path)
		c.FD = -1
		if c.Op == "creat" {
			c.Flags = tracecast.OpenCreate | tracecast.OpenTrunc
		} else {
			fl := arg(pi + 1)
			if bytes.Contains(fl, []byte("O_CREAT")) {
				c.Flags |= tracecast.OpenCreate
			}
			if bytes.Contains(fl, []byte("O_TRUNC")) {
				c.Flags |= tracecast.OpenTrunc
			}
			if bytes.Contains(fl, []byte("O_APPEND")) {
				c.Flags |= tracecast.OpenAppend
			}
			if bytes.Contains(fl, []byte("O_DIRECT")) {
				c.Flags |= tracecast.OpenDirect
			}
		}
		if ret >= 0 {
			c.FD = int(ret)
			off := int64(0)
			if c.Flags&tracecast.OpenAppend != 0 {
				off = -1
			}
			of := &ofile{path: keptPath(c.Path), off: off, last: -1, file: isFile(c.Path)}
			if err := p.setFD(tb, c.FD, of, num); err != nil || tb.fds[c.FD] != of {
				return *c, false, err // past MaxFDs
			}
		}
		if !isFile(c.Path) && !p.opts.All {
			p.stats.Other++
			return *c, false, nil
		}
	case "close", "fsync", "fdatasync", "lseek", "fstat":
		if err := need(1); err != nil {
			return *c, false, err
		}
		of, ok, err := p.fdArg(tb, arg(0), num)
		if err != nil || !ok {
			return *c, false, err
		}
		c.Path = of.path
		switch c.Op {
		case "close":
			p.closeFD(tb, c.FD)
		case "lseek":
			if ret >= 0 {
				of.off = ret
				c.Offset = ret
			}
		}
		if !of.file && !p.opts.All {
			p.stats.Other++
			return *c, false, nil
		}
	case "mmap":
		if err := need(6); err != nil {
			return *c, false, err
		}
		fd, _, ok := fdAnnot(arg(4))
		if !ok || fd < 0 {
			p.stats.Other++ // anonymous mapping
			return *c, false, nil
		}
		of, _, err := p.fdArg(tb, arg(4), num)
		if err != nil {
			return *c, false, err
		}
		c.Path = of.path
		c.FD = fd
		c.Req, _ = atoi64(arg(1))
		c.Offset, _ = atoi64(arg(5))
		if !of.file && !p.opts.All {
			p.stats.Other++
			return *c, false, nil
		}
	case "stat", "lstat":
		if err := need(1); err != nil {
			return *c, false, err
		}
		c.Path = p.intern(unquote(arg(0), &p.scratch2))
	case "newfstatat", "statx":
		if err := need(2); err != nil {
			return *c, false, err
		}
		path := unquote(arg(1), &p.scratch2)
		fd, ap, _ := fdAnnot(arg(0))
		if len(path) == 0 {
			if of := tb.fds[fd]; of != nil && len(ap) == 0 {
				c.Path = of.path
			} else {
				c.Path = p.intern(ap)
			}
			c.FD = fd
		} else {
			c.Path = p.intern(path)
		}
		if !isFile(c.Path) && !p.opts.All {
			p.stats.Other++
			return *c, false, nil
		}
	case "dup", "dup2", "dup3", "fcntl":
		p.stats.Other++
		if ret < 0 || len(args) < 1 {
			return *c, false, nil
		}
		if c.Op == "fcntl" && (len(args) < 2 || !bytes.HasPrefix(args[1], []byte("F_DUPFD"))) {
			return *c, false, nil
		}
		of, ok, err := p.fdArg(tb, arg(0), num)
		if err != nil || !ok {
			return *c, false, err
		}
		return *c, false, p.setFD(tb, int(ret), of, num)
	case "clone", "clone3", "fork", "vfork":
		p.stats.Other++
		if ret <= 0 {
			return *c, false, nil
		}
		child := int(ret)
		// clone(stack, flags=…), clone3({flags=…}, size): threads share
		// the parent's descriptors.
		if slices.ContainsFunc(args, func(a []byte) bool { return bytes.Contains(a, []byte("CLONE_FILES")) }) {
			return *c, false, p.setTable(child, tb, num)
		}
		if p.nfds+len(tb.fds) > p.opts.MaxFDs {
			return *c, false, p.limit(num, "open file descriptors", p.opts.MaxFDs, "max-fds")
		}
		nt := &fdTable{fds: make(map[int]*ofile, len(tb.fds))}
		for k, v := range tb.fds {
			nt.fds[k] = v
		}
		if err := p.setTable(child, nt, num); err != nil || p.tables[child] != nt {
			return *c, false, err
		}
		p.nfds += len(nt.fds)
		return *c, false, nil
	}
	if c.Dur < 0 {
		c.Dur = 0
	}
	p.stats.Calls++
	return *c, true, nil
}

// fdArg resolves an fd argument ("3" or "3</path>") to its open file,
// creating an entry when the fd was opened before the trace started.
func (p *Parser) fdArg(tb *fdTable, a []byte, num int64) (*ofile, bool, error) {
	fd, ap, ok := fdAnnot(a)
	if !ok {
		if bytes.HasPrefix(a, []byte("AT_FDCWD")) {
			return nil, false, nil
		}
		return nil, false, p.bad(num, "bad arguments", "bad file descriptor "+quoteShort(a))
	}
	of := tb.fds[fd]
	if of != nil && (len(ap) == 0 || of.path == string(ap)) {
		return of, true, nil
	}
	path := ""
	if len(ap) > 0 {
		path = p.intern(ap)
	}
	nf := &ofile{path: keptPath(path), off: -1, last: -1, file: path == "" || isFile(path)}
	if of != nil && of.path == "" {
		// same description, now named
		of.path, of.file = nf.path, nf.file
		return of, true, nil
	}
	if err := p.setFD(tb, fd, nf, num); err != nil || tb.fds[fd] != nf {
		return nil, false, err
	}
	return nf, true, nil
}

// isFile tells paths of regular files from sockets, pipes, ttys and devices.
func isFile(path string) bool {
	if path == "" {
		return true
	}
	if path[0] != '/' {
		return !bytes.Contains([]byte(path), []byte(":["))
	}
	if len(path) > 5 && path[:5] == "/dev/" {
		return len(path) > 9 && path[:9] == "/dev/shm/"
	}
	return true
}

func (p *Parser) wrap(v float64, clock bool) float64 {
	if clock {
		if v+43200 < p.lastRaw {
			p.dayOffset += 86400
		}
		p.lastRaw = v
		return v + p.dayOffset
	}
	return v
}
