// Package power reads power-meter streams into per-node power samples:
//
//   - csv: "time,node,watts" rows (a header naming the columns is optional:
//     time|timestamp|t, node|host|device_id, watts|power|value; two-column
//     rows "time,watts" take Options.Node), at any rate;
//   - jsonl: one JSON object a line with the same keys;
//   - rapl: a series of RAPL energy_uj counter readings, CSV rows
//     "time,node,energy_uj,max_energy_range_uj" (max may be empty when it was
//     unreadable); each reading after a node's first gives the mean power
//     over the interval since the previous one, with wrap-around at
//     max_energy_range_uj; a wrapped reading whose range is unknown is
//     skipped and counted (reason "rapl-range-unknown");
//   - kwollect: Grid'5000 Kwollect JSON, an array (or lines) of
//     {timestamp, device_id, metric_id, value} objects.
//
// Times are seconds: numbers (epoch or relative) or RFC 3339 strings
// (converted to Unix seconds). Bad lines fail with "FILE:LINE: reason" or,
// in lenient mode, are skipped and counted by reason, as in the Paje reader.
package power

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/lineerr"

	"github.com/tracecast/tracecast/internal/input"
)

// Format names an input format.
type Format string

// The formats Read understands.
const (
	Auto     Format = "auto"
	CSV      Format = "csv"
	JSONL    Format = "jsonl"
	RAPL     Format = "rapl"
	Kwollect Format = "kwollect"
)

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case Auto, CSV, JSONL, RAPL, Kwollect, "":
		if f == "" {
			f = Auto
		}
		return f, nil
	}
	return "", fmt.Errorf("unknown power format %q (auto, csv, jsonl, rapl, kwollect)", s)
}

// Options configure Read.
type Options struct {
	// Name is the stream name in error messages.
	Name string
	// Format of the input; Auto guesses from the first non-blank line.
	Format Format
	// Lenient counts and skips bad lines instead of failing.
	Lenient bool
	// Node names the node of rows without a node column.
	Node string
	// Metric keeps only the Kwollect records of this metric_id ("" keeps all).
	Metric string
	// MaxLineBytes is the longest accepted line, and the longest record
	// of a Kwollect document (default 1 MiB): longer ones are bad lines.
	MaxLineBytes int
	// Logger receives, from a Processor at the end of its input, the
	// lines skipped by reason (a warning: results leave them out). The
	// zero value logs nothing.
	Logger zerolog.Logger
}

// DefaultMaxLineBytes is MaxLineBytes when it is not set.
const DefaultMaxLineBytes = 1 << 20

// maxNodes bounds the node names interned: past it, names are still read,
// only no longer shared.
const maxNodes = 1 << 16

func (o *Options) defaults() {
	if o.Name == "" {
		o.Name = "-"
	}
	if o.Format == "" {
		o.Format = Auto
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
}

// Stats count what Read read and skipped.
type Stats struct {
	Lines   int64
	Samples int64
	// Skipped counts skipped lines by reason (lenient mode, and
	// "rapl-range-unknown" in both modes).
	Skipped lineerr.Skipped
	// Wraps counts RAPL counter wrap-arounds handled.
	Wraps int64
	// Filtered counts Kwollect records of another metric.
	Filtered int64
}

// Error is a bad line: "FILE:LINE: reason".
type Error = lineerr.Error

// BatchSize is how many samples Read hands to its callback at a time.
const BatchSize = 4096

type reader struct {
	opts  Options
	stats Stats
	batch []tracecast.PowerSample
	fn    func([]tracecast.PowerSample) error
	nodes map[string]string
	rapl  map[string]*raplState
	// csv header column indexes (-1 when absent)
	cols    [4]int
	ncols   int
	started bool
	// first is set once a line that is not blank or a comment was read:
	// only that one may open a Kwollect document.
	first bool
	// doc reads the rest of the stream once it is known to be a JSON
	// array (Kwollect's answer).
	doc *document
}

func newReader(opts Options) *reader {
	opts.defaults()
	return &reader{opts: opts, nodes: map[string]string{}, rapl: map[string]*raplState{},
		stats: Stats{Skipped: map[string]int64{}}}
}

type raplState struct {
	t, e float64
}

// Read parses a power stream from r (plain or gzip) and calls fn with
// batches of samples; fn must not keep the slice. A JSON array (Kwollect's
// answer; with Format Auto or Kwollect) streams: memory holds one record,
// whatever the document's size, and its records need not be on lines of
// their own.
func Read(r io.Reader, opts Options, fn func([]tracecast.PowerSample) error) (Stats, error) {
	rd := newReader(opts)
	rd.fn, rd.batch = fn, make([]tracecast.PowerSample, 0, BatchSize)
	in, err := input.Decompress(r)
	if err != nil {
		return rd.stats, &Error{File: rd.opts.Name, Kind: "input", Reason: err.Error()}
	}
	br := bufio.NewReaderSize(in, 1<<16)
	input.SkipBOM(br)
	isDoc := false
	if rd.opts.Format == Auto || rd.opts.Format == Kwollect {
		// A JSON array can only be Kwollect's answer.
		peek, _ := br.Peek(4096)
		if t := bytes.TrimLeft(peek, " \t\r\n"); len(t) > 0 {
			isDoc = t[0] == '['
		}
	}
	if isDoc {
		err = rd.document(br)
	} else {
		err = rd.lines(br)
	}
	if err == nil && rd.doc != nil {
		err = rd.doc.end()
	}
	if err == nil {
		err = rd.flush()
	}
	return rd.stats, err
}

// document reads a whole stream as a JSON array, in chunks: no line limit,
// only the record limit.
func (rd *reader) document(in io.Reader) error {
	rd.doc = newDocument(rd)
	buf := make([]byte, 1<<16)
	last := byte('\n')
	for {
		n, rerr := in.Read(buf)
		if n > 0 {
			last = buf[n-1]
			if err := rd.doc.feed(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			rd.stats.Lines = rd.doc.line
			if last == '\n' {
				rd.stats.Lines--
				return nil
			}
			// End the last line, as a line reader does.
			return rd.doc.feed(newline)
		}
		if rerr != nil {
			return &Error{File: rd.opts.Name, Line: rd.doc.line, Kind: "input", Reason: "read error: " + rerr.Error()}
		}
	}
}

func (rd *reader) flush() error {
	if len(rd.batch) == 0 {
		return nil
	}
	err := rd.fn(rd.batch)
	rd.batch = rd.batch[:0]
	return err
}

func (rd *reader) emit(s tracecast.PowerSample) error {
	rd.batch = append(rd.batch, s)
	rd.stats.Samples++
	if len(rd.batch) == BatchSize {
		return rd.flush()
	}
	return nil
}

// bad reports a bad line: an error in strict mode, a count in lenient mode.
func (rd *reader) bad(line int64, kind, reason string) error {
	if rd.opts.Lenient {
		rd.stats.Skipped[kind]++
		return nil
	}
	return &Error{File: rd.opts.Name, Line: line, Kind: kind, Reason: reason}
}

func (rd *reader) intern(b []byte) string {
	if s, ok := rd.nodes[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(rd.nodes) < maxNodes {
		rd.nodes[s] = s
	}
	return s
}

// tooLong is what a line longer than MaxLineBytes is.
func (rd *reader) tooLong(num int64) error {
	return rd.bad(num, "line too long", "line longer than "+strconv.Itoa(rd.opts.MaxLineBytes)+" bytes (raise max_line_bytes)")
}

// lines splits the input into lines, holding at most MaxLineBytes of one:
// a longer line is a bad line, skipped to its end in lenient mode.
func (rd *reader) lines(in io.Reader) error {
	var buf []byte
	chunk := make([]byte, 1<<16)
	var num int64
	var carry []byte
	skipping := false // inside a line too long to keep
	for {
		n, rerr := in.Read(chunk)
		data := chunk[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if !skipping {
					carry = append(carry, data...)
					if len(carry) > rd.opts.MaxLineBytes {
						num++
						if err := rd.tooLong(num); err != nil {
							return err
						}
						skipping, carry = true, nil
					}
				}
				break
			}
			line := data[:i]
			data = data[i+1:]
			if skipping {
				skipping = false
				continue
			}
			if len(carry) > 0 {
				buf = append(append(buf[:0], carry...), line...)
				line = buf
				carry = carry[:0]
			}
			num++
			if err := rd.line(line, num); err != nil {
				return err
			}
			if rd.doc != nil && cap(buf) > 1<<16 {
				buf = nil
			}
		}
		if rerr == io.EOF {
			if len(carry) > 0 {
				num++
				return rd.line(carry, num)
			}
			return nil
		}
		if rerr != nil {
			return &Error{File: rd.opts.Name, Line: num + 1, Kind: "input", Reason: "read error: " + rerr.Error()}
		}
	}
}

func (rd *reader) line(raw []byte, num int64) error {
	rd.stats.Lines++
	if rd.stats.Lines == 1 {
		raw = input.TrimBOM(raw)
	}
	if rd.doc != nil {
		return rd.doc.feedLine(raw, num)
	}
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || b[0] == '#' {
		return nil
	}
	if !rd.first {
		rd.first = true
		if b[0] == '[' && (rd.opts.Format == Auto || rd.opts.Format == Kwollect) {
			// A document: its records are bounded, not its lines.
			rd.opts.Format = Kwollect
			rd.doc = newDocument(rd)
			return rd.doc.feedLine(raw, num)
		}
	}
	if len(raw) > rd.opts.MaxLineBytes {
		return rd.tooLong(num)
	}
	if rd.opts.Format == Auto {
		switch {
		case b[0] == '{' && bytes.Contains(b, []byte(`"metric_id"`)):
			rd.opts.Format = Kwollect
		case b[0] == '{':
			rd.opts.Format = JSONL
		case bytes.Contains(bytes.ToLower(b), []byte("energy_uj")):
			rd.opts.Format = RAPL
		default:
			rd.opts.Format = CSV
		}
	}
	switch rd.opts.Format {
	case JSONL, Kwollect:
		return rd.jsonLine(b, num)
	default:
		return rd.csvLine(b, num)
	}
}

// column roles
const (
	cTime = iota
	cNode
	cValue
	cMax
)

var headerNames = map[string]int{
	"time": cTime, "timestamp": cTime, "t": cTime, "time_s": cTime,
	"node": cNode, "host": cNode, "device_id": cNode, "hostname": cNode,
	"watts": cValue, "power": cValue, "value": cValue, "power_w": cValue, "energy_uj": cValue,
	"max_energy_range_uj": cMax, "max": cMax,
}

func (rd *reader) csvLine(b []byte, num int64) error {
	var fields [8][]byte
	nf := 0
	for nf < len(fields) {
		i := bytes.IndexByte(b, ',')
		if i < 0 {
			fields[nf] = bytes.TrimSpace(b)
			nf++
			break
		}
		fields[nf] = bytes.TrimSpace(b[:i])
		nf++
		b = b[i+1:]
	}
	if !rd.started {
		rd.started = true
		rd.cols = [4]int{-1, -1, -1, -1}
		if _, err := parseFloat(fields[0]); err != nil && !isTime(fields[0]) {
			// A header row.
			for i := range nf {
				role, ok := headerNames[strings.ToLower(string(fields[i]))]
				if ok && rd.cols[role] < 0 {
					rd.cols[role] = i
				}
			}
			if rd.cols[cTime] < 0 || rd.cols[cValue] < 0 {
				return &Error{File: rd.opts.Name, Line: num, Kind: "header", Reason: "header needs a time and a watts (or energy_uj) column"}
			}
			rd.ncols = nf
			return nil
		}
		switch {
		case rd.opts.Format == RAPL:
			rd.cols = [4]int{0, 1, 2, 3}
		case nf == 2:
			rd.cols = [4]int{0, -1, 1, -1}
		default:
			rd.cols = [4]int{0, 1, 2, -1}
		}
	}
	get := func(role int) []byte {
		if c := rd.cols[role]; c >= 0 && c < nf {
			return fields[c]
		}
		return nil
	}
	if rd.cols[cValue] >= nf || rd.cols[cTime] >= nf {
		return rd.bad(num, "fields", fmt.Sprintf("%d fields, expected at least %d", nf, max(rd.cols[cValue], rd.cols[cTime])+1))
	}
	t, err := parseTime(get(cTime))
	if err != nil {
		return rd.bad(num, "time", "bad time "+lineerr.QuoteBytes(get(cTime)))
	}
	v, err := parseFloat(get(cValue))
	if err != nil {
		return rd.bad(num, "value", "bad value "+lineerr.QuoteBytes(get(cValue)))
	}
	node := rd.opts.Node
	if nb := get(cNode); len(nb) > 0 {
		node = rd.intern(nb)
	}
	if rd.opts.Format == RAPL {
		var mx float64 = -1
		if mb := get(cMax); len(mb) > 0 {
			if mx, err = parseFloat(mb); err != nil || mx <= 0 {
				return rd.bad(num, "value", "bad max_energy_range_uj "+lineerr.QuoteBytes(mb))
			}
		}
		return rd.raplReading(num, t, node, v, mx)
	}
	if v < 0 {
		return rd.bad(num, "value", "negative power "+lineerr.QuoteBytes(get(cValue)))
	}
	return rd.emit(tracecast.PowerSample{T: t, Node: node, Watts: v})
}

// raplReading turns a counter reading (µJ) into the mean power since the
// node's previous reading. max < 0 means the wrap range is unknown.
func (rd *reader) raplReading(num int64, t float64, node string, e, max float64) error {
	if e < 0 {
		return rd.bad(num, "value", "negative energy counter")
	}
	// A counter never exceeds its range: taken, such a reading makes a
	// spurious wrap (a whole range of energy) or a negative power.
	if max >= 0 && e > max {
		return rd.bad(num, "value", "energy_uj "+uj(e)+" above max_energy_range_uj "+uj(max))
	}
	st := rd.rapl[node]
	if st == nil {
		rd.rapl[node] = &raplState{t: t, e: e}
		return nil
	}
	if t <= st.t {
		return rd.bad(num, "time", fmt.Sprintf("counter reading at %g not after the previous one at %g", t, st.t))
	}
	d := e - st.e
	if d < 0 {
		if max < 0 {
			// The counter wrapped but by how much is unknown: skip this
			// interval (never in error), restart from this reading.
			rd.stats.Skipped["rapl-range-unknown"]++
			st.t, st.e = t, e
			return nil
		}
		if st.e > max {
			// The previous reading (its range unknown) is above this
			// one's range: the wrap would give a negative energy.
			return rd.bad(num, "value", "counter fell from "+uj(st.e)+" to "+uj(e)+", but its range "+uj(max)+" is below "+uj(st.e))
		}
		d = max - st.e + e
		rd.stats.Wraps++
	}
	w := d * 1e-6 / (t - st.t)
	if !(w <= maxValue) {
		return rd.bad(num, "value", fmt.Sprintf("power out of range: %g µJ in %g s", d, t-st.t))
	}
	since := st.t
	st.t, st.e = t, e
	return rd.emit(tracecast.PowerSample{T: t, Node: node, Watts: w, Mean: true, Since: since})
}

// uj formats a counter value as its readers write it: 35000000, not 3.5e+07.
func uj(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// maxValue bounds the magnitude of every number read (times, powers,
// counters), so that differences and products stay finite.
const maxValue = 1e300

func parseFloat(b []byte) (float64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty")
	}
	v, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64)
	if err != nil {
		return 0, err
	}
	if v != v || v > maxValue || v < -maxValue {
		return 0, errors.New("not finite")
	}
	return v, nil
}

func isTime(b []byte) bool {
	_, err := parseTime(b)
	return err == nil
}

// parseTime reads seconds or an RFC 3339 time (as Unix seconds).
func parseTime(b []byte) (float64, error) {
	if v, err := parseFloat(b); err == nil {
		return v, nil
	}
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	return rfc3339(string(b))
}

// rfc3339 reads an RFC 3339 time as Unix seconds.
func rfc3339(s string) (float64, error) {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return float64(tm.UnixNano()) / 1e9, nil
}
