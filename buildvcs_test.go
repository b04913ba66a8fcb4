package tracecast_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeBuildPrintsRevision: the binary make build writes names the git
// revision it was built from in --version — also where go build records
// none (GOFLAGS=-buildvcs=false, a linked git worktree, whose .git is a
// file): make build passes git describe through -ldflags too.
func TestMakeBuildPrintsRevision(t *testing.T) {
	for _, tool := range []string{"make", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	head, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("not a git checkout under CI: %v", err)
		}
		t.Skip("not a git checkout: no revision to print")
	}
	bin := filepath.Join(t.TempDir(), "tracecast")
	cmd := exec.Command("make", "build", "BIN="+bin)
	// What this machine's Go configuration does: no VCS stamping unless
	// asked for.
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if rev := strings.TrimSpace(string(head)); !strings.Contains(string(out), "(rev ") || !strings.Contains(string(out), rev) {
		t.Errorf("--version: %q, want the revision %s", out, rev)
	}
}
