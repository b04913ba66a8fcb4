// Package duckdbtest runs SQL in DuckDB — through tools/duckcheck, the
// @duckdb/node-api package under Node.js — for tests that check what
// another reader makes of tracecast's Parquet output. It installs the
// pinned package with npm when it is missing. Without node or npm the test
// is skipped with a message, except when the CI environment variable is
// set: there a missing reader fails the test.
package duckdbtest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/nodetest"
)

// Result is what DuckDB returned for one statement.
type Result struct {
	Columns []string `json:"columns"`
	Types   []string `json:"types"`
	// Rows hold JSON values: float64 numbers (strings for integers beyond
	// 2^53 and non-finite doubles), strings, bools, nil for NULL.
	Rows [][]any `json:"rows"`
}

// script is tools/duckcheck's.
var script = nodetest.Script{Tool: "duckcheck", File: "duckcheck.mjs", Package: "@duckdb/node-api",
	What: "the DuckDB check", Install: "Node.js and npm, e.g. make deps"}

// Dir is tools/duckcheck.
func Dir() string { return script.Dir() }

// Query runs the statements in one DuckDB database, in order, and returns
// one Result per statement. A failing statement fails the test with
// DuckDB's message.
func Query(t testing.TB, sql ...string) []Result {
	t.Helper()
	res := nodetest.Run[Result](t, script, sql...)
	if len(res) != len(sql) {
		t.Fatalf("duckcheck.mjs answered %d statements of %d:\n%v", len(res), len(sql), res)
	}
	return res
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
