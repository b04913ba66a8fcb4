package front

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestOwn(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--version"}, true},
		{[]string{"states", "t.trace"}, true},
		{[]string{"states", "--format", "csv", "-o", "x.csv", "t.trace"}, true},
		{[]string{"states", "--format=jsonl", "t.trace"}, true},
		{[]string{"states", "--format", "parquet", "-o", "x.parquet", "t.trace"}, false},
		{[]string{"states", "t.trace", "--format=arrow", "-o", "x.arrow"}, false},
		{[]string{"states", "--format", "nonsense", "t.trace"}, false},
		{[]string{"states", "--", "--format", "parquet"}, true}, // a trace named --format
		{[]string{"states", "--help"}, false},
		{[]string{"states", "-h"}, false},
		{[]string{"states", "--", "-h"}, true}, // a trace named -h
		{[]string{}, false},
		{[]string{"--help"}, false},
		{[]string{"predict", "t.trace"}, false},
		{[]string{"--log-level", "debug", "states", "t.trace"}, false},
		{[]string{"help", "states"}, false},
	} {
		if got := own(tc.args); got != tc.want {
			t.Errorf("own(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestFrontEqualsFull builds the two binaries as make build does and runs
// the same command lines through both: the front binary's own (states,
// --version) and those it hands over give the same output, errors and
// exit codes as the full binary's.
func TestFrontEqualsFull(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the two binaries: make test runs it without -short, after the README test")
	}
	dir := t.TempDir()
	for name, pkg := range map[string]string{"tracecast": "../../cmd/tracecast-front", FullName: "../../cmd/tracecast"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	ring := "../../testdata/smpi/ring-4.trace"
	csv := filepath.Join(dir, "out.csv")
	run := func(bin string, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		cmd := exec.Command(filepath.Join(dir, bin), args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	for _, args := range [][]string{
		{"--version"},
		{"states", ring},
		{"states", "--format", "jsonl", ring},
		{"states", "--format", "csv", "-o", csv, ring},
		{"states", "--format", "arrow", ring}, // handed over, as Arrow IPC stream on stdout
		{"states", "--format=parquet", ring},  // handed over: needs -o
		{"states", "--format", "bogus", ring},
		{"states", "--bogus", ring},
		{"states", ring, ring},
		{"states", "/nonexistent/trace"},
		{"states", "--max-line-bytes", "0", ring},
		{"states", "--help"},
		{"predict", "--horizon", "1ms", ring},
		{"bogus"},
		{"--help"},
	} {
		o1, e1, c1 := run(FullName, args...)
		if args[len(args)-1] == ring && len(args) > 4 {
			os.Remove(csv) // written again by the front binary
		}
		o2, e2, c2 := run("tracecast", args...)
		if o1 != o2 || e1 != e2 || c1 != c2 {
			t.Errorf("%q: the front binary gives exit %d, %d bytes out, stderr %q; the full one exit %d, %d bytes out, stderr %q",
				args, c2, len(o2), e2, c1, len(o1), e1)
		}
	}
	// Without the full binary beside it, a command it hands over fails
	// and says why.
	os.Remove(filepath.Join(dir, FullName))
	if _, e, c := run("tracecast", "predict", ring); c != 1 || !bytes.Contains([]byte(e), []byte("make build writes beside tracecast")) {
		t.Errorf("no full binary: exit %d, %q", c, e)
	}
	if o, _, c := run("tracecast", "states", ring); c != 0 || o == "" {
		t.Errorf("no full binary, states: exit %d", c)
	}
}
