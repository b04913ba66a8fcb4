package iobench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracecast/tracecast/stages/iotime"
)

func stat(key string, calls int64, tm, size, gap float64) iotime.Stat {
	c, _ := iotime.ParseKey(key)
	return iotime.Stat{Category: c, Key: key, Calls: calls, Time: tm, Mean: tm / float64(calls), MeanSize: size, MeanGap: gap, Bytes: int64(size) * calls}
}

func TestPredictEquations(t *testing.T) {
	prof := iotime.Summary{Categories: []iotime.Stat{
		stat("write/4K-64K/seq", 100, 2.0, 8192, 0),
		stat("sync/-/-", 10, 1.0, 0, 0),
		stat("open/-/-", 5, 0.1, 0, 0),
	}}
	ref := &Result{Schema: Schema, FS: "ext4", Categories: []CatResult{{Category: "write/4K-64K/seq", MeanS: 1e-5}, {Category: "sync/-/-", MeanS: 1e-3}}}
	tgt := &Result{Schema: Schema, FS: "tmpfs", Categories: []CatResult{{Category: "write/4K-64K/seq", MeanS: 5e-6}, {Category: "sync/-/-", MeanS: 1e-6}}}
	act := iotime.Summary{Categories: []iotime.Stat{stat("write/4K-64K/seq", 100, 1.2, 8192, 0), stat("sync/-/-", 10, 0.002, 0, 0), stat("close/-/-", 5, 0.05, 0, 0)}}
	p := Predict(prof, ref, tgt, &act, PredictOptions{})
	// eq. 2: 0.5·2 + 0.001·1 + 1·0.1 (open not benchmarked: ratio 1)
	if math.Abs(p.Predicted-1.101) > 1e-12 || p.RefTotal != 3.1 {
		t.Fatalf("predicted %v ref %v", p.Predicted, p.RefTotal)
	}
	if math.Abs(*p.Actual-1.252) > 1e-12 {
		t.Fatalf("actual %v", *p.Actual)
	}
	// eq. 3
	if want := 100 * (1.101 - 1.252) / 1.252; math.Abs(*p.ErrorPct-want) > 1e-9 {
		t.Fatalf("error %v want %v", *p.ErrorPct, want)
	}
	if c := p.Categories[0]; c.Category != "write/4K-64K/seq" || c.Ratio != 0.5 || math.Abs(*c.ErrorPct-100*(1-1.2)/1.2) > 1e-9 {
		t.Fatalf("write category %+v", c)
	}
	if math.Abs(p.Unbenchmarked-0.1/3.1) > 1e-12 {
		t.Fatalf("unbenchmarked %v", p.Unbenchmarked)
	}
	// tracer overhead: 1e-4 s per call, taken out of the reference
	// before scaling and added back
	q := Predict(prof, ref, tgt, &act, PredictOptions{Overhead: 1e-4})
	if want := 0.5*(2-100e-4) + 100e-4 + 0.001*(1-10e-4) + 10e-4 + 0.1; math.Abs(q.Predicted-want) > 1e-12 {
		t.Fatalf("with overhead: %v want %v", q.Predicted, want)
	}
	// calibrated: δ_write = 2/100 − 1e-5, δ_sync = 0.1 − 1e-3; the
	// call-weighted median is δ_write
	c := Predict(prof, ref, tgt, &act, PredictOptions{Calibrated: true})
	if d := 0.02 - 1e-5; math.Abs(c.Overhead-d) > 1e-15 {
		t.Fatalf("calibrated δ %v want %v", c.Overhead, d)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, p); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b.Bytes()) {
		t.Fatal("invalid JSON")
	}
}

func TestRunAllOps(t *testing.T) {
	prof := iotime.Summary{Categories: []iotime.Stat{
		stat("read/4K-64K/seq", 10, 0.01, 16384, 1e-5),
		stat("read/<4K/rand", 10, 0.01, 512, 0),
		stat("write/64K-1M/seq", 10, 0.01, 128<<10, 0),
		stat("write/<4K/rand", 10, 0.01, 100, 0),
		stat("sync/-/-", 2, 0.01, 0, 0),
		stat("fdatasync/-/-", 2, 0.01, 4096, 0),
		stat("create/-/-", 3, 0.01, 8192, 0),
		stat("copy/>=1M/seq", 3, 0.01, 1<<20, 0),
		stat("open/-/-", 3, 0.01, 0, 0),
		stat("close/-/-", 3, 0.01, 0, 0),
		stat("seek/-/-", 3, 0.01, 0, 0),
		stat("stat/-/-", 3, 0.01, 0, 0),
		stat("mmap/-/-", 3, 0.01, 8192, 0),
	}}
	for _, direct := range []bool{false, true} {
		o := DefaultOptions()
		o.Dir, o.MinCalls, o.MaxCalls, o.Reps, o.Direct, o.DropCache, o.Fsync, o.MaxGap = t.TempDir(), 4, 8, 2, direct, true, direct, time.Millisecond
		r, err := Run(context.Background(), prof, o)
		if err != nil {
			t.Fatal(err)
		}
		if r.Schema != Schema || len(r.Categories) != len(prof.Categories) {
			t.Fatalf("%+v", r)
		}
		for _, c := range r.Categories {
			if c.MeanS <= 0 || c.MinS > c.MeanS || c.Calls != 4 && c.Calls != 8 {
				t.Errorf("direct=%v %+v", direct, c)
			}
		}
		t.Logf("fs %s direct=%v: %+v", r.FS, direct, r.Categories[0])
	}
}

// TestPredictOptionsText: the statistic and the overhead by name, as
// iopredict's --stat and --overhead give them.
func TestPredictOptionsText(t *testing.T) {
	for _, tc := range []struct {
		stat, overhead string
		want           PredictOptions
	}{
		{"mean", "0", PredictOptions{}},
		{"median", "auto", PredictOptions{Median: true, Overhead: -1}},
		{"mean", "calibrated", PredictOptions{Calibrated: true}},
		{"median", "3us", PredictOptions{Median: true, Overhead: 3e-6}},
	} {
		// start from other values: each setter sets its fields whole
		o := PredictOptions{Median: tc.stat == "mean", Overhead: 7, Calibrated: tc.overhead != "calibrated"}
		if err := o.SetStat(tc.stat); err != nil {
			t.Fatal(err)
		}
		if err := o.SetOverhead(tc.overhead); err != nil {
			t.Fatal(err)
		}
		if o != tc.want {
			t.Errorf("%s %s: %+v, want %+v", tc.stat, tc.overhead, o, tc.want)
		}
	}
	var o PredictOptions
	for _, bad := range []string{"mode", ""} {
		if o.SetStat(bad) == nil {
			t.Errorf("stat %q accepted", bad)
		}
	}
	for _, bad := range []string{"-1us", "soon", ""} {
		if o.SetOverhead(bad) == nil {
			t.Errorf("overhead %q accepted", bad)
		}
	}
}

// TestRunRefuses: nothing to replay, or no directory to replay it in, is
// an error before anything is written.
func TestRunRefuses(t *testing.T) {
	o := DefaultOptions()
	o.Dir = t.TempDir()
	if _, err := Run(context.Background(), iotime.Summary{}, o); !errors.Is(err, ErrEmptyProfile) {
		t.Fatalf("empty profile: %v", err)
	}
	prof := iotime.Summary{Categories: []iotime.Stat{stat("read/<4K/seq", 1, 0.001, 512, 0)}}
	for _, dir := range []string{"/nonexistent", "iobench_test.go"} {
		o.Dir = dir
		if _, err := Run(context.Background(), prof, o); err == nil || err.Error() != dir+": not a directory" || CheckDir(dir) == nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
	if err := CheckDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

// TestReadResultRefuses: a benchmark file whose times are no times, or
// that gives a category twice, is refused naming the file; a category the
// target measured at 0 s is not benchmarked (ratio 1), not a ratio of 0.
func TestReadResultRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, cats, err string }{
		{"negative", `[{"category":"sync/-/-","mean_s":-1}]`, `category "sync/-/-": mean_s -1 is not a time`},
		{"twice", `[{"category":"sync/-/-","mean_s":1e-3},{"category":"sync/-/-","mean_s":5}]`, `category "sync/-/-" given twice`},
	} {
		path := filepath.Join(dir, tt.name+".json")
		if err := os.WriteFile(path, []byte(`{"schema":"`+Schema+`","categories":`+tt.cats+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadResult(path); err == nil || err.Error() != path+": "+tt.err {
			t.Errorf("%s: %v, want %s: %s", tt.name, err, path, tt.err)
		}
	}
	prof := iotime.Summary{Categories: []iotime.Stat{stat("sync/-/-", 10, 1.0, 0, 0)}}
	ref := &Result{Schema: Schema, Categories: []CatResult{{Category: "sync/-/-", MeanS: 1e-3}}}
	tgt := &Result{Schema: Schema, Categories: []CatResult{{Category: "sync/-/-"}}}
	if p := Predict(prof, ref, tgt, nil, PredictOptions{}); p.Predicted != 1 || p.Categories[0].Benchmarked {
		t.Errorf("target at 0 s: predicted %v, %+v", p.Predicted, p.Categories[0])
	}
}
