// Package iotime breaks I/O-call streams down into categories —
// operation kind × size bucket × access pattern — with calls, bytes, time
// and mean time per call, per process and in total, and turns each call
// into an "in I/O" state interval per process (container "pid N", type
// "IO State", value the operation kind) that the energy stage can use as its
// storage state.
package iotime

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/iocall"
)

// StateType is the type of the "in I/O" state records.
const StateType = "IO State"

// Buckets are the upper bounds (exclusive) of the size buckets, ascending;
// sizes at or above the last bound fall in a last, open bucket.
type Buckets []int64

// DefaultBuckets: <4K, 4K–64K, 64K–1M, ≥1M.
var DefaultBuckets = Buckets{4 << 10, 64 << 10, 1 << 20}

// ParseBuckets reads "4K,64K,1M" (suffixes K, M, G: powers of 1024).
func ParseBuckets(s string) (Buckets, error) {
	var b Buckets
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := ParseSize(f)
		if err != nil {
			return nil, err
		}
		if len(b) > 0 && v <= b[len(b)-1] {
			return nil, fmt.Errorf("buckets must be ascending: %q", s)
		}
		b = append(b, v)
	}
	return b, nil
}

// ParseSize reads "4096", "4K", "64k", "1M", "2G": a positive number of
// bytes that an int64 holds (a larger one is an error, not a wrapped value).
func ParseSize(s string) (int64, error) {
	num, mult := s, int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K', 'k':
			num, mult = s[:n-1], 1<<10
		case 'M', 'm':
			num, mult = s[:n-1], 1<<20
		case 'G', 'g':
			num, mult = s[:n-1], 1<<30
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("bad size %q: a positive number of bytes, optionally followed by K, M or G", s)
	}
	if v > math.MaxInt64/mult {
		return 0, fmt.Errorf("bad size %q: above %d bytes", s, int64(math.MaxInt64))
	}
	return v * mult, nil
}

// FormatSize writes 4096 as "4K", 1048576 as "1M".
func FormatSize(v int64) string {
	switch {
	case v >= 1<<30 && v%(1<<30) == 0:
		return strconv.FormatInt(v>>30, 10) + "G"
	case v >= 1<<20 && v%(1<<20) == 0:
		return strconv.FormatInt(v>>20, 10) + "M"
	case v >= 1<<10 && v%(1<<10) == 0:
		return strconv.FormatInt(v>>10, 10) + "K"
	}
	return strconv.FormatInt(v, 10)
}

// Name returns the name of bucket i ("<4K", "4K-64K", ">=1M").
func (b Buckets) Name(i int) string {
	switch {
	case len(b) == 0:
		return "all"
	case i == 0:
		return "<" + FormatSize(b[0])
	case i >= len(b):
		return ">=" + FormatSize(b[len(b)-1])
	}
	return FormatSize(b[i-1]) + "-" + FormatSize(b[i])
}

// Index returns the bucket of a size.
func (b Buckets) Index(size int64) int {
	return sort.Search(len(b), func(i int) bool { return size < b[i] })
}

// Category is operation kind × size bucket × access pattern. Non-data
// operations (open, create, close, seek, sync, fdatasync, mmap, stat) have
// Bucket and Access "-"; create is an open with O_CREAT or O_TRUNC (or
// creat); sync is fsync (and sync_file_range), fdatasync apart.
type Category struct {
	Op     string `json:"op"`
	Bucket string `json:"bucket"`
	Access string `json:"access"`
}

// Key is "read/4K-64K/seq", "fsync... sync/-/-".
func (c Category) Key() string { return c.Op + "/" + c.Bucket + "/" + c.Access }

// ParseKey is the inverse of Key.
func ParseKey(k string) (Category, bool) {
	p := strings.Split(k, "/")
	if len(p) != 3 {
		return Category{}, false
	}
	return Category{p[0], p[1], p[2]}, true
}

// Categorize returns the category of a call; false for ops of no kind and
// failed calls.
func (b Buckets) Categorize(c *tracecast.IOCall) (Category, bool) {
	k := iocall.Kind(c.Op)
	if k == "" || c.Err != "" {
		return Category{}, false
	}
	if k == "open" && c.Flags&(tracecast.OpenCreate|tracecast.OpenTrunc) != 0 {
		k = "create" // creating or truncating: allocation and journal work
	}
	if k == "sync" && c.Op == "fdatasync" {
		k = "fdatasync" // no metadata: cheaper than fsync on journaling file systems
	}
	if k != "read" && k != "write" && k != "copy" {
		return Category{Op: k, Bucket: "-", Access: "-"}, true
	}
	size := c.Req
	if size < 0 || k == "copy" && c.Bytes >= 0 {
		size = c.Bytes // cp asks copy_file_range for 2^63 bytes
	}
	if size < 0 {
		size = 0
	}
	acc := c.Access
	if acc == tracecast.AccessNone {
		acc = tracecast.AccessSequential
	}
	return Category{Op: k, Bucket: b.Name(b.Index(size)), Access: acc.String()}, true
}

// Stat is what a category (or a process, or the total) adds up to.
type Stat struct {
	Category
	Key   string  `json:"category"`
	PID   int     `json:"pid,omitempty"`
	Calls int64   `json:"calls"`
	Bytes int64   `json:"bytes"`
	Time  float64 `json:"time_s"`
	Mean  float64 `json:"mean_s"`
	// MeanSize is the mean size requested (for sync, the bytes written to
	// the file since its previous sync; for create, the bytes a truncating
	// open frees, as written since the file's previous creation); MeanGap the mean time between
	// the end of the process's previous I/O call and this one's start;
	// MaxEnd the largest offset+size seen (the extent of the file
	// touched). They drive iobench's replay.
	MeanSize float64 `json:"mean_size"`
	MeanGap  float64 `json:"mean_gap_s"`
	MaxEnd   int64   `json:"max_end"`
	// MinDur is the shortest non-zero call duration (an upper bound of the
	// tracer's own overhead per call).
	MinDur float64 `json:"min_dur_s"`

	gaps  float64
	ngaps int64
	size  float64
}

func (s *Stat) add(c *tracecast.IOCall, gap float64, sz int64) {
	s.Calls++
	if c.Bytes > 0 {
		s.Bytes += c.Bytes
	}
	s.Time += c.Dur
	s.size += float64(sz)
	if c.Dur > 0 && (s.MinDur == 0 || c.Dur < s.MinDur) {
		s.MinDur = c.Dur
	}
	if gap >= 0 {
		s.gaps += gap
		s.ngaps++
	}
	if c.Offset >= 0 && c.Offset+sz > s.MaxEnd {
		s.MaxEnd = c.Offset + sz
	}
}

func (s *Stat) finish() {
	if s.Calls > 0 {
		s.Mean = s.Time / float64(s.Calls)
		s.MeanSize = s.size / float64(s.Calls)
	}
	if s.ngaps > 0 {
		s.MeanGap = s.gaps / float64(s.ngaps)
	}
}

// Summary is the breakdown of a stream.
type Summary struct {
	Buckets []string `json:"buckets"`
	Total   Stat     `json:"total"`
	// Categories and Processes are empty, not null, for a profile
	// without calls: a JSON reader iterates them without a check.
	Categories []Stat `json:"categories"`
	// Processes holds one Stat per (process, category); iotime prints
	// null there unless asked (--per-process).
	Processes []Stat `json:"processes"`
	// Start and End bound the calls (seconds).
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// Category returns the stat of a category key, if present.
func (s *Summary) Category(key string) (Stat, bool) {
	for _, c := range s.Categories {
		if c.Key == key {
			return c, true
		}
	}
	return Stat{}, false
}

type pidKey struct {
	pid int
	key string
}

// Aggregator accumulates calls into a Summary. The zero value is not
// usable: use New.
type Aggregator struct {
	b       Buckets
	cats    map[string]*Stat
	procs   map[pidKey]*Stat
	lastEnd map[int]float64
	dirty   map[string]int64
	written map[string]int64
	total   Stat
	start   float64
	end     float64
}

// New returns an aggregator with the given buckets (nil: DefaultBuckets).
func New(b Buckets) *Aggregator {
	if b == nil {
		b = DefaultBuckets
	}
	return &Aggregator{b: b, cats: map[string]*Stat{}, procs: map[pidKey]*Stat{}, lastEnd: map[int]float64{}, dirty: map[string]int64{}, written: map[string]int64{},
		start: math.Inf(1), end: math.Inf(-1)}
}

// Add accounts for one call; it returns its category and false when the
// call is not categorised (unknown op or failed call).
func (a *Aggregator) Add(c *tracecast.IOCall) (Category, bool) {
	cat, ok := a.b.Categorize(c)
	if !ok {
		return cat, false
	}
	key := cat.Key()
	gap := -1.0
	if le, ok := a.lastEnd[c.PID]; ok && c.Time >= le {
		gap = c.Time - le
	}
	a.lastEnd[c.PID] = c.Time + c.Dur
	sz := c.Req
	if sz < 0 || cat.Op == "copy" {
		sz = max(c.Bytes, 0)
	}
	switch cat.Op {
	case "write", "copy":
		if c.Bytes > 0 && len(a.dirty) < 1<<16 {
			a.dirty[c.Path] += c.Bytes
		}
		if c.Bytes > 0 && len(a.written) < 1<<16 {
			a.written[c.Path] += c.Bytes
		}
	case "create":
		// the bytes a truncating open frees: what was written since the
		// file's previous creation
		sz = 0
		if c.Flags&tracecast.OpenTrunc != 0 {
			sz = a.written[c.Path]
		}
		delete(a.written, c.Path)
	case "sync", "fdatasync":
		sz = a.dirty[c.Path]
		delete(a.dirty, c.Path)
	default:
		if cat.Bucket == "-" && cat.Op != "mmap" {
			sz = 0
		}
	}
	s := a.cats[key]
	if s == nil {
		s = &Stat{Category: cat, Key: key}
		a.cats[key] = s
	}
	s.add(c, gap, sz)
	pk := pidKey{c.PID, key}
	ps := a.procs[pk]
	if ps == nil {
		ps = &Stat{Category: cat, Key: key, PID: c.PID}
		a.procs[pk] = ps
	}
	ps.add(c, gap, sz)
	a.total.add(c, gap, sz)
	a.start = min(a.start, c.Time)
	a.end = max(a.end, c.Time+c.Dur)
	return cat, true
}

// Summary returns the breakdown so far, categories by decreasing time.
func (a *Aggregator) Summary() Summary {
	s := Summary{Start: a.start, End: a.end, Categories: []Stat{}, Processes: []Stat{}}
	if a.total.Calls == 0 {
		s.Start, s.End = 0, 0
	}
	for i := 0; i <= len(a.b); i++ {
		s.Buckets = append(s.Buckets, a.b.Name(i))
	}
	s.Total = a.total
	s.Total.Key = "total"
	s.Total.finish()
	for _, c := range a.cats {
		c.finish()
		s.Categories = append(s.Categories, *c)
	}
	sort.Slice(s.Categories, func(i, j int) bool {
		if s.Categories[i].Time != s.Categories[j].Time {
			return s.Categories[i].Time > s.Categories[j].Time
		}
		return s.Categories[i].Key < s.Categories[j].Key
	})
	for _, c := range a.procs {
		c.finish()
		s.Processes = append(s.Processes, *c)
	}
	sort.Slice(s.Processes, func(i, j int) bool {
		if s.Processes[i].PID != s.Processes[j].PID {
			return s.Processes[i].PID < s.Processes[j].PID
		}
		return s.Processes[i].Key < s.Processes[j].Key
	})
	return s
}

// State returns the "in I/O" state interval of a call: container "pid N",
// type "IO State", value the operation kind, [Time, Time+Dur].
func State(c *tracecast.IOCall) tracecast.Entity {
	return tracecast.Entity{Nature: tracecast.NatureState, Container: "pid " + strconv.Itoa(c.PID), Type: StateType,
		Start: c.Time, End: c.Time + c.Dur, Value: iocall.Kind(c.Op)}
}

// Processor is a pipeline stage: batches of []tracecast.IOCall in, batches of
// "in I/O" state records ([]tracecast.Entity) out; Summary gives the
// breakdown of what went through.
type Processor struct {
	agg *Aggregator
	// EmitSummary makes Flush emit the breakdown of everything that went
	// through, as one batch of []Summary holding one Summary: how the
	// iotime command, or a pipeline's sink, gets the table rather than the
	// states.
	EmitSummary bool
}

// NewProcessor returns the stage.
func NewProcessor(b Buckets) *Processor { return &Processor{agg: New(b)} }

// Process emits one state per categorised call.
func (p *Processor) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	calls, ok := in.Items.([]tracecast.IOCall)
	if !ok {
		return fmt.Errorf("iotime: expects I/O calls, got %T", in.Items)
	}
	out := make([]tracecast.Entity, 0, len(calls))
	for i := range calls {
		if _, ok := p.agg.Add(&calls[i]); ok {
			out = append(out, State(&calls[i]))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return emit(ctx, tracecast.Batch{Stream: in.Stream, Items: out, Watermark: in.Watermark})
}

// Flush emits the summary when EmitSummary is set; states were emitted as
// calls completed.
func (p *Processor) Flush(ctx context.Context, emit tracecast.Emit) error {
	if !p.EmitSummary {
		return nil
	}
	s := p.agg.Summary()
	return emit(ctx, tracecast.Batch{Items: []Summary{s}, Watermark: s.End})
}

// Summary returns the breakdown so far.
func (p *Processor) Summary() Summary { return p.agg.Summary() }
