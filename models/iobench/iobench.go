// Package iobench replays the I/O-call categories of a profile with real
// system calls on a directory of the system under test (the seed-002
// configurable benchmark: same sizes, read/write mix, sequential or random
// offsets and the measured gaps between calls), and predicts an
// application's I/O time on a target from benchmark times measured on a
// reference and on the target (eq. 1–3).
package iobench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"time"
	"unsafe"

	"github.com/tracecast/tracecast/stages/iotime"
	"golang.org/x/sys/unix"
)

// Schema is the version of the BENCH.json format.
const Schema = "tracecast.iobench/v1"

// Options configure a benchmark run.
type Options struct {
	// Dir is the directory of the file system under test; the benchmark
	// works in a temporary file there and removes it.
	Dir string `json:"dir" flag:"dir" help:"directory on the file system under test"`
	// FileSize is the least size of the test file (bytes): a file larger
	// than the page cache defeats it. The file is at least as large as the
	// extent the profile touched, up to max(FileSize, 1 GiB).
	FileSize int64 `json:"file_size"`
	// Fsync calls fsync after each replayed write, inside the timed call.
	Fsync bool `json:"fsync" flag:"fsync" help:"fsync after every replayed write (timed with it)"`
	// Direct opens the test file with O_DIRECT where the file system
	// supports it (sizes and offsets rounded up to 4 KiB, aligned buffers).
	Direct bool `json:"direct" flag:"direct" help:"O_DIRECT for reads and writes where supported"`
	// DropCache writes back and drops the file's pages
	// (posix_fadvise DONTNEED) before each read category and repetition.
	DropCache bool `json:"drop_cache" flag:"drop-cache" help:"posix_fadvise DONTNEED before each read category"`
	// Gaps replays the profile's mean gap between calls (capped by MaxGap).
	Gaps   bool          `json:"gaps" flag:"gaps" help:"replay the mean gap between the application's calls"`
	MaxGap time.Duration `json:"max_gap_ns" flag:"max-gap" help:"longest gap replayed"`
	// MinCalls and MaxCalls bound the calls replayed per category.
	MinCalls int `json:"min_calls" flag:"min-calls" help:"least calls replayed per category"`
	MaxCalls int `json:"max_calls" flag:"max-calls" help:"most calls replayed per category"`
	// Reps is the number of repetitions; the result is their mean.
	Reps int    `json:"reps" flag:"reps" help:"repetitions per category (the result is their mean)"`
	Seed uint64 `json:"seed" flag:"seed" help:"seed of the random offsets"`
}

// DefaultOptions are the defaults of the iobench command.
func DefaultOptions() Options {
	return Options{Dir: os.TempDir(), Gaps: true, MaxGap: 10 * time.Millisecond, MinCalls: 32, MaxCalls: 2000, Reps: 3, Seed: 1}
}

// CatResult is the measurement of one category.
type CatResult struct {
	Category string  `json:"category"`
	Op       string  `json:"op"`
	Bucket   string  `json:"bucket"`
	Access   string  `json:"access"`
	Size     int64   `json:"size"`
	Calls    int     `json:"calls"`
	GapS     float64 `json:"gap_s"`
	MeanS    float64 `json:"mean_s"`
	MinS     float64 `json:"min_s"`
	MedianS  float64 `json:"median_s"`
	TotalS   float64 `json:"total_s"`
	Direct   bool    `json:"direct"`
	Note     string  `json:"note,omitempty"`
}

// Result is the content of BENCH.json.
type Result struct {
	Schema     string      `json:"schema"`
	Created    time.Time   `json:"created"`
	Host       string      `json:"host"`
	FS         string      `json:"fs"`
	Options    Options     `json:"options"`
	Categories []CatResult `json:"categories"`
}

// Category returns the result of a category key.
func (r *Result) Category(key string) (CatResult, bool) {
	for _, c := range r.Categories {
		if c.Category == key {
			return c, true
		}
	}
	return CatResult{}, false
}

// fsName names the file system of dir (statfs magic).
func fsName(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	switch st.Type {
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs"
	case unix.NFS_SUPER_MAGIC:
		return "nfs"
	}
	return fmt.Sprintf("0x%x", st.Type)
}

const align = 4096

func alignedBuf(n int) []byte {
	b := make([]byte, n+align)
	off := int(uintptr(unsafe.Pointer(&b[0])) & (align - 1))
	if off != 0 {
		off = align - off
	}
	return b[off : off+n : off+n]
}

func roundUp(v, a int64) int64 { return (v + a - 1) / a * a }

// ErrEmptyProfile is Run's error for a profile without a categorised I/O
// call: there is nothing to replay, and a BENCH.json without categories
// would only make every ratio of iopredict 1.
var ErrEmptyProfile = errors.New("no I/O calls to replay")

// CheckDir checks that dir, where Run works, is a directory.
func CheckDir(dir string) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	return nil
}

// Run replays each category of a profile summary and measures it. It fails
// with ErrEmptyProfile when the profile has no category, and with CheckDir's
// error when opts.Dir is not a directory, before touching the file system.
func Run(ctx context.Context, prof iotime.Summary, opts Options) (*Result, error) {
	if len(prof.Categories) == 0 {
		return nil, ErrEmptyProfile
	}
	if err := CheckDir(opts.Dir); err != nil {
		return nil, err
	}
	if opts.Reps <= 0 {
		opts.Reps = 1
	}
	if opts.MinCalls <= 0 {
		opts.MinCalls = 1
	}
	if opts.MaxCalls < opts.MinCalls {
		opts.MaxCalls = opts.MinCalls
	}
	host, _ := os.Hostname()
	res := &Result{Schema: Schema, Created: time.Now().UTC(), Host: host, FS: fsName(opts.Dir), Options: opts}
	f, err := os.CreateTemp(opts.Dir, "tracecast-iobench-*.dat")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)

	// the file: at least FileSize, the extent touched, 2×(largest
	// sequential run) so runs do not wrap at once
	size := max(opts.FileSize, 1<<20)
	for _, c := range prof.Categories {
		size = max(size, roundUp(c.MaxEnd, align))
		if c.Op == "read" || c.Op == "write" || c.Op == "copy" {
			n := int64(min(max(int(c.Calls), opts.MinCalls), opts.MaxCalls))
			size = max(size, min(roundUp(int64(c.MeanSize)*n, align), 1<<30))
		}
	}
	// the extent an application touched can be huge: at most 1 GiB
	// unless FileSize asks for more
	size = min(size, max(opts.FileSize, 1<<30))
	if err := fill(path, size); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x10be4c))
	for _, c := range prof.Categories {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cr := CatResult{Category: c.Key, Op: c.Op, Bucket: c.Bucket, Access: c.Access, Size: int64(c.MeanSize + 0.5),
			Calls: min(max(int(c.Calls), opts.MinCalls), opts.MaxCalls)}
		if opts.Gaps {
			cr.GapS = min(c.MeanGap, opts.MaxGap.Seconds())
		}
		if c.Op == "sync" || c.Op == "fdatasync" || c.Op == "create" {
			// as many bytes dirty per call as the application had, at
			// most 64 MiB per repetition in all
			cr.Size = min(cr.Size, 64<<20)
			cr.Calls = max(1, min(cr.Calls, int((64<<20)/max(cr.Size, 1))))
		}
		var sum, best float64
		best = -1
		var all []float64
		for r := 0; r < opts.Reps; r++ {
			times, direct, note, err := replay(path, size, cr, opts, rng)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Key, err)
			}
			cr.Direct, cr.Note = direct, note
			all = append(all, times...)
			for _, t := range times {
				sum += t
				if best < 0 || t < best {
					best = t
				}
			}
		}
		n := float64(cr.Calls * opts.Reps)
		cr.TotalS = sum / float64(opts.Reps)
		cr.MeanS = sum / n
		cr.MinS = max(best, 0)
		sort.Float64s(all)
		cr.MedianS = all[len(all)/2]
		res.Categories = append(res.Categories, cr)
	}
	return res, nil
}

func fill(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*7 + i>>8)
	}
	for off := int64(0); off < size; off += int64(len(buf)) {
		n := min(int64(len(buf)), size-off)
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func wait(gap float64) {
	if gap <= 0 {
		return
	}
	d := time.Duration(gap * 1e9)
	if d > 200*time.Microsecond {
		time.Sleep(d)
		return
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		runtime.Gosched()
	}
}

// replay runs one repetition of a category and returns each call's time.
func replay(path string, fsize int64, cr CatResult, opts Options, rng *rand.Rand) ([]float64, bool, string, error) {
	flags := os.O_RDWR
	direct := false
	note := ""
	var fd int
	var err error
	if opts.Direct && (cr.Op == "read" || cr.Op == "write") {
		fd, err = unix.Open(path, flags|unix.O_DIRECT|unix.O_CLOEXEC, 0)
		if err == nil {
			direct = true
		} else {
			note = "O_DIRECT not supported here: " + err.Error()
		}
	}
	if !direct {
		fd, err = unix.Open(path, flags|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, false, "", err
		}
	}
	defer unix.Close(fd)
	if opts.DropCache && (cr.Op == "read" || cr.Op == "copy" || cr.Op == "mmap") {
		_ = unix.Fdatasync(fd)
		_ = unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
	}
	size := max(cr.Size, 1)
	if cr.Size == 0 && (cr.Op == "sync" || cr.Op == "fdatasync") {
		size = align
	}
	if direct {
		size = roundUp(size, align)
	}
	size = min(size, fsize)
	buf := alignedBuf(int(size))
	for i := range buf {
		buf[i] = byte(i)
	}
	times := make([]float64, 0, cr.Calls+1)
	var off int64
	nextOff := func() int64 {
		if cr.Access == "rand" {
			span := (fsize - size) / align
			if span <= 0 {
				return 0
			}
			return rng.Int64N(span+1) * align
		}
		o := off
		off += size
		if off+size > fsize {
			off = 0
		}
		return o
	}
	cfd := -1
	// one untimed warm-up call, then the timed ones
	for i := -1; i < cr.Calls; i++ {
		if i == 0 {
			times = times[:0]
		}
		wait(cr.GapS)
		var t0 time.Time
		var err error
		switch cr.Op {
		case "read":
			o := nextOff()
			t0 = time.Now()
			_, err = unix.Pread(fd, buf, o)
		case "write":
			o := nextOff()
			t0 = time.Now()
			_, err = unix.Pwrite(fd, buf, o)
			if err == nil && opts.Fsync {
				err = unix.Fsync(fd)
			}
		case "copy":
			// copy_file_range from the test file to a second file
			o := nextOff()
			if cfd < 0 {
				if cfd, err = unix.Open(path+".copy", os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o644); err != nil {
					break
				}
				defer os.Remove(path + ".copy")
				defer unix.Close(cfd)
			}
			wo := o
			t0 = time.Now()
			_, err = unix.CopyFileRange(fd, &o, cfd, &wo, int(size), 0)
		case "sync", "fdatasync":
			// dirty the amount the application wrote between syncs, then
			// time the sync alone
			if cr.Size > 0 {
				if _, err = unix.Pwrite(fd, buf, nextOff()); err != nil {
					break
				}
			}
			t0 = time.Now()
			if cr.Op == "sync" {
				err = unix.Fsync(fd)
			} else {
				err = unix.Fdatasync(fd)
			}
		case "open":
			t0 = time.Now()
			var nfd int
			nfd, err = unix.Open(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
			times = append(times, time.Since(t0).Seconds())
			if err == nil {
				unix.Close(nfd)
			}
			if err != nil {
				return nil, direct, note, err
			}
			continue
		case "create":
			// a file holding Size bytes (written, not synced), truncated
			// by an open with O_CREAT|O_TRUNC: the timed call
			cp := path + ".create"
			if cr.Size > 0 {
				if err = os.WriteFile(cp, buf, 0o644); err != nil {
					break
				}
			}
			t0 = time.Now()
			var nfd int
			nfd, err = unix.Open(cp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_CLOEXEC, 0o644)
			times = append(times, time.Since(t0).Seconds())
			if err == nil {
				unix.Close(nfd)
				if i == cr.Calls-1 {
					os.Remove(cp)
				}
				continue
			}
		case "close":
			var nfd int
			nfd, err = unix.Open(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				break
			}
			t0 = time.Now()
			err = unix.Close(nfd)
		case "seek":
			o := nextOff()
			t0 = time.Now()
			_, err = unix.Seek(fd, o, 0)
		case "stat":
			var st unix.Stat_t
			t0 = time.Now()
			err = unix.Fstat(fd, &st)
		case "mmap":
			o := nextOff() / align * align
			t0 = time.Now()
			var m []byte
			m, err = unix.Mmap(fd, o, int(size), unix.PROT_READ, unix.MAP_SHARED)
			if err == nil {
				times = append(times, time.Since(t0).Seconds())
				unix.Munmap(m)
				continue
			}
		default:
			return nil, direct, note, errors.New("no replay for operation " + cr.Op)
		}
		if err != nil {
			return nil, direct, note, err
		}
		times = append(times, time.Since(t0).Seconds())
	}
	return times, direct, note, nil
}
