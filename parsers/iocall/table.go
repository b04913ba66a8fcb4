package iocall

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/lineerr"
)

// CSVHeader is the header of the CSV schema, in the order WriteCSV uses.
// Columns are read by name; time and op are required, the others optional
// (rank is accepted for pid, dur for duration).
var CSVHeader = []string{"time", "pid", "op", "path", "fd", "offset", "requested", "bytes", "duration", "err", "flags"}

// JSONCall is one call in the JSON-lines schema (field names as in the
// CSV header; "rank" is accepted for pid, "dur" for duration).
type JSONCall struct {
	Time      *float64 `json:"time"`
	PID       int      `json:"pid"`
	Rank      *int     `json:"rank,omitempty"`
	Op        string   `json:"op"`
	Path      string   `json:"path,omitempty"`
	FD        *int     `json:"fd,omitempty"`
	Offset    *int64   `json:"offset,omitempty"`
	Requested *int64   `json:"requested,omitempty"`
	Bytes     *int64   `json:"bytes,omitempty"`
	Duration  float64  `json:"duration"`
	Dur       *float64 `json:"dur,omitempty"`
	Err       string   `json:"err,omitempty"`
	Flags     string   `json:"flags,omitempty"`
}

// classifier gives CSV/JSON calls their access pattern from their offsets,
// per (pid, path or fd): at most max open files, each forgotten at its
// close.
type classifier struct {
	last map[string]int64
	max  int
}

// classify sets c.Access; false means c would track more than max open
// files (c is then left out).
func (cl *classifier) classify(c *tracecast.IOCall) bool {
	if Kind(c.Op) == "close" && cl.last != nil {
		delete(cl.last, strconv.Itoa(c.PID)+"\x00"+c.Path+"\x00"+strconv.Itoa(c.FD))
		return true
	}
	if !IsData(c.Op) {
		return true
	}
	c.Access = tracecast.AccessSequential
	if c.Offset < 0 {
		return true
	}
	if cl.last == nil {
		cl.last = map[string]int64{}
	}
	key := strconv.Itoa(c.PID) + "\x00" + c.Path + "\x00" + strconv.Itoa(c.FD)
	l, ok := cl.last[key]
	if ok && l != c.Offset {
		c.Access = tracecast.AccessRandom
	}
	if !ok && len(cl.last) >= cl.max {
		return false
	}
	n := c.Bytes
	if n < 0 {
		n = c.Req
	}
	if n >= 0 {
		cl.last[key] = c.Offset + n
	}
	return true
}

// tooManyFiles is the reason of a line past the classifier's bound.
func tooManyFiles(max int) string {
	return "more than " + strconv.Itoa(max) + " open files (raise --max-fds)"
}

// MaxTime bounds the magnitude of times and durations (seconds), so that
// every difference of two is a finite number.
const MaxTime = 1e300

func checkCall(c *tracecast.IOCall) string {
	switch {
	case c.Op == "":
		return "empty op"
	case math.IsNaN(c.Time) || math.Abs(c.Time) > MaxTime:
		return "bad time"
	case math.IsNaN(c.Dur) || c.Dur > MaxTime || c.Dur < 0:
		return "bad duration"
	}
	return ""
}

// CSVParser reads the CSV schema.
type CSVParser struct {
	opts  Options
	stats Stats
	cols  map[string]int
	ncols int // fields of the header: every row has as many
	cl    classifier
	ops   map[string]string
}

// NewCSVParser returns a CSV parser; the first non-blank line is the header.
func NewCSVParser(opts Options) *CSVParser {
	opts.defaults()
	return &CSVParser{opts: opts, stats: Stats{Skipped: map[string]int64{}}, ops: map[string]string{}, cl: classifier{max: opts.MaxFDs}}
}

// Stats returns the counters so far.
func (p *CSVParser) Stats() Stats { return p.stats }

// Finish does nothing: CSV calls are complete.
func (p *CSVParser) Finish() {}

func (p *CSVParser) skip(reason string) { p.stats.Skipped[reason]++ }

func (p *CSVParser) bad(num int64, kind, reason string) error {
	if p.opts.Lenient {
		p.stats.Skipped[kind]++
		return nil
	}
	return &Error{File: p.opts.File, Line: num, Kind: kind, Reason: reason}
}

func (p *CSVParser) intern(s string) string {
	if v, ok := p.ops[s]; ok {
		return v
	}
	if len(p.ops) < 1<<16 {
		p.ops[s] = s
	}
	return s
}

// Line parses one CSV line (RFC 4180 quoting within the line).
func (p *CSVParser) Line(data []byte, num int64) (tracecast.IOCall, bool, error) {
	p.stats.Lines++
	var c tracecast.IOCall
	s := bytes.TrimRight(data, "\r\n")
	if len(bytes.TrimSpace(s)) == 0 || s[0] == '#' {
		return c, false, nil
	}
	rec, err := csv.NewReader(bytes.NewReader(s)).Read()
	if err != nil {
		return c, false, p.bad(num, "bad csv", "bad CSV: "+lineerr.Detail(err))
	}
	if p.cols == nil {
		p.cols = map[string]int{}
		for i, h := range rec {
			h = strings.ToLower(strings.TrimSpace(h))
			switch h {
			case "rank":
				h = "pid"
			case "dur":
				h = "duration"
			}
			if _, dup := p.cols[h]; dup && h != "" {
				// which of the two is meant cannot be told
				p.cols = nil
				return c, false, &Error{File: p.opts.File, Line: num, Kind: "bad header", Reason: "CSV header has two " + lineerr.Quote(h) + " columns"}
			}
			p.cols[h] = i
		}
		p.ncols = len(rec)
		if _, ok := p.cols["time"]; !ok {
			p.cols = nil
			return c, false, &Error{File: p.opts.File, Line: num, Kind: "bad header", Reason: "CSV header has no time column"}
		}
		if _, ok := p.cols["op"]; !ok {
			p.cols = nil
			return c, false, &Error{File: p.opts.File, Line: num, Kind: "bad header", Reason: "CSV header has no op column"}
		}
		return c, false, nil
	}
	if len(rec) != p.ncols {
		// a row cut short or with a stray comma: its fields cannot be
		// matched with the header's names
		return c, false, p.bad(num, "bad csv", fmt.Sprintf("bad CSV: %d fields, the header has %d", len(rec), p.ncols))
	}
	get := func(name string) string {
		if i, ok := p.cols[name]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	c = tracecast.IOCall{FD: -1, Offset: -1, Req: -1, Bytes: -1, Line: num}
	var e error
	if c.Time, e = strconv.ParseFloat(get("time"), 64); e != nil {
		return tracecast.IOCall{}, false, p.bad(num, "bad time", "bad time "+lineerr.Quote(get("time")))
	}
	c.Op = p.intern(get("op"))
	c.Path = p.intern(get("path"))
	c.Err = get("err")
	ints := []struct {
		name string
		dst  *int64
	}{{"offset", &c.Offset}, {"requested", &c.Req}, {"bytes", &c.Bytes}}
	for _, f := range ints {
		if v := get(f.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return tracecast.IOCall{}, false, p.bad(num, "bad "+f.name, "bad "+f.name+" "+lineerr.Quote(v))
			}
			*f.dst = n
		}
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"pid", &c.PID}, {"fd", &c.FD}} {
		if v := get(f.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return tracecast.IOCall{}, false, p.bad(num, "bad "+f.name, "bad "+f.name+" "+lineerr.Quote(v))
			}
			*f.dst = n
		}
	}
	if v := get("flags"); v != "" {
		f, ok := ParseOpenFlags(v)
		if !ok {
			return tracecast.IOCall{}, false, p.bad(num, "bad flags", "bad flags "+lineerr.Quote(v))
		}
		c.Flags = f
	}
	if v := get("duration"); v != "" {
		if c.Dur, e = strconv.ParseFloat(v, 64); e != nil {
			return tracecast.IOCall{}, false, p.bad(num, "bad duration", "bad duration "+lineerr.Quote(v))
		}
	}
	if r := checkCall(&c); r != "" {
		return tracecast.IOCall{}, false, p.bad(num, r, r)
	}
	if c.Req < 0 && c.Bytes >= 0 {
		c.Req = c.Bytes
	}
	if !p.cl.classify(&c) {
		return tracecast.IOCall{}, false, p.bad(num, "limit", tooManyFiles(p.opts.MaxFDs))
	}
	p.stats.Calls++
	return c, true, nil
}

// JSONParser reads the JSON-lines schema.
type JSONParser struct {
	opts  Options
	stats Stats
	cl    classifier
}

// NewJSONParser returns a JSON-lines parser.
func NewJSONParser(opts Options) *JSONParser {
	opts.defaults()
	return &JSONParser{opts: opts, stats: Stats{Skipped: map[string]int64{}}, cl: classifier{max: opts.MaxFDs}}
}

// Stats returns the counters so far.
func (p *JSONParser) Stats() Stats { return p.stats }

// Finish does nothing: JSON calls are complete.
func (p *JSONParser) Finish() {}

func (p *JSONParser) skip(reason string) { p.stats.Skipped[reason]++ }

// Line parses one JSON object.
func (p *JSONParser) Line(data []byte, num int64) (tracecast.IOCall, bool, error) {
	p.stats.Lines++
	s := bytes.TrimSpace(data)
	if len(s) == 0 {
		return tracecast.IOCall{}, false, nil
	}
	var j JSONCall
	bad := func(kind, reason string) error {
		if p.opts.Lenient {
			p.stats.Skipped[kind]++
			return nil
		}
		return &Error{File: p.opts.File, Line: num, Kind: kind, Reason: reason}
	}
	if err := json.Unmarshal(s, &j); err != nil {
		return tracecast.IOCall{}, false, bad("bad json", "bad JSON: "+lineerr.Detail(err))
	}
	if j.Time == nil {
		// time is required, as in CSV: a call at an unknown time is not
		// one at 0
		return tracecast.IOCall{}, false, bad("bad time", "no time")
	}
	c := tracecast.IOCall{Time: *j.Time, PID: j.PID, Op: j.Op, Path: j.Path, FD: -1, Offset: -1, Req: -1, Bytes: -1, Dur: j.Duration, Err: j.Err, Line: num}
	if j.Rank != nil {
		c.PID = *j.Rank
	}
	if j.Dur != nil {
		c.Dur = *j.Dur
	}
	if j.FD != nil {
		c.FD = *j.FD
	}
	if j.Offset != nil {
		c.Offset = *j.Offset
	}
	if j.Flags != "" {
		f, ok := ParseOpenFlags(j.Flags)
		if !ok {
			return tracecast.IOCall{}, false, bad("bad flags", "bad flags "+lineerr.Quote(j.Flags))
		}
		c.Flags = f
	}
	if j.Requested != nil {
		c.Req = *j.Requested
	}
	if j.Bytes != nil {
		c.Bytes = *j.Bytes
	}
	if c.Req < 0 && c.Bytes >= 0 {
		c.Req = c.Bytes
	}
	if r := checkCall(&c); r != "" {
		return tracecast.IOCall{}, false, bad(r, r)
	}
	if !p.cl.classify(&c) {
		return tracecast.IOCall{}, false, bad("limit", tooManyFiles(p.opts.MaxFDs))
	}
	p.stats.Calls++
	return c, true, nil
}

// CSVRecord returns the call as a CSV record in CSVHeader order.
func CSVRecord(c *tracecast.IOCall) []string {
	return []string{strconv.FormatFloat(c.Time, 'f', -1, 64), strconv.Itoa(c.PID), c.Op, c.Path,
		strconv.Itoa(c.FD), strconv.FormatInt(c.Offset, 10), strconv.FormatInt(c.Req, 10),
		strconv.FormatInt(c.Bytes, 10), strconv.FormatFloat(c.Dur, 'f', -1, 64), c.Err, c.Flags.String()}
}

// Writer writes I/O calls in the CSV schema (CSVHeader first) or as
// JSON lines of tracecast.iocall/1 records (IOCall.AppendJSON: "record"
// first, null for what is unknown or does not apply, strings not
// HTML-escaped): what Read reads back.
type Writer struct {
	csv  *csv.Writer
	json *bufio.Writer
	buf  []byte
}

// NewWriter returns a writer of format (FormatCSV or FormatJSONL) on w; a
// CSV writer writes its header at once.
func NewWriter(w io.Writer, format Format) (*Writer, error) {
	switch format {
	case FormatCSV:
		cw := csv.NewWriter(w)
		return &Writer{csv: cw}, cw.Write(CSVHeader)
	case FormatJSONL:
		return &Writer{json: bufio.NewWriterSize(w, 64<<10)}, nil
	}
	return nil, fmt.Errorf("cannot write I/O calls as %q (csv or jsonl)", format)
}

// Write writes one call (buffered until Flush).
func (w *Writer) Write(c *tracecast.IOCall) error {
	if w.csv != nil {
		return w.csv.Write(CSVRecord(c))
	}
	w.buf = append(c.AppendJSON(w.buf[:0]), '\n')
	_, err := w.json.Write(w.buf)
	return err
}

// Flush writes what is buffered and reports any write error.
func (w *Writer) Flush() error {
	if w.csv == nil {
		return w.json.Flush()
	}
	w.csv.Flush()
	return w.csv.Error()
}
