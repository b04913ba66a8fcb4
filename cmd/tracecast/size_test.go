package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCmdLines bounds the CLI's own code (issue 37): help texts and wiring
// only; options, checks and formatting live in the packages that run the
// commands (docs/layout.md).
const maxCmdLines = 1500

func TestCmdSize(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	if n > maxCmdLines {
		t.Errorf("cmd/tracecast has %d lines outside its tests, more than %d: move options, checks and formatting into the packages that run the commands (docs/layout.md)", n, maxCmdLines)
	}
}
