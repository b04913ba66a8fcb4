package output

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFinish: an output is committed when kept without error, removed
// otherwise (PATH left as it was), and the error names the sink.
func TestFinish(t *testing.T) {
	for _, c := range []struct {
		name    string
		keep    bool
		errs    []error
		want    string // PATH's content afterwards
		wantErr string
	}{
		{"kept", true, nil, "new", ""},
		{"kept, a writer failed", true, []error{errors.New("footer")}, "old", "test sink out: footer"},
		{"not kept", false, []error{errors.New("ignored")}, "old", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte("new")); err != nil {
				t.Fatal(err)
			}
			err = Finish(f, c.keep, "test sink", "out", c.errs...)
			if (err == nil) != (c.wantErr == "") || err != nil && !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error %v, want %q", err, c.wantErr)
			}
			if got, _ := os.ReadFile(path); string(got) != c.want {
				t.Errorf("%s holds %q, want %q", path, got, c.want)
			}
			if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
				t.Errorf("%s.tmp left: %v", path, err)
			}
		})
	}
}

// TestAbortSink: a temporary output is removed once, an output written in
// place is closed (what was written kept).
func TestAbortSink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed, calls := false, 0
	closeFn := func() error { calls++; return nil }
	if err := AbortSink(f, &closed, closeFn); err != nil || !closed || calls != 0 {
		t.Errorf("temporary: %v, closed %v, close called %d times", err, closed, calls)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("%s.tmp left: %v", path, err)
	}
	if err := AbortSink(f, &closed, closeFn); err != nil || calls != 0 {
		t.Errorf("again: %v, close called %d times", err, calls)
	}
	in, err := Open(filepath.Join(t.TempDir(), "live"), Options{InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	closed = false
	if err := AbortSink(in, &closed, closeFn); err != nil || calls != 1 {
		t.Errorf("in place: %v, close called %d times", err, calls)
	}
	in.Commit()
}

// TestSink: Close flushes and commits once; a Write after it is an error
// naming the sink and the file; Abort keeps PATH as it was; a flush error
// removes PATH.tmp and is annotated.
func TestSink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	s, err := OpenSink("test sink", path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	flushed := 0
	s.SetFlush(func() error { flushed++; _, err := s.File().Write([]byte("x")); return err })
	if err := s.CheckOpen(); err != nil || s.Annotate(nil) != nil {
		t.Fatalf("open sink: %v", err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil || flushed != 1 {
		t.Errorf("second Close: %v, %d flushes", err, flushed)
	}
	if b, _ := os.ReadFile(path); string(b) != "x" {
		t.Errorf("output %q", b)
	}
	if err := s.CheckOpen(); err == nil || err.Error() != "test sink "+path+": write after close" {
		t.Errorf("after Close: %v", err)
	}

	s, err = OpenSink("test sink", path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Abort(); err != nil || !s.DurableOnClose() {
		t.Fatalf("Abort: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "x" {
		t.Errorf("Abort changed the output: %q", b)
	}

	s, err = OpenSink("test sink", path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.SetFlush(func() error { return errors.New("full") })
	if err := s.Close(t.Context()); err == nil || !strings.Contains(err.Error(), "test sink "+path+": full") {
		t.Errorf("failed flush: %v", err)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("PATH.tmp left: %v", err)
	}
}
