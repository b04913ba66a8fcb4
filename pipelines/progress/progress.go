// Package progress measures and draws the progress of a replay: bytes read
// out of the known total, the read rate and the time left. The pipeline
// runtime produces Snapshots (through a Meter); the CLI draws them with a Bar
// when standard error is a terminal, and otherwise relies on the periodic
// status log line.
//
// The Bar is a single line redrawn in place with '\r' and the ANSI "erase
// line" sequence: no cursor movement, no dependency, and it degrades to a
// plain overwrite on terminals that ignore the escape.
package progress

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Snapshot is the progress of a run at one instant.
type Snapshot struct {
	// Bytes is what the sources have read of their inputs as stored.
	Bytes int64
	// Total is the sum of the inputs' sizes, or -1 when one is unknown
	// (standard input, Kafka).
	Total int64
	// Lines and Records count lines read and records parsed.
	Lines, Records int64
	// Elapsed is the time since the run started.
	Elapsed time.Duration
	// Rate is the smoothed read rate in bytes per second.
	Rate float64
	// ETA is the estimated time left, 0 when unknown.
	ETA time.Duration
	// Done is set on the last snapshot of a run.
	Done bool
}

// Fraction is Bytes/Total in [0, 1], or -1 when the total is unknown.
func (s Snapshot) Fraction() float64 {
	if s.Total <= 0 {
		return -1
	}
	return math.Min(1, float64(s.Bytes)/float64(s.Total))
}

// Meter turns cumulative counters sampled over time into Snapshots with a
// smoothed rate. The rate is an exponentially weighted moving average with a
// time constant (default 5 s), so the ETA neither jumps with each sample
// nor lags behind a real change of pace for long.
type Meter struct {
	start    time.Time
	last     time.Time
	lastByte int64
	rate     float64
	primed   bool
	// Tau is the smoothing time constant.
	Tau time.Duration
}

// NewMeter returns a Meter for a run started at start.
func NewMeter(start time.Time) *Meter {
	return &Meter{start: start, last: start, Tau: 5 * time.Second}
}

// Update records the counters at now and returns the snapshot.
func (m *Meter) Update(now time.Time, bytes, total, lines, records int64) Snapshot {
	if dt := now.Sub(m.last).Seconds(); dt > 0 {
		inst := float64(bytes-m.lastByte) / dt
		if !m.primed {
			m.rate, m.primed = inst, true
		} else {
			alpha := 1 - math.Exp(-dt/m.Tau.Seconds())
			m.rate += alpha * (inst - m.rate)
		}
		m.last, m.lastByte = now, bytes
	}
	s := Snapshot{Bytes: bytes, Total: total, Lines: lines, Records: records, Elapsed: now.Sub(m.start), Rate: m.rate}
	if total > 0 && m.rate > 0 && bytes < total {
		s.ETA = time.Duration(float64(total-bytes) / m.rate * float64(time.Second)).Round(time.Second)
	}
	return s
}

// IsTerminal reports whether f is a terminal, which is when a Bar should be
// drawn on it.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Bar draws Snapshots as a one-line progress bar. Its methods are safe for
// concurrent use, so logs written through Wrap interleave cleanly.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	width int
	line  string // last drawn line, redrawn after a log line
	done  bool
}

// NewBar returns a Bar drawing on w (normally os.Stderr). The line is sized
// to w's terminal width when w is a terminal, else 80 columns.
func NewBar(w io.Writer) *Bar {
	width := 80
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 20 {
			width = cols
		}
	}
	return &Bar{w: w, width: width}
}

// Update redraws the bar; a snapshot with Done set finishes it.
func (b *Bar) Update(s Snapshot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.line = Render(s, b.width-1)
	fmt.Fprint(b.w, "\r\x1b[K"+b.line)
	if s.Done {
		fmt.Fprint(b.w, "\n")
		b.done = true
	}
}

// Finish ends the bar's line, so that later output starts on a new one.
func (b *Bar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done && b.line != "" {
		fmt.Fprint(b.w, "\n")
	}
	b.done = true
}

// Wrap returns a writer for log output that erases the bar, writes the log
// line and redraws the bar below it, so logs and bar do not garble each
// other. Give it to the console logger while the bar is shown.
func (b *Bar) Wrap(w io.Writer) io.Writer { return barWriter{b: b, w: w} }

type barWriter struct {
	b *Bar
	w io.Writer
}

func (bw barWriter) Write(p []byte) (int, error) {
	bw.b.mu.Lock()
	defer bw.b.mu.Unlock()
	if bw.b.done || bw.b.line == "" {
		return bw.w.Write(p)
	}
	fmt.Fprint(bw.b.w, "\r\x1b[K")
	n, err := bw.w.Write(p)
	fmt.Fprint(bw.b.w, bw.b.line)
	return n, err
}

// Render formats a snapshot as one line of at most width columns:
//
//	42% [=========>            ] 1.1 GiB/2.6 GiB  35.2 MiB/s  ETA 0:41  1234567 lines
//
// Without a known total it shows what has been read and the rate.
func Render(s Snapshot, width int) string {
	var tail strings.Builder
	if s.Total > 0 {
		fmt.Fprintf(&tail, " %s/%s", Bytes(s.Bytes), Bytes(s.Total))
	} else {
		fmt.Fprintf(&tail, " %s", Bytes(s.Bytes))
	}
	fmt.Fprintf(&tail, "  %s/s", Bytes(int64(s.Rate)))
	switch {
	case s.Done:
		fmt.Fprintf(&tail, "  in %s", clock(s.Elapsed))
	case s.ETA > 0:
		fmt.Fprintf(&tail, "  ETA %s", clock(s.ETA))
	}
	if s.Records > 0 {
		fmt.Fprintf(&tail, "  %d records", s.Records)
	} else if s.Lines > 0 {
		fmt.Fprintf(&tail, "  %d lines", s.Lines)
	}
	frac := s.Fraction()
	if frac < 0 {
		return truncate(strings.TrimLeft(tail.String(), " "), width)
	}
	head := fmt.Sprintf("%3.0f%% ", 100*frac)
	barW := width - len(head) - tail.Len() - 2
	if barW > 40 {
		barW = 40
	}
	if barW < 5 {
		return truncate(head+strings.TrimLeft(tail.String(), " "), width)
	}
	filled := int(frac * float64(barW))
	bar := strings.Repeat("=", filled)
	if filled < barW {
		bar += ">" + strings.Repeat(" ", barW-filled-1)
	}
	return head + "[" + bar + "]" + tail.String()
}

func truncate(s string, width int) string {
	if width > 0 && len(s) > width {
		return s[:width]
	}
	return s
}

// clock formats d as H:MM:SS or M:SS.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%d:%02d", m, sec)
}

// Bytes formats n with binary units: "512 B", "1.5 KiB", "2.6 GiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
