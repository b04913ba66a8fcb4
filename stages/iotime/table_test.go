package iotime

import (
	"bytes"
	"strings"
	"testing"
)

func TestSummaryTable(t *testing.T) {
	s := Summary{Total: Stat{Key: "total", Calls: 3, Time: 0.5},
		Categories: []Stat{{Key: "read/<4K/seq", Calls: 3, Bytes: 30, Time: 0.5}},
		Processes:  []Stat{{Key: "read/<4K/seq", PID: 7, Calls: 2}, {Key: "read/<4K/seq", PID: 8, Calls: 1}}}
	for _, tc := range []struct {
		perProcess bool
		rows       int
		want       string
	}{
		{false, 3, "read/<4K/seq      3     30  0.500000"},
		{true, 4, "  8  read/<4K/seq      1"},
	} {
		var b bytes.Buffer
		if err := s.WriteTable(&b, tc.perProcess); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		if len(lines) != tc.rows || !strings.Contains(b.String(), tc.want) || !strings.Contains(lines[len(lines)-1], "total") {
			t.Errorf("per process %v:\n%s", tc.perProcess, b.String())
		}
	}
}
