package sinktest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

// Entities returns n entities cycling through every nature: states with
// two user-defined fields (Size 42 and Tag a"b) and an imbrication of 0
// or 1, variables with a number, links with their ends and a key; at
// gives entity i its start, end and value.
func Entities(n int, at func(i int) (start, end float64, value string)) []tracecast.Entity {
	out := make([]tracecast.Entity, n)
	for i := range out {
		e := tracecast.Entity{Nature: tracecast.Nature(i%5 + 1), Container: fmt.Sprintf("C%d", i%3), Type: "T"}
		e.Start, e.End, e.Value = at(i)
		switch e.Nature {
		case tracecast.NatureState:
			e.Imbrication = i % 2
			e.Ext = &tracecast.EntityExt{Extra: []tracecast.Field{{Name: "Size", Value: "42"}, {Name: "Tag", Value: `a"b`}}}
		case tracecast.NatureVariable:
			e.Number = float64(i) * 1.5
		case tracecast.NatureLink:
			e.Ext = &tracecast.EntityExt{StartContainer: "a", EndContainer: "b", Key: fmt.Sprintf("k%d", i)}
		}
		out[i] = e
	}
	return out
}

// EntityRow is the row of an entity of Entities in the entity table: its
// cells as arrow/go renders them (ValueStr), null where it has none,
// joined by |.
func EntityRow(e tracecast.Entity) string {
	num, sc, ec, key, extra := "null", "null", "null", "null", "null"
	switch e.Nature {
	case tracecast.NatureVariable:
		num = fmt.Sprint(e.Number)
	case tracecast.NatureLink:
		sc, ec, key = e.StartContainer(), e.EndContainer(), e.Key()
	case tracecast.NatureState:
		extra = `{"Size":"42","Tag":"a\"b"}`
	}
	return strings.Join([]string{e.Nature.String(), e.Container, e.Type, fmt.Sprint(e.Start), fmt.Sprint(e.End),
		fmt.Sprint(e.End - e.Start), fmt.Sprint(e.Imbrication), e.Value, num, sc, ec, key, extra}, "|")
}

// CommitOnClose writes the batches through s, the sink of the file at
// path, and closes it: a file written as PATH.tmp (temp) must not be at
// PATH before Close — a reader could open it without its footer — and
// Close must succeed, twice, and leave no PATH.tmp.
func CommitOnClose[T any](t testing.TB, s tracecast.Sink, path string, temp bool, batches ...[]T) {
	t.Helper()
	for _, b := range batches {
		if err := s.Write(t.Context(), tracecast.Batch{Items: b}); err != nil {
			t.Fatal(err)
		}
	}
	if temp {
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists before Close (err %v): readers could open a file without footer", path, err)
		}
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left behind: %v", err)
	}
}

// AbortOver writes items through the sink open makes of path, which holds
// an older output, and aborts it (tracecast.Aborter): Abort, and Close
// after it, must succeed and leave no PATH.tmp; with keepsOld, PATH must
// hold the older output still.
func AbortOver(t testing.TB, path string, open Open, items any, keepsOld bool) {
	t.Helper()
	old := []byte("an older output")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: items}); err != nil {
		t.Fatal(err)
	}
	if err := s.(tracecast.Aborter).Abort(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Errorf("Close after Abort: %v", err)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Abort left PATH.tmp: %v", err)
	}
	if keepsOld {
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, old) {
			t.Errorf("Abort changed %s: %q, %v", path, got, err)
		}
	}
}
