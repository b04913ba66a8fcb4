package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestStartupInitializers guards what every command pays before main
// (issue 38, docs/performance.md "Start-up"): kafka-go's protocol codecs
// and gonum/plot's fonts are built on first use (third_party/), not by
// their packages' initializers, and the man-page generator of cobra/doc
// (go-md2man, blackfriday) is not linked. It reads the bytes each
// initializer allocates (GODEBUG=inittrace=1), which do not vary from run
// to run, rather than their time: kafka-go's protocol/fetch allocated 97 KB
// at init when it built its codecs, plot's init 184 KB parsing the fonts.
func TestStartupInitializers(t *testing.T) {
	cmd := exec.Command(binary, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tracecast --version: %v\n%s", err, out)
	}
	const maxBytes = 4096 // per initializer of the packages below
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @0.5 ms, 0.01 ms clock, 496 bytes, 9 allocs
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		pkg := f[1]
		bytes, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		switch {
		case strings.Contains(pkg, "blackfriday") || strings.Contains(pkg, "go-md2man"):
			t.Errorf("%s is linked (cobra/doc's man-page generator; internal/clidoc writes the pages itself)", pkg)
		case strings.HasPrefix(pkg, "github.com/segmentio/kafka-go"):
			seen["kafka-go"] = true
			if bytes > maxBytes {
				t.Errorf("%s allocates %d bytes at init: kafka-go's codecs built at start again (third_party/kafka-go, the replace in go.mod)?", pkg, bytes)
			}
		case pkg == "gonum.org/v1/plot":
			seen["plot"] = true
			if bytes > maxBytes {
				t.Errorf("%s allocates %d bytes at init: its fonts parsed at start again (third_party/plot, the replace in go.mod)?", pkg, bytes)
			}
		}
	}
	if !seen["kafka-go"] || !seen["plot"] {
		t.Fatalf("no inittrace lines of kafka-go and gonum/plot in:\n%s", out)
	}
}
