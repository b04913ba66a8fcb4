package output

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rs/zerolog"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, path, want string
		stdout, inPlace  bool
	}{
		{"stdout", "-", "stdout", true, false},
		{"file", filepath.Join(dir, "a.txt"), filepath.Join(dir, "a.txt"), false, false},
		{"file in a new directory", filepath.Join(dir, "x", "y", "b.txt"), filepath.Join(dir, "x", "y", "b.txt"), false, false},
		{"in place", filepath.Join(dir, "z", "c.txt"), filepath.Join(dir, "z", "c.txt"), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			f, err := Open(tc.path, Options{Stdout: &buf, InPlace: tc.inPlace})
			if err != nil {
				t.Fatal(err)
			}
			if f.Name() != tc.want {
				t.Errorf("name %q, want %q", f.Name(), tc.want)
			}
			if _, err := f.Write([]byte("hello\n")); err != nil {
				t.Fatal(err)
			}
			if !tc.stdout {
				// Before Commit: PATH.tmp, nothing under PATH (unless in place).
				_, err := os.Stat(tc.path)
				if tc.inPlace != (err == nil) {
					t.Errorf("before Commit, %s exists: %v (in place: %v)", tc.path, err == nil, tc.inPlace)
				}
				if _, err := os.Stat(tc.path + ".tmp"); tc.inPlace == (err == nil) {
					t.Errorf("before Commit, .tmp exists: %v", err == nil)
				}
			}
			if err := f.Commit(); err != nil {
				t.Fatal(err)
			}
			got := buf.String()
			if !tc.stdout {
				data, err := os.ReadFile(tc.path)
				if err != nil {
					t.Fatal(err)
				}
				got = string(data)
				if _, err := os.Stat(tc.path + ".tmp"); err == nil {
					t.Error(".tmp left after Commit")
				}
			}
			if got != "hello\n" {
				t.Errorf("wrote %q", got)
			}
		})
	}
	if _, err := Open(filepath.Join(dir, "a.txt", "under-a-file"), Options{}); err == nil {
		t.Error("creating under a regular file: no error")
	}
}

// Abort leaves PATH as it was: the previous complete file, or nothing.
func TestAbortKeepsPrevious(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(path, []byte("complete\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("trunc"))
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "complete\n" {
		t.Errorf("previous file changed: %q", b)
	}
	if _, err := os.Stat(path + ".tmp"); err == nil {
		t.Error(".tmp left after Abort")
	}
	if err := f.Commit(); err != nil {
		t.Errorf("Commit after Abort: %v", err)
	}
}

// A stale PATH.tmp is removed, not written through: a symbolic link left
// there is replaced, and the file it points to is left intact.
func TestOpenReplacesStale(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "input.trace")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "out", "k.arrow")
	tmp := path + ".tmp"
	os.MkdirAll(filepath.Dir(tmp), 0o755)
	if err := os.Symlink(victim, tmp); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	f, err := Open(path, Options{Logger: newLogger(&logged)})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	if fi, err := os.Lstat(tmp); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("tmp is not a new regular file: %v %v", fi, err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(logged.Bytes(), []byte("removed a stale temporary file")) {
		t.Errorf("the stale tmp was not reported: %s", logged.String())
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the link's target was written: %q", b)
	}
	// A directory at PATH.tmp is an error, not removed.
	os.Mkdir(filepath.Join(dir, "d.tmp"), 0o755)
	if _, err := Open(filepath.Join(dir, "d"), Options{}); err == nil {
		t.Error("a directory at tmp was accepted")
	}
}

// An error names PATH, not PATH.tmp, and the cause; for a full disk, what
// happened to the file.
func TestErrorNamesPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	restore := SetFault(func(_ string, w io.Writer) io.Writer { return failing{} })
	defer restore()
	f, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write([]byte("x"))
	want := path + ": no space left on device (" + path + " left as it was: free some space on its filesystem and run again)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Error("not ENOSPC")
	}
	if cerr := f.Commit(); cerr == nil || cerr.Error() != want {
		t.Errorf("Commit after a failed write: %v", cerr)
	}
	if _, err := os.Stat(path + ".tmp"); err == nil {
		t.Error(".tmp left after a failed Commit")
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a file under the final name")
	}
	if got := Annotate("csv sink", path, err).Error(); got != want {
		t.Errorf("Annotate: %s, want the file's error as it is", got)
	}
	if got := Annotate("csv sink", path, errors.New("bad record")).Error(); got != "csv sink "+path+": bad record" {
		t.Errorf("Annotate: %s", got)
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

func newLogger(w io.Writer) zerolog.Logger { return zerolog.New(w) }
