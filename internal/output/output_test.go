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
