package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The closed-loop command end to end: flags (lists of durations, the
// synth flags), the table, -o DIR with the traces `tracecast states`
// reads, and usage errors. The logic is tested in backfill/closedloop.
func TestClosedLoopCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cl")
	r := run(t, nil, "closed-loop", "--tasks", "120", "--workers", "4", "--levels", "30", "--seed", "3",
		"--task", "1ms", "--timeout", "0,2ms", "--policy", "never,greedy,timeout,forecast", "-o", dir, "--traces")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"closed loop: 120 tasks on 4 workers", "greedy", "forecast", "1ms: forecast harvests more than every timeout"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
	for _, f := range []string{"closedloop.jsonl", "frontier.svg", "traces/s3-base.trace.gz", "traces/s3-timeout-t2ms-1ms.trace.gz"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	s := run(t, nil, "states", filepath.Join(dir, "traces", "s3-greedy-1ms.trace.gz"))
	if s.code != 0 || !strings.Contains(s.stdout, "Backfill") {
		t.Errorf("states on greedy's trace: exit %d, %s", s.code, s.stderr)
	}
	for _, bad := range [][]string{{"--task", "1"}, {"--policy", "oracle"}, {"--traces"}, {"--workers", "0"}} {
		if r := run(t, nil, append([]string{"closed-loop", "--tasks", "50"}, bad...)...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, r.code, r.stderr)
		}
	}
}
