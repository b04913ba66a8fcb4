package iobench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/iocall"
	"github.com/tracecast/tracecast/stages/iotime"
)

// need returns the path of a program, skipping the test when it is missing
// (failing when CI is set: CI installs it).
func need(t *testing.T, prog string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err != nil {
		msg := prog + " is not installed (apt-get install -y strace sqlite3): the I/O prediction demonstration needs it"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// workload is what the demonstration traces: dd with fsync at the end, cp
// (copy_file_range), tar of the input, and an sqlite3 database written in
// 40 transactions (small random writes and fdatasync).
func workload(t *testing.T, dir string, sqlite bool) string {
	t.Helper()
	in := make([]byte, 8<<20)
	for i := range in {
		in[i] = byte(i * 31 >> 3)
	}
	if err := os.WriteFile(filepath.Join(dir, "in"), in, 0o644); err != nil {
		t.Fatal(err)
	}
	var sql strings.Builder
	sql.WriteString("PRAGMA journal_mode=DELETE;\nCREATE TABLE t(a INTEGER, b TEXT);\n")
	for tx := 0; tx < 40; tx++ {
		sql.WriteString("BEGIN;\n")
		for i := 0; i < 50; i++ {
			fmt.Fprintf(&sql, "INSERT INTO t VALUES(%d, '%s');\n", tx*50+i, strings.Repeat("x", 100+i))
		}
		sql.WriteString("COMMIT;\n")
	}
	sql.WriteString("SELECT count(*), sum(length(b)) FROM t;\n")
	if err := os.WriteFile(filepath.Join(dir, "load.sql"), []byte(sql.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := `cd "$1" && dd if=in of=dd.out bs=64k conv=fsync 2>/dev/null && dd if=in of=dd4k.out bs=4k 2>/dev/null && cp in cp.out && tar cf a.tar in && tar xOf a.tar >/dev/null`
	if sqlite {
		s += ` && rm -f t.db && sqlite3 t.db < load.sql >/dev/null`
	}
	return s
}

// traceOnce runs the workload under strace in dir once and adds the calls
// on files under dir to agg.
func traceOnce(t *testing.T, strace, dir, script string, agg *iotime.Aggregator) iocall.Stats {
	t.Helper()
	out := filepath.Join(dir, "app.strace")
	if b, err := exec.Command(strace, "-f", "-tt", "-T", "-y", "-o", out, "sh", "-c", script, "sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("strace: %v\n%s", err, b)
	}
	prefix := dir + "/"
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := iocall.Read(f, "", iocall.Options{File: out}, func(c *tracecast.IOCall) error {
		if strings.HasPrefix(c.Path, prefix) && !strings.HasSuffix(c.Path, ".strace") {
			agg.Add(c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Skipped.Total() != 0 {
		t.Fatalf("%s: skipped lines %v", out, st.Skipped)
	}
	return st
}

func predictionTable(p Prediction) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "category\tcalls\tref_s\tratio\tpredicted_s\tactual_s\terror_%%\t\n")
	for _, c := range p.Categories {
		a, e := "-", "-"
		if c.Actual != nil {
			a = fmt.Sprintf("%.6f", *c.Actual)
		}
		if c.ErrorPct != nil {
			e = fmt.Sprintf("%+.1f", *c.ErrorPct)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.6f\t%.3f\t%.6f\t%s\t%s\t\n", c.Category, c.Calls, c.RefTime, c.Ratio, c.Predicted, a, e)
	}
	fmt.Fprintf(tw, "total %s→%s\t\t%.6f\t\t%.6f\t%.6f\t%+.1f\t\n", p.Reference, p.Target, p.RefTotal, p.Predicted, *p.Actual, *p.ErrorPct)
	tw.Flush()
	return b.String()
}

// TestDemoDiskVsTmpfs is the demonstration of issue 7: trace real programs
// (dd, tar, sqlite3) with strace on the disk and on a tmpfs, benchmark both
// with the profile's categories, predict each from the other (eq. 1–3) and
// report the error.
func TestDemoDiskVsTmpfs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the demonstration runs real programs under strace")
	}
	strace := need(t, "strace")
	_, err := exec.LookPath("sqlite3")
	sqlite := err == nil
	if !sqlite {
		if os.Getenv("CI") != "" {
			t.Fatal("sqlite3 is not installed (apt-get install -y sqlite3)")
		}
		t.Log("sqlite3 missing: demonstrating with dd, cp and tar only")
	}
	disk := t.TempDir()
	if fsName(disk) == "tmpfs" {
		d, err := os.MkdirTemp("/var/tmp", "tracecast-io-")
		if err != nil {
			t.Skip("no disk-backed directory")
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		disk = d
	}
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() || fsName("/dev/shm") != "tmpfs" {
		t.Skip("/dev/shm is not a tmpfs here")
	}
	shm, err := os.MkdirTemp("/dev/shm", "tracecast-io-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	t0 := time.Now()

	const runs = 3
	// the seed averages several runs: each profile holds `runs` runs of
	// the workload (totals are their sum), interleaved between the two
	// file systems so that the machine's load weighs on both alike
	aggDisk, aggShm := iotime.New(nil), iotime.New(nil)
	scriptDisk, scriptShm := workload(t, disk, sqlite), workload(t, shm, sqlite)
	var st iocall.Stats
	for run := 0; run < runs; run++ {
		st = traceOnce(t, strace, disk, scriptDisk, aggDisk)
		traceOnce(t, strace, shm, scriptShm, aggShm)
	}
	profDisk, profShm := aggDisk.Summary(), aggShm.Summary()
	t.Logf("traced %d runs on each in %v: last run %s; disk (%s): %d calls %.4f s of I/O; tmpfs: %d calls %.4f s",
		runs, time.Since(t0).Round(time.Millisecond), st.String(), fsName(disk), profDisk.Total.Calls, profDisk.Total.Time, profShm.Total.Calls, profShm.Total.Time)
	if profDisk.Total.Calls < 100 || profShm.Total.Calls < 100 {
		t.Fatalf("too few calls traced: %d, %d", profDisk.Total.Calls, profShm.Total.Calls)
	}

	o := DefaultOptions()
	o.MaxCalls, o.Reps, o.MaxGap = 250, 3, time.Millisecond
	bench := func(prof iotime.Summary, dir string) *Result {
		o.Dir = dir
		r, err := Run(context.Background(), prof, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ctx := []struct {
		name           string
		prof, actual   iotime.Summary
		refDir, tgtDir string
	}{
		{"disk → tmpfs", profDisk, profShm, disk, shm},
		{"tmpfs → disk", profShm, profDisk, shm, disk},
	}
	for _, c := range ctx {
		ref, tgt := bench(c.prof, c.refDir), bench(c.prof, c.tgtDir)
		for _, po := range []PredictOptions{{}, {Median: true}, {Overhead: -1}, {Calibrated: true}, {Median: true, Calibrated: true}} {
			p := Predict(c.prof, ref, tgt, &c.actual, po)
			if p.Actual == nil || p.ErrorPct == nil || p.Predicted <= 0 {
				t.Fatalf("%s: %+v", c.name, p)
			}
			model := fmt.Sprintf("tracer overhead %.1f µs/call", 1e6*p.Overhead)
			if po.Calibrated {
				model = fmt.Sprintf("calibrated overhead %.1f µs/call", 1e6*p.Overhead)
			}
			t.Logf("%s, %s, %s: reference %.4f s, predicted %.4f s, actual %.4f s, error %+.1f%% (not benchmarked: %.1f%%)\n%s",
				c.name, p.Stat, model, p.RefTotal, p.Predicted, *p.Actual, *p.ErrorPct, 100*p.Unbenchmarked, predictionTable(p))
		}
	}
	t.Logf("demonstration took %v", time.Since(t0).Round(time.Millisecond))
}
