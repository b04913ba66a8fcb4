//go:build linux

package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/fulldisk"
)

// TestOutputsOnFullDisk runs every command that writes files with its
// output on a full filesystem (a 256 KiB tmpfs as root; otherwise the
// command in-process with ENOSPC injected under internal/output): each
// exits 1 with "tracecast: FILE: no space left on device (...)" naming
// the file, leaves no file under its final name (the previous complete
// file untouched) and no FILE.tmp. Before the fix, --format csv left a
// truncated out.csv and --format parquet a stale out.parquet.tmp.
func TestOutputsOnFullDisk(t *testing.T) {
	trace, _ := filepath.Abs("../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz")
	// The filesystem's size when 256 KiB would hold the whole output.
	diskSize := map[string]int64{"backfill --format parquet -o DIR": 32 << 10}
	power, _ := filepath.Abs("../../testdata/power/cholesky-2cpu.rapl.csv.gz")
	for _, tc := range []struct {
		name     string
		args     func(dir string) []string
		previous string // a complete file there before, left as it was
	}{
		{"states pjdump", func(d string) []string {
			return []string{"states", "--format", "pjdump", "-o", d + "/out.pjdump", trace}
		}, ""},
		{"states csv", func(d string) []string { return []string{"states", "--format", "csv", "-o", d + "/out.csv", trace} }, "out.csv"},
		{"states jsonl", func(d string) []string { return []string{"states", "--format", "jsonl", "-o", d + "/out.jsonl", trace} }, ""},
		{"states arrow", func(d string) []string { return []string{"states", "--format", "arrow", "-o", d + "/out.arrow", trace} }, "out.arrow"},
		{"states parquet", func(d string) []string {
			return []string{"states", "--format", "parquet", "-o", d + "/out.parquet", trace}
		}, ""},
		{"signal parquet", func(d string) []string {
			return []string{"signal", "--period", "1us", "-o", d + "/idle.parquet", trace}
		}, ""},
		{"signal csv", func(d string) []string { return []string{"signal", "--period", "1us", "-o", d + "/idle.csv", trace} }, ""},
		{"predict -o DIR", func(d string) []string {
			return []string{"predict", "--horizon", "10ms", "--every", "1ms", "--format", "parquet", "-o", d + "/forecasts", trace}
		}, ""},
		{"predict --window -o DIR", func(d string) []string {
			return []string{"predict", "--window", "10", "--period", "10us", "-o", d + "/windows", trace}
		}, ""},
		{"report", func(d string) []string { return []string{"report", trace, "-o", d + "/report.html"} }, "report.html"},
		{"energy -o DIR (tables, plots)", func(d string) []string {
			return []string{"energy", "--trace", trace, "--power", power, "-o", d + "/energy"}
		}, ""},
		{"tasks csv", func(d string) []string { return []string{"tasks", trace, "--power", power, "-o", d + "/tasks.csv"} }, ""},
		// 1.6 MB of decisions, spells, scores, the value table and its plot.
		{"backfill -o DIR", func(d string) []string {
			return []string{"backfill", trace, "--task", "10ms", "--mode", "wait", "--alpha", "10", "--spells", "10ms", "-o", d + "/backfill"}
		}, ""},
		// 67 kB: decisions.parquet (54 kB) fills 32 KiB.
		{"backfill --format parquet -o DIR", func(d string) []string {
			return []string{"backfill", trace, "--task", "10ms", "--format", "parquet", "-o", d + "/backfill"}
		}, ""},
		{"predict --spells -o DIR", func(d string) []string {
			return []string{"predict", trace, "--spells", "10ms", "-o", d + "/spells"}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fulldisk.New(t, cmp.Or(diskSize[tc.name], 256<<10))
			if tc.previous != "" {
				if err := os.WriteFile(filepath.Join(d.Dir, tc.previous), []byte("previous\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, stderr := runOnDisk(t, d, tc.args(d.Dir)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, stderr)
			}
			last := lastLine(stderr)
			m := regexp.MustCompile(`^tracecast: (` + regexp.QuoteMeta(d.Dir) + `/\S+): no space left on device \((\S+) left as it was: free some space on its filesystem and run again\)$`).FindStringSubmatch(last)
			if m == nil || m[1] != m[2] || strings.HasSuffix(m[1], ".tmp") {
				t.Errorf("last line %q, want tracecast: FILE: no space left on device (FILE left as it was: ...)\n%s", last, stderr)
			} else if _, err := os.Stat(m[1]); err == nil && filepath.Base(m[1]) != tc.previous {
				t.Errorf("%s exists", m[1])
			}
			for _, e := range d.Entries() {
				p := filepath.Join(d.Dir, e)
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					continue
				}
				switch {
				case e == tc.previous:
					if b, _ := os.ReadFile(p); string(b) != "previous\n" {
						t.Errorf("%s changed (%d bytes)", e, len(b))
					}
				case strings.Contains(e, "/"):
					// -o DIR: a file written before the one that failed is
					// a complete file of this run.
					if err := complete(p); err != nil {
						t.Errorf("left %s, not complete: %v", e, err)
					}
				default:
					t.Errorf("left %s", e)
				}
			}
			if tc.previous != "" {
				if _, err := os.Stat(filepath.Join(d.Dir, tc.previous)); err != nil {
					t.Errorf("the previous %s is gone: %v", tc.previous, err)
				}
			}
			t.Logf("mounted %v: %s", d.Mounted, last)
		})
	}
}

// runOnDisk runs the command as a process when d is a filesystem of its
// own, else in this process, where the injected fault applies.
func runOnDisk(t *testing.T, d *fulldisk.Disk, args ...string) (int, string) {
	t.Helper()
	if d.Mounted {
		r := run(t, nil, append(args, "--log-format", "json")...)
		return r.code, r.stderr
	}
	var errb bytes.Buffer
	cmd := newRootCmd()
	cmd.SetArgs(args)
	cmd.SetErr(&errb)
	err := cmd.ExecuteContext(context.Background())
	if err == nil {
		return 0, errb.String()
	}
	return exitCode(err), errb.String() + "tracecast: " + err.Error() + "\n"
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// complete checks that a file of a -o DIR output is whole: by its
// format's end marker, or (JSON) by parsing.
func complete(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	end := map[string]string{".parquet": "PAR1", ".arrow": "ARROW1", ".png": "IEND\xaeB`\x82", ".svg": "</svg>\n"}[filepath.Ext(path)]
	switch {
	case filepath.Ext(path) == ".json":
		var v any
		return json.Unmarshal(b, &v)
	case filepath.Ext(path) == ".jsonl":
		// Whole lines, each a JSON record.
		if len(b) > 0 && b[len(b)-1] != '\n' {
			return fmt.Errorf("does not end with a newline")
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			var v any
			if err := json.Unmarshal(line, &v); err != nil {
				return fmt.Errorf("line %d: %w", i+1, err)
			}
		}
		return nil
	case end == "":
		return fmt.Errorf("no check for %s", filepath.Ext(path))
	case !bytes.HasSuffix(b, []byte(end)):
		return fmt.Errorf("does not end with %q", end)
	}
	return nil
}
