//go:build unix

package output

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestInPlace(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{fifo: true, link: true, os.DevNull: true,
		file: false, dir: false, filepath.Join(dir, "absent"): false} {
		if got := InPlace(path); got != want {
			t.Errorf("InPlace(%s) = %v, want %v", path, got, want)
		}
	}
}
