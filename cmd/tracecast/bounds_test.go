package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIOLimits: the strace reader's limits are flags; past one, a line is
// an error naming it (exit 1), or skipped and counted with --lenient.
func TestIOLimits(t *testing.T) {
	var b strings.Builder
	for pid := 1; pid <= 3; pid++ {
		fmt.Fprintf(&b, "[pid %d] 10:00:00.0 read(3</d/f>, \"x\", 1) = 1 <0.1>\n", pid)
	}
	log := filepath.Join(t.TempDir(), "pids.strace")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "iocalls", "--max-pids", "2", log)
	if r.code != 1 || !strings.Contains(r.stderr, log+":3: more than 2 processes (raise --max-pids)") {
		t.Errorf("strict: exit %d: %s", r.code, r.stderr)
	}
	r = run(t, nil, "iocalls", "--max-pids", "2", "--lenient", log)
	if r.code != 0 || strings.Count(r.stdout, "\n") != 3 || !strings.Contains(r.stderr, `"limit":1`) {
		t.Errorf("lenient: exit %d: %s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "iotime", "--max-open-calls", "1", log); r.code != 0 {
		t.Errorf("--max-open-calls 1: exit %d: %s", r.code, r.stderr)
	}
}
