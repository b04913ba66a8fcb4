package output

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, path, want string
		stdout           bool
	}{
		{"stdout", "-", "stdout", true},
		{"file", filepath.Join(dir, "a.txt"), filepath.Join(dir, "a.txt"), false},
		{"file in a new directory", filepath.Join(dir, "x", "y", "b.txt"), filepath.Join(dir, "x", "y", "b.txt"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, name, closeOut, err := Create(tc.path, &buf)
			if err != nil {
				t.Fatal(err)
			}
			if name != tc.want {
				t.Errorf("name %q, want %q", name, tc.want)
			}
			if _, err := w.Write([]byte("hello\n")); err != nil {
				t.Fatal(err)
			}
			if err := closeOut(); err != nil {
				t.Fatal(err)
			}
			got := buf.String()
			if !tc.stdout {
				data, err := os.ReadFile(tc.path)
				if err != nil {
					t.Fatal(err)
				}
				got = string(data)
			}
			if got != "hello\n" {
				t.Errorf("wrote %q", got)
			}
		})
	}
	if _, _, _, err := Create(filepath.Join(dir, "a.txt", "under-a-file"), nil); err == nil {
		t.Error("creating under a regular file: no error")
	}
}

// A stale PATH.tmp is removed, not written through: a symbolic link left
// there is replaced, and the file it points to is left intact.
func TestCreateTempReplacesStale(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "input.trace")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "out", "k.arrow.tmp")
	os.MkdirAll(filepath.Dir(tmp), 0o755)
	if err := os.Symlink(victim, tmp); err != nil {
		t.Fatal(err)
	}
	f, stale, _, err := CreateTemp(tmp)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	f.Close()
	if !stale {
		t.Error("the stale tmp was not reported")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the link's target was written: %q", b)
	}
	if fi, err := os.Lstat(tmp); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("tmp is not a new regular file: %v %v", fi, err)
	}
	// A new one: nothing stale.
	if f, stale, _, err := CreateTemp(filepath.Join(dir, "fresh.tmp")); err != nil || stale {
		t.Errorf("fresh: stale %v, %v", stale, err)
	} else {
		f.Close()
	}
	// A directory there is an error, not removed.
	os.Mkdir(filepath.Join(dir, "d.tmp"), 0o755)
	if _, _, _, err := CreateTemp(filepath.Join(dir, "d.tmp")); err == nil {
		t.Error("a directory at tmp was accepted")
	}
}
