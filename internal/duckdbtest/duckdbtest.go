// Package duckdbtest runs SQL in DuckDB — through tools/duckcheck, the
// @duckdb/node-api package under Node.js — for tests that check what
// another reader makes of tracecast's Parquet output. It installs the
// pinned package with npm when it is missing. Without node or npm the test
// is skipped with a message, except when the CI environment variable is
// set: there a missing reader fails the test.
package duckdbtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Result is what DuckDB returned for one statement.
type Result struct {
	Columns []string `json:"columns"`
	Types   []string `json:"types"`
	// Rows hold JSON values: float64 numbers (strings for integers beyond
	// 2^53 and non-finite doubles), strings, bools, nil for NULL.
	Rows [][]any `json:"rows"`
}

// Dir is tools/duckcheck, found from this file's location.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "tools", "duckcheck")
}

// need returns the path of a command, skipping the test when it is missing
// (failing it under CI).
func need(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required under CI for the DuckDB check: %v", name, err)
	}
	t.Skipf("skipping the DuckDB check: %s not found (install Node.js and npm, e.g. make deps; required when CI is set)", name)
	return ""
}

// Query runs the statements in one DuckDB database, in order, and returns
// one Result per statement. A failing statement fails the test with
// DuckDB's message.
func Query(t testing.TB, sql ...string) []Result {
	t.Helper()
	node := need(t, "node")
	dir := Dir()
	install(t, dir)
	var stderr bytes.Buffer
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "duckcheck.mjs")}, sql...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckcheck.mjs: %v: %s\nstatements:\n%s", err, stderr.Bytes(), strings.Join(sql, "\n"))
	}
	var res []Result
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		var r Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad line from duckcheck.mjs: %v: %.200s", err, sc.Bytes())
		}
		res = append(res, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(res) != len(sql) {
		t.Fatalf("duckcheck.mjs answered %d statements of %d:\n%s", len(res), len(sql), out)
	}
	return res
}

// install runs npm ci in dir when node_modules lacks the package, under a
// lock so that test binaries running in parallel install it once.
func install(t testing.TB, dir string) {
	t.Helper()
	pkg := filepath.Join(dir, "node_modules", "@duckdb", "node-api")
	if _, err := os.Stat(pkg); err == nil {
		return
	}
	npm := need(t, "npm")
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "tracecast-duckcheck.lock"), os.O_CREATE|os.O_RDWR, 0o644)
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

// Quote returns s as an SQL string literal (a file path in a query).
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Float reads a DOUBLE or integer value of a Result: a JSON number, or the
// string DuckDB's value has beyond JSON ("NaN", a large integer).
func Float(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case string:
		return strconv.ParseFloat(x, 64)
	}
	return 0, fmt.Errorf("%v (%T) is not a number", v, v)
}
