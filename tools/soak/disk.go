//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// disk is the broker's data directory on a tmpfs of its own, so that the
// soak can fill it and make room again as often as its schedule says.
// Filling shrinks the tmpfs to what it holds plus a little and writes that
// little: the broker meets a disk full to its last byte without the soak
// writing gigabytes of memory (a tmpfs is memory).
type disk struct {
	dir  string
	size int64 // the tmpfs's size when not full
}

// mountDisk mounts a tmpfs of size bytes on dir (created); it needs root
// (or CAP_SYS_ADMIN): the error says so otherwise.
func mountDisk(dir string, size int64) (*disk, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("mount a tmpfs on %s: not root", dir)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		return nil, fmt.Errorf("mount a tmpfs on %s: %w", dir, err)
	}
	return &disk{dir: dir, size: size}, nil
}

// fill takes every byte left: the tmpfs shrunk to what it holds plus
// 1 MiB, then a file FILL written until ENOSPC.
func (d *disk) fill() error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(d.dir, &st); err != nil {
		return err
	}
	used := int64(st.Blocks-st.Bfree) * st.Bsize
	if err := syscall.Mount("tmpfs", d.dir, "tmpfs", syscall.MS_REMOUNT, fmt.Sprintf("size=%d", used+1<<20)); err != nil {
		return fmt.Errorf("remount %s at %d bytes: %w", d.dir, used+1<<20, err)
	}
	f, err := os.Create(filepath.Join(d.dir, "FILL"))
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return nil
		}
		return err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return fmt.Errorf("filling %s: %w", d.dir, err)
		}
	}
}

// free makes room again: FILL removed, the tmpfs back to its size.
func (d *disk) free() error {
	if err := os.Remove(filepath.Join(d.dir, "FILL")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := syscall.Mount("tmpfs", d.dir, "tmpfs", syscall.MS_REMOUNT, fmt.Sprintf("size=%d", d.size)); err != nil {
		return fmt.Errorf("remount %s at %d bytes: %w", d.dir, d.size, err)
	}
	return nil
}

// unmount detaches the tmpfs (its content is lost: the soak is over).
func (d *disk) unmount() error {
	return syscall.Unmount(d.dir, syscall.MNT_DETACH)
}
