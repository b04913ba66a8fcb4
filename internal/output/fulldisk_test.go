//go:build linux

package output_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tracecast/tracecast/internal/fulldisk"
	"github.com/tracecast/tracecast/internal/output"
)

// TestDiskFull fills a 256 KiB filesystem (a tmpfs as root, injected
// ENOSPC otherwise) under an output that had a complete file: the write
// fails naming the file and the cause, and after Abort the previous file
// is untouched and no PATH.tmp is left; WriteFile does the same by itself.
func TestDiskFull(t *testing.T) {
	d := fulldisk.New(t, 256<<10)
	path := filepath.Join(d.Dir, "out.csv")
	if err := output.WriteFile(path, func(w io.Writer) error { _, err := w.Write([]byte("complete\n")); return err }); err != nil {
		t.Fatal(err)
	}
	f, err := output.Open(path, output.Options{})
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	for i := 0; err == nil && i < 64; i++ {
		_, err = f.Write(chunk)
	}
	if err == nil {
		t.Fatal("wrote 4 MiB on a 256 KiB filesystem")
	}
	if !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), path+": no space left on device") {
		t.Fatalf("err = %v", err)
	}
	f.Abort()
	if b, _ := os.ReadFile(path); string(b) != "complete\n" {
		t.Errorf("the previous file changed: %d bytes", len(b))
	}
	if got := d.Entries(); len(got) != 1 {
		t.Errorf("left %v", got)
	}
	// WriteFile: the same, its error the file's.
	other := filepath.Join(d.Dir, "sub", "report.html")
	err = output.WriteFile(other, func(w io.Writer) error {
		for range 64 {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil || !strings.HasPrefix(err.Error(), other+": no space left on device") {
		t.Fatalf("WriteFile: %v", err)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("report.html under its final name")
	}
	if _, err := os.Stat(other + ".tmp"); err == nil {
		t.Error("report.html.tmp left")
	}
	t.Logf("mounted %v: %v", d.Mounted, err)
}
