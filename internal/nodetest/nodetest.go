// Package nodetest runs the Node.js scripts under tools/ that tests use as
// independent readers of tracecast's outputs (arrowcheck: Apache Arrow's
// JavaScript reader; duckcheck: DuckDB). Without node or npm the test is
// skipped with a message, except when the CI environment variable is set:
// there a missing reader fails the test. A script's pinned packages are
// installed with npm ci when missing.
package nodetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// Script is a Node.js script of a tool under tools/.
type Script struct {
	Tool    string // the tool's directory under tools/: duckcheck
	File    string // the script in it: duckcheck.mjs
	Package string // a package under its node_modules, there once installed: @duckdb/node-api
	What    string // what the test checks with it, for the skip message: the DuckDB check
	Install string // how to install node, for the skip message: Node.js and npm, e.g. make deps
}

// Dir is the tool's directory, found from this file's location.
func (s Script) Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "tools", s.Tool)
}

// Run runs the script with args, installing its packages first when they
// are missing, and decodes each line of its output as a T. A failing
// script fails the test with its standard error.
func Run[T any](t testing.TB, s Script, args ...string) []T {
	t.Helper()
	node := s.need(t, "node")
	s.install(t)
	var stderr bytes.Buffer
	cmd := exec.Command(node, append([]string{filepath.Join(s.Dir(), s.File)}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s\narguments:\n%s", s.File, err, stderr.Bytes(), strings.Join(args, "\n"))
	}
	var res []T
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		var r T
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad line from %s: %v: %.200s", s.File, err, sc.Bytes())
		}
		res = append(res, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return res
}

// need returns the path of a command, skipping the test when it is missing
// (failing it under CI).
func (s Script) need(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required under CI for %s: %v", name, s.What, err)
	}
	t.Skipf("skipping %s: %s not found (install %s; required when CI is set)", s.What, name, s.Install)
	return ""
}

// install runs npm ci in the tool's directory when node_modules lacks the
// package, under a lock so that test binaries running in parallel install
// it once.
func (s Script) install(t testing.TB) {
	t.Helper()
	dir := s.Dir()
	pkg := filepath.Join(dir, "node_modules", filepath.FromSlash(s.Package))
	if _, err := os.Stat(pkg); err == nil {
		return
	}
	npm := s.need(t, "npm")
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "tracecast-"+s.Tool+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(pkg); err == nil {
		return // installed while we waited
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--prefix", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci --prefix %s: %v\n%s", dir, err, out)
	}
}
