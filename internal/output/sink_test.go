package output

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
