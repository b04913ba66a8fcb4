//go:build linux

// Package fulldisk gives tests a filesystem that fills on demand: a small
// tmpfs mounted for the test where it may mount one (as root), and
// otherwise a temporary directory under which the files internal/output
// opens fail with ENOSPC once the same number of bytes was written to them
// (output.SetFault). Neither is ever skipped: a test runs with one or the
// other, and Mounted says which.
package fulldisk

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tracecast/tracecast/internal/output"
)

// Disk is a directory on a filesystem of a given size.
type Disk struct {
	Dir string
	// Mounted says Dir is a tmpfs of its own; otherwise the bound holds
	// only for what internal/output writes, in this process.
	Mounted bool

	t       testing.TB
	mu      sync.Mutex
	size    int64 // the bound (fault injection)
	written int64 // bytes written under Dir (fault injection)
	free    bool  // Free was called (fault injection)
}

// New returns a Disk of size bytes, a tmpfs when the test may mount one,
// unmounted when the test ends.
func New(t testing.TB, size int64) *Disk {
	t.Helper()
	if d, ok := Mount(t, size); ok {
		return d
	}
	d := &Disk{Dir: t.TempDir(), t: t, size: size}
	restore := output.SetFault(func(path string, w io.Writer) io.Writer {
		if !under(d.Dir, path) {
			return w
		}
		return &faultWriter{d: d, w: w}
	})
	t.Cleanup(restore)
	t.Logf("fulldisk: no tmpfs (not root, or mount refused): ENOSPC injected under %s after %d bytes", d.Dir, size)
	return d
}

// Mount mounts a tmpfs of size bytes on a new temporary directory, for
// tests whose writer is not internal/output (a process, the broker's
// store); ok is false when mounting is not possible here.
func Mount(t testing.TB, size int64) (*Disk, bool) {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		return nil, false
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Logf("fulldisk: mount tmpfs on %s: %v", dir, err)
		return nil, false
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("fulldisk: unmount %s: %v", dir, err)
		}
	})
	return &Disk{Dir: dir, Mounted: true, t: t, size: size}, true
}

// Free makes room: Fill's file is removed and the tmpfs grows to four
// times its size, or the injected faults stop.
func (d *Disk) Free() {
	d.t.Helper()
	if d.Mounted {
		if err := os.Remove(filepath.Join(d.Dir, "FILL")); err != nil && !os.IsNotExist(err) {
			d.t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", d.Dir, "tmpfs", syscall.MS_REMOUNT, fmt.Sprintf("size=%d", 4*d.size)); err != nil {
			d.t.Fatalf("fulldisk: remount %s larger: %v", d.Dir, err)
		}
		return
	}
	d.mu.Lock()
	d.free = true
	d.mu.Unlock()
}

// Fill takes the space left on the disk, with a file FILL in Dir (a
// tmpfs), or (fault injection) by counting it as written.
func (d *Disk) Fill() {
	d.t.Helper()
	if !d.Mounted {
		d.mu.Lock()
		d.written = d.size
		d.mu.Unlock()
		return
	}
	f, err := os.Create(filepath.Join(d.Dir, "FILL"))
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !strings.Contains(err.Error(), "no space left") {
				d.t.Fatalf("fulldisk: filling %s: %v", d.Dir, err)
			}
			return
		}
	}
}

// Entries lists the names in Dir, recursively (relative paths), but FILL.
func (d *Disk) Entries() []string {
	var names []string
	filepath.WalkDir(d.Dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || p == d.Dir || e.Name() == "FILL" {
			return nil
		}
		rel, _ := filepath.Rel(d.Dir, p)
		names = append(names, rel)
		return nil
	})
	return names
}

func under(dir, path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// faultWriter fails with ENOSPC once its disk is full.
type faultWriter struct {
	d *Disk
	w io.Writer
}

func (f *faultWriter) Write(p []byte) (int, error) {
	d := f.d
	d.mu.Lock()
	room := d.size - d.written
	if d.free {
		room = int64(len(p))
	}
	n := int64(len(p))
	if n > room {
		n = max(room, 0)
	}
	d.written += n
	d.mu.Unlock()
	w, err := f.w.Write(p[:n])
	if err == nil && int(n) < len(p) {
		err = &os.PathError{Op: "write", Path: "(injected)", Err: syscall.ENOSPC}
	}
	return w, err
}

// Writer fails with ENOSPC once N bytes were written through it: a fault
// for a writer that is not a file.
type Writer struct {
	W io.Writer
	N int64
}

func (w *Writer) Write(p []byte) (int, error) {
	if int64(len(p)) <= w.N {
		w.N -= int64(len(p))
		return w.W.Write(p)
	}
	n, _ := w.W.Write(p[:w.N])
	w.N = 0
	return n, syscall.ENOSPC
}
