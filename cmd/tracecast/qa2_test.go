package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictWindowStdoutMatchesRecords: predict --window prints on
// standard output the records -o DIR writes to records.jsonl, windows
// included (QA: stdout left the window records out).
func TestPredictWindowStdoutMatchesRecords(t *testing.T) {
	dir := t.TempDir()
	args := []string{"predict", "--window", "100", "--period", "1ms", demoTrace}
	r := run(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if w := run(t, nil, append(args, "-o", dir)...); w.code != 0 {
		t.Fatalf("-o: exit %d: %s", w.code, w.stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stripEmittedAt(r.stdout), stripEmittedAt(string(b)); got != want {
		t.Errorf("standard output (%d bytes) differs from records.jsonl (%d bytes)", len(got), len(want))
	}
	if n := countRecords(r.stdout, "window"); n == 0 {
		t.Errorf("no window record on standard output")
	}
}

// countRecords counts the JSON lines of s whose record is rec.
func countRecords(s, rec string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, `{"record":"`+rec+`"`) {
			n++
		}
	}
	return n
}
