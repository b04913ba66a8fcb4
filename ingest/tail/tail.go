// Package tail follows a text file that is still being written — a StarPU
// run's trace, a `tracecast replay --speed` output, an strace log — the way
// `tail -F` does: by name, across rotation (the name now points to another
// inode: the old file is read to its end first) and truncation (the file
// shrank: reading restarts at 0), holding a partial last line until its
// newline arrives. It emits batches of tracecast.Line.
//
// Positions: the offset after the last complete line handed downstream is
// saved atomically (temporary file + rename) in PositionFile every
// SyncEvery and when Run returns, with the file's device and inode, so that
// a restarted pipeline resumes where it stopped (Start "saved-or-…"). When
// it resumes — or starts at the end — in the middle of a file, the lines of
// the file's header (those starting with HeaderPrefix, "%" for Paje's
// %EventDef blocks) are read again from the start and emitted first, since a
// header-driven parser cannot read events without them.
//
// Delivery: positions record what was handed to the pipeline, not what its
// sinks made durable; after a crash the lines in flight at that moment are
// not read again (at most once). A graceful stop drains the pipeline before
// the final save.
package tail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
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
	Start        Start         // default saved-or-beginning
	PositionFile string        // where to save the position; none when empty
	HeaderPrefix string        // default "%"; "-" disables the header re-read
	Poll         time.Duration // how often to look for new data (default 100ms)
	SyncEvery    time.Duration // how often to save the position (default 1s)
	BatchLines   int
	MaxLineBytes int
	// Linger is how long a batch with fewer than BatchLines lines may wait
	// for more before it is emitted (default: one Poll).
	Linger time.Duration
	Logger zerolog.Logger
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
	o        Options
	pos      Position
	lastSave time.Time
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
	return &Source{o: o}, nil
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

// save writes the position atomically: a crash leaves the old or the new
// file, never half of one.
func (s *Source) save() error {
	if s.o.PositionFile == "" {
		return nil
	}
	b, _ := json.Marshal(s.pos)
	tmp := s.o.PositionFile + ".tmp"
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return err
	}
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, s.o.PositionFile)
}

// Run follows the file until ctx is cancelled, then saves the position and
// returns nil. It waits for the file to appear.
func (s *Source) Run(ctx context.Context, emit tracecast.Emit) (err error) {
	defer func() {
		if serr := s.save(); err == nil && serr != nil {
			err = fmt.Errorf("tail: saving the position: %w", serr)
		}
	}()
	f, fi, err := s.waitOpen(ctx)
	if err != nil || f == nil {
		return err
	}
	defer func() { f.Close() }()
	dev, ino := fileID(fi)
	s.pos = Position{Path: s.o.Path, Dev: dev, Inode: ino}
	saved, ok := s.loadSaved()
	switch {
	case ok && (s.o.Start == SavedOrBeginning || s.o.Start == SavedOrEnd) && saved.Dev == dev && saved.Inode == ino && saved.Offset <= fi.Size():
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
	lastEmit := time.Now()
	for {
		n, rerr := f.Read(buf)
		if n > 0 {
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
		if time.Since(s.lastSave) >= s.o.SyncEvery {
			if err := s.save(); err != nil {
				s.o.Logger.Warn().Err(err).Msg("saving the tail position")
			}
			s.lastSave = time.Now()
		}
		if n == 0 {
			select {
			case <-ctx.Done():
				return b.flush(context.WithoutCancel(ctx), emit)
			case <-time.After(s.o.Poll):
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
				continue
			}
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
func (s *Source) waitOpen(ctx context.Context) (*os.File, os.FileInfo, error) {
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
		select {
		case <-ctx.Done():
			return nil, nil, nil
		case <-time.After(s.o.Poll):
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
	return emit(ctx, tracecast.Batch{Stream: b.s.o.Path, Items: lines})
}
