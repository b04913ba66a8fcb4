// Package tail follows a text file that is still being written — a StarPU
// run's trace, a `tracecast replay --speed` output, an strace log — the way
// `tail -F` does: by name, across rotation (the name now points to another
// inode: the old file is read to its end first) and truncation (the file
// shrank: reading restarts at 0), holding a partial last line until its
// newline arrives. It emits batches of tracecast.Line.
//
// Positions: every SyncEvery the source sends a checkpoint barrier
// (tracecast.Barrier) carrying the offset after the last complete line it
// handed downstream; when every sink has released it — everything derived
// from those lines is durable — that position is saved atomically
// (temporary file + rename) in PositionFile, with the file's device and
// inode. A graceful stop sends a last barrier and waits (StopSaveTimeout)
// for it. So a restarted pipeline resumes after the lines that were fully
// processed: at least once; lines in flight at a crash are read again.
//
// Resuming mid-file (Start "saved-or-…", or "end"): the lines of the file's
// header (those starting with HeaderPrefix, "%" for Paje's %EventDef
// blocks) are read again from the start and emitted first, since a
// header-driven parser cannot read events without them. With Rebuild (a
// stateful parser: a Paje trace's containers and open states are defined
// by everything before), a resume in the same file reads it again from the
// start instead: the state is rebuilt, and the outputs already sent are
// sent again, with the same ids.
package tail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
)

// Start says where following begins.
type Start string

// The start modes.
const (
	FromBeginning       Start = "beginning"
	FromEnd             Start = "end"
	SavedOrBeginning    Start = "saved-or-beginning"
	SavedOrEnd          Start = "saved-or-end"
	defaultPoll               = 100 * time.Millisecond
	defaultBatchLines         = 1024
	defaultMaxLineBytes       = 1 << 20
)

// Options configure a Source. Path is required.
type Options struct {
	Path         string
	Start        Start  // default saved-or-beginning
	PositionFile string // where to save the position; none when empty
	HeaderPrefix string // default "%"; "-" disables the header re-read
	// Poll is how often to look for new data without a file notification
	// (default 100ms): notifications wake the source at once; the poll
	// is their fallback.
	Poll time.Duration
	// NoNotify disables file notifications (fsnotify): polling only.
	NoNotify     bool
	SyncEvery    time.Duration // how often to save the position (default 1s)
	BatchLines   int
	MaxLineBytes int
	// Linger is how long a batch with fewer than BatchLines lines may wait
	// for more before it is emitted (default: one Poll).
	Linger time.Duration
	// Rebuild reads the file again from its start when resuming in it.
	Rebuild bool
	// EndAfter ends the input when the file has not grown for that long:
	// the run is over, and the stages flush their last windows. 0 (the
	// default) follows forever; a stop then makes the stages forget the
	// stream (a tracecast.StreamReset), whose last windows are incomplete.
	EndAfter time.Duration
	// StopSaveTimeout bounds how long a graceful stop waits for its last
	// checkpoint to be released (default 5 s).
	StopSaveTimeout time.Duration
	Logger          zerolog.Logger
}

// Position is what PositionFile holds.
type Position struct {
	Path   string `json:"path"`
	Dev    uint64 `json:"dev"`
	Inode  uint64 `json:"inode"`
	Offset int64  `json:"offset"`
	Line   int64  `json:"line"`
}

// Source follows one file.
type Source struct {
	o         Options
	pos       Position
	lastCheck time.Time
	emitted   bool // lines emitted since the last checkpoint

	mu        sync.Mutex
	seq       int64 // checkpoints sent
	savedSeq  int64 // the newest checkpoint saved
	saveErr   error
	savedWake chan struct{}
}

// New checks the options.
func New(o Options) (*Source, error) {
	if o.Path == "" {
		return nil, errors.New("tail: path is required")
	}
	switch o.Start {
	case "":
		o.Start = SavedOrBeginning
	case FromBeginning, FromEnd, SavedOrBeginning, SavedOrEnd:
	default:
		return nil, fmt.Errorf("tail: start %q is not beginning, end, saved-or-beginning or saved-or-end", o.Start)
	}
	if o.HeaderPrefix == "" {
		o.HeaderPrefix = "%"
	}
	if o.Poll <= 0 {
		o.Poll = defaultPoll
	}
	if o.SyncEvery <= 0 {
		o.SyncEvery = time.Second
	}
	if o.BatchLines <= 0 {
		o.BatchLines = defaultBatchLines
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = defaultMaxLineBytes
	}
	if o.Linger <= 0 {
		o.Linger = o.Poll
	}
	if o.StopSaveTimeout <= 0 {
		o.StopSaveTimeout = 5 * time.Second
	}
	return &Source{o: o, savedWake: make(chan struct{}, 1)}, nil
}

// Position returns the position after the last line emitted.
func (s *Source) Position() Position { return s.pos }

func fileID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}

func (s *Source) loadSaved() (Position, bool) {
	if s.o.PositionFile == "" {
		return Position{}, false
	}
	b, err := os.ReadFile(s.o.PositionFile)
	if err != nil {
		return Position{}, false
	}
	var p Position
	if json.Unmarshal(b, &p) != nil {
		s.o.Logger.Warn().Str("file", s.o.PositionFile).Msg("unreadable position file: ignored")
		return Position{}, false
	}
	return p, true
}

// save writes p atomically (internal/output: POSITION.tmp, synced, renamed):
// a crash leaves the old or the new file, never half of one.
func (s *Source) save(p Position) error {
	if s.o.PositionFile == "" {
		return nil
	}
	b, _ := json.Marshal(p)
	return output.WriteFile(s.o.PositionFile, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// checkpoint sends a barrier for the current position; the position is
// saved when the barrier is released (by whichever goroutine releases it
// last), unless a newer one was saved already.
func (s *Source) checkpoint(ctx context.Context, emit tracecast.Emit) (seq int64, err error) {
	s.mu.Lock()
	s.seq++
	seq = s.seq
	s.mu.Unlock()
	p := s.pos
	b := tracecast.NewBarrier(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if seq <= s.savedSeq {
			return
		}
		s.savedSeq = seq
		if err := s.save(p); err != nil {
			s.saveErr = err
			s.o.Logger.Warn().Err(err).Msg("saving the tail position")
		}
		select {
		case s.savedWake <- struct{}{}:
		default:
		}
	})
	defer b.Release()
	s.emitted, s.lastCheck = false, time.Now()
	return seq, emit(ctx, tracecast.Batch{Stream: s.o.Path, Items: b})
}

// stop sends a last checkpoint and waits for it to be saved.
func (s *Source) stop(ctx context.Context, emit tracecast.Emit) error {
	ctx = context.WithoutCancel(ctx)
	seq, err := s.checkpoint(ctx, emit)
	if err != nil {
		return err
	}
	t := time.NewTimer(s.o.StopSaveTimeout)
	defer t.Stop()
	for {
		s.mu.Lock()
		done, serr := s.savedSeq >= seq, s.saveErr
		s.mu.Unlock()
		if done {
			if serr != nil {
				return fmt.Errorf("tail: saving the position: %w", serr)
			}
			return nil
		}
		select {
		case <-s.savedWake:
		case <-t.C:
			s.o.Logger.Warn().Dur("timeout", s.o.StopSaveTimeout).Msg("stopping before the last position was durable: a restart reads those lines again")
			return nil
		}
	}
}

// Run follows the file until ctx is cancelled, then sends a last checkpoint
// and returns nil once it is saved (or StopSaveTimeout passed). It waits
// for the file to appear.
func (s *Source) Run(ctx context.Context, emit tracecast.Emit) (err error) {
	k := newWaker(s.o.Path, !s.o.NoNotify, s.o.Poll, s.o.Logger)
	defer k.close()
	f, fi, err := s.waitOpen(ctx, k)
	if err != nil || f == nil {
		return err
	}
	defer func() { f.Close() }()
	dev, ino := fileID(fi)
	s.pos = Position{Path: s.o.Path, Dev: dev, Inode: ino}
	saved, ok := s.loadSaved()
	switch {
	case ok && (s.o.Start == SavedOrBeginning || s.o.Start == SavedOrEnd) && saved.Dev == dev && saved.Inode == ino && saved.Offset <= fi.Size():
		if s.o.Rebuild {
			s.o.Logger.Info().Str("file", s.o.Path).Int64("saved_offset", saved.Offset).
				Msg("resuming: reading the file again from its start to rebuild the parser's state (outputs are sent again, same ids)")
			break
		}
		s.pos.Offset, s.pos.Line = saved.Offset, saved.Line
	case s.o.Start == FromEnd || s.o.Start == SavedOrEnd:
		s.pos.Offset = fi.Size()
		s.pos.Line = -1 // unknown: counted from here
	}
	b := &batcher{s: s}
	if s.pos.Offset > 0 && s.o.HeaderPrefix != "-" {
		if err := s.emitHeader(ctx, f, b, emit); err != nil {
			return err
		}
	}
	if _, err := f.Seek(s.pos.Offset, io.SeekStart); err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	var partial []byte
	lastEmit, lastData := time.Now(), time.Now()
	draining := false // reading the rest of a rotated file
	for {
		n, rerr := f.Read(buf)
		if n > 0 {
			lastData = time.Now()
			data := buf[:n]
			for len(data) > 0 {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					partial = append(partial, data...)
					if len(partial) > s.o.MaxLineBytes {
						return fmt.Errorf("%s:%d: line longer than %d bytes", s.o.Path, s.pos.Line+1, s.o.MaxLineBytes)
					}
					break
				}
				line := data[:i]
				if len(partial) > 0 {
					line = append(partial, line...)
					partial = partial[:0]
				}
				data = data[i+1:]
				s.pos.Offset += int64(len(line)) + 1
				if s.pos.Line >= 0 {
					s.pos.Line++
				}
				if len(line) > s.o.MaxLineBytes {
					return fmt.Errorf("%s:%d: line longer than %d bytes", s.o.Path, s.pos.Line, s.o.MaxLineBytes)
				}
				b.add(bytes.TrimSuffix(line, []byte{'\r'}), s.pos.Line, s.pos.Offset)
				if len(b.lines) >= s.o.BatchLines {
					if err := b.flush(ctx, emit); err != nil {
						return err
					}
					lastEmit = time.Now()
				}
				if s.emitted && time.Since(s.lastCheck) >= s.o.SyncEvery && len(b.lines) == 0 {
					if _, err := s.checkpoint(ctx, emit); err != nil {
						return err
					}
				}
			}
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return rerr
		}
		if n > 0 && !errors.Is(rerr, io.EOF) {
			continue
		}
		// At the end of the data for now: emit what waits, look for
		// rotation and truncation, sleep.
		if len(b.lines) > 0 && (time.Since(lastEmit) >= s.o.Linger || n == 0) {
			if err := b.flush(ctx, emit); err != nil {
				return err
			}
			lastEmit = time.Now()
		}
		if s.emitted && len(b.lines) == 0 && time.Since(s.lastCheck) >= s.o.SyncEvery {
			if _, err := s.checkpoint(ctx, emit); err != nil {
				return err
			}
		}
		if n == 0 && s.o.EndAfter > 0 && time.Since(lastData) >= s.o.EndAfter {
			s.o.Logger.Info().Str("file", s.o.Path).Dur("end_after", s.o.EndAfter).Msg("the file stopped growing: end of input")
			if err := b.flush(ctx, emit); err != nil {
				return err
			}
			return s.stop(ctx, emit)
		}
		// After draining a rotated file, look for its successor at once:
		// the notification that woke us for it is consumed.
		if n == 0 && !draining {
			if !k.wait(ctx) {
				wctx := context.WithoutCancel(ctx)
				if err := b.flush(wctx, emit); err != nil {
					return err
				}
				// The run goes on: the stream's last windows are not final.
				if err := emit(wctx, tracecast.Batch{Stream: s.o.Path, Items: tracecast.StreamReset{}}); err != nil {
					return err
				}
				return s.stop(ctx, emit)
			}
		}
		cur, err := os.Stat(s.o.Path)
		if err != nil {
			continue // renamed away and not yet recreated: keep reading the old one
		}
		cdev, cino := fileID(cur)
		switch {
		case cdev != s.pos.Dev || cino != s.pos.Inode:
			// Rotated: finish the old file, then follow the new one.
			if more, _ := f.Read(buf[:1]); more > 0 {
				f.Seek(-int64(more), io.SeekCurrent)
				draining = true
				continue
			}
			draining = false
			if len(partial) > 0 {
				s.o.Logger.Warn().Str("file", s.o.Path).Int("bytes", len(partial)).Msg("rotated file ended without a newline: last line dropped")
				partial = partial[:0]
			}
			nf, err := os.Open(s.o.Path)
			if err != nil {
				continue
			}
			f.Close()
			f = nf
			s.pos = Position{Path: s.o.Path, Dev: cdev, Inode: cino}
			s.o.Logger.Info().Str("file", s.o.Path).Msg("file rotated: following the new one")
		case cur.Size() < s.pos.Offset+int64(len(partial)):
			// Truncated: start again at the beginning.
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			partial = partial[:0]
			s.pos.Offset, s.pos.Line = 0, 0
			s.o.Logger.Info().Str("file", s.o.Path).Msg("file truncated: reading from the start")
		}
	}
}

// waitOpen opens the file, waiting for it to appear.
func (s *Source) waitOpen(ctx context.Context, k *waker) (*os.File, os.FileInfo, error) {
	warned := false
	for {
		f, err := os.Open(s.o.Path)
		if err == nil {
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				return nil, nil, err
			}
			return f, fi, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, nil, err
		}
		if !warned {
			s.o.Logger.Info().Str("file", s.o.Path).Msg("waiting for the file to appear")
			warned = true
		}
		if !k.wait(ctx) {
			return nil, nil, nil
		}
	}
}

// emitHeader re-reads the header lines at the start of the file and emits
// them with their line numbers, before following from the saved position.
func (s *Source) emitHeader(ctx context.Context, f *os.File, b *batcher, emit tracecast.Emit) error {
	r := io.NewSectionReader(f, 0, s.pos.Offset)
	data, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return err
	}
	var line, off int64
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		l := bytes.TrimSuffix(data[:i], []byte{'\r'})
		data = data[i+1:]
		line++
		off += int64(i) + 1
		t := bytes.TrimLeft(l, " \t")
		if bytes.HasPrefix(t, []byte(s.o.HeaderPrefix)) {
			b.add(l, line, off)
		}
	}
	if s.pos.Line < 0 {
		s.pos.Line = line
	}
	return b.flush(ctx, emit)
}

// batcher accumulates lines into batch-owned memory: a batch goes to
// another goroutine, so it cannot point into the read buffer.
type batcher struct {
	s     *Source
	lines []tracecast.Line
	arena []byte
}

func (b *batcher) add(data []byte, num, end int64) {
	start := len(b.arena)
	b.arena = append(b.arena, data...)
	b.lines = append(b.lines, tracecast.Line{Data: b.arena[start:len(b.arena):len(b.arena)], Num: num, End: end})
}

func (b *batcher) flush(ctx context.Context, emit tracecast.Emit) error {
	if len(b.lines) == 0 {
		return nil
	}
	lines := b.lines
	// The arena may have been reallocated while appending: re-slice
	// nothing, each Line keeps its own slice of whichever arena it got.
	b.lines, b.arena = nil, nil
	b.s.emitted = true
	return emit(ctx, tracecast.Batch{Stream: b.s.o.Path, Items: lines})
}
