package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/parquet/file"
)

// TestStaleTempAfterKill: a run writing an Arrow file and a Parquet file
// (PATH.tmp until their rename) is killed with SIGKILL, leaving the .tmp
// files; the run started again removes them first (a warning names each),
// and ends with both outputs complete and no .tmp left.
func TestStaleTempAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline as a process, paced in real time")
	}
	dir := t.TempDir()
	trace, _ := filepath.Abs("../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz")
	k, q := filepath.Join(dir, "k.arrow"), filepath.Join(dir, "k.parquet")
	yaml := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(yaml, fmt.Appendf(nil, `version: 1
name: p
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, speed: realtime, parser: {type: paje, time_unit: ms}}
sinks:
  a: {type: arrow, inputs: [trace], path: %q, format: file}
  q: {type: parquet, inputs: [trace], path: %q}
`, trace, k, q), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "run", yaml, "--no-progress")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it wrote part of the Arrow file.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if fi, err := os.Stat(k + ".tmp"); err == nil && fi.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("k.arrow.tmp not written in 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	for _, p := range []string{k + ".tmp", q + ".tmp"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the killed run left no %s: %v", p, err)
		}
	}
	if _, err := os.Stat(k); err == nil {
		t.Fatal("k.arrow exists after the kill: the run was not killed mid-way")
	}

	r := run(t, nil, "run", yaml, "--no-progress", "--set", "trace.speed=max")
	if r.code != 0 {
		t.Fatalf("restart: exit %d: %s", r.code, r.stderr)
	}
	for _, p := range []string{k + ".tmp", q + ".tmp"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left after the restart", p)
		}
		if !strings.Contains(r.stderr, "removed a stale temporary file") || !strings.Contains(r.stderr, p) {
			t.Errorf("no warning about the stale %s:\n%s", p, r.stderr)
		}
	}
	// Both outputs are complete: every entity of the trace.
	const entities = 41156
	data, err := os.ReadFile(k)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rows := int64(0)
	for i := 0; i < fr.NumRecords(); i++ {
		rec, err := fr.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		rows += rec.NumRows()
	}
	fr.Close()
	pf, err := file.OpenParquetFile(q, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if rows != entities || pf.NumRows() != entities {
		t.Fatalf("%d rows in k.arrow, %d in k.parquet: want %d each", rows, pf.NumRows(), entities)
	}
}

// TestFailedRunKeepsOutput: a run that fails on a bad line leaves an Arrow
// or Parquet output as it was before the run (here an older file) and no
// PATH.tmp: a truncated file that reads as complete would pass for the
// whole trace's result.
func TestFailedRunKeepsOutput(t *testing.T) {
	good, err := os.ReadFile("../../testdata/smpi/ring-8.trace")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.trace")
	if err := os.WriteFile(bad, append(good, "12 1.0 \"unterminated\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	old := []byte("the previous run's output\n")
	for _, tc := range []struct{ name, out string }{
		{"states parquet", "s.parquet"},
		{"states arrow", "s.arrow"},
		{"signal parquet", "g.parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.out)
			if err := os.WriteFile(out, old, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"states", "--format", strings.TrimPrefix(filepath.Ext(out), "."), "-o", out, bad}
			if strings.HasPrefix(tc.name, "signal") {
				args = []string{"signal", "-o", out, bad}
			}
			r := run(t, nil, args...)
			if r.code != 1 || !strings.Contains(r.stderr, "unterminated quoted string") {
				t.Fatalf("exit %d, want 1 with the bad line's error: %s", r.code, r.stderr)
			}
			if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, old) {
				t.Errorf("the failed run replaced %s (%d bytes, %v)", tc.out, len(got), err)
			}
			if _, err := os.Stat(out + ".tmp"); err == nil {
				t.Errorf("%s.tmp left behind", tc.out)
			}
		})
	}
}
