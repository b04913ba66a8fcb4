package specs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	bf "github.com/tracecast/tracecast/backfill"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/pajetest"
	"github.com/tracecast/tracecast/report"
)

// writeWorkers writes a StarPU-like trace of 4 workers over steps
// instants, with the scheduler's ready-task count; late adds a fifth
// worker with states near the end, tailVar a count set after the last
// state ended (the workers destroyed before), bad a line no parser reads near the end.
func writeWorkers(t *testing.T, path string, steps int, late, tailVar, bad, gz bool) {
	t.Helper()
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	w.WriteString(pajetest.Header(
		pajetest.ContainerType(0), pajetest.StateType(1), pajetest.CreateContainer(2),
		pajetest.SetState(3), pajetest.PushState(4), pajetest.PopState(5),
		pajetest.VariableType(6), pajetest.SetVariable(7), pajetest.DestroyContainer(8),
	) + `0 P 0 Program
0 W P Worker
1 S W "Worker State"
6 R P "Number of Ready Tasks"
2 0 p P 0 program
`)
	workers := 4
	for k := range workers {
		fmt.Fprintf(w, "2 0 w%d W p CPU%d\n", k, k)
	}
	for i := range steps {
		t0 := float64(i)
		if late && i == steps-20 {
			fmt.Fprintf(w, "2 %.6f w%d W p CPU%d\n", t0, workers, workers)
			workers++
		}
		if bad && i == steps-10 {
			fmt.Fprintf(w, "3 %.6f S\n", t0)
		}
		fmt.Fprintf(w, "7 %.6f R p %d\n", t0, (i*7)%5)
		for k := range workers {
			switch (i + k) % 5 {
			case 0, 3:
				fmt.Fprintf(w, "3 %.6f S w%d Sleeping\n", t0, k)
			case 1:
				fmt.Fprintf(w, "3 %.6f S w%d GEMM\n", t0, k)
				fmt.Fprintf(w, "4 %.6f S w%d FetchingInput\n", t0+0.1, k)
				fmt.Fprintf(w, "5 %.6f S w%d\n", t0+0.3, k)
			default:
				fmt.Fprintf(w, "3 %.6f S w%d TRSM\n", t0+0.05*float64(k), k)
			}
		}
	}
	fmt.Fprintf(w, "3 %.6f S w0 Sleeping\n", float64(steps))
	if tailVar { // the workers' states end with them, before the count's last change
		for k := range workers {
			fmt.Fprintf(w, "8 %.6f W w%d\n", float64(steps)+1, k)
		}
		fmt.Fprintf(w, "7 %.6f R p 0\n", float64(steps)+5)
	}
	w.Flush()
	out := buf.Bytes()
	if gz {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(out)
		zw.Close()
		out = z.Bytes()
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameOutcome fails the test unless the one pass's error is the two
// passes', and tells whether the outputs are left to compare: a trace
// with a bad line must fail both.
func sameOutcome(t *testing.T, err, twice error, bad bool) bool {
	t.Helper()
	if fmt.Sprint(err) != fmt.Sprint(twice) {
		t.Fatalf("error %v, read twice %v", err, twice)
	}
	if bad && err == nil {
		t.Fatal("no error on a bad line")
	}
	if !bad && err != nil {
		t.Fatal(err)
	}
	return !bad
}

// TestPageSinglePass: the report reads a trace once where the survey
// guessed from its beginning and end holds, twice where it does not, and
// its page (or its error) is the page of two passes either way.
func TestPageSinglePass(t *testing.T) {
	defer func(h int) { guessHead = h }(guessHead)
	guessHead = 4 << 10   // the traces' containers are created within it; the late one after
	hs := []float64{0.02} // a forecast every 2 ms (the default's every 30 µs took seconds under -race)
	for _, tc := range []struct {
		name                   string
		late, tailVar, bad, gz bool
		guessed, holds         bool
	}{
		{name: "early containers", guessed: true, holds: true},
		{name: "a container created late", late: true, guessed: true},
		{name: "a count set after the last state", tailVar: true, guessed: true},
		{name: "a bad line after the head", bad: true, guessed: true},
		{name: "compressed", gz: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "w.trace")
			writeWorkers(t, path, 300, tc.late, tc.tailVar, tc.bad, tc.gz)
			tr := Trace{Path: path}
			g := guessPage(tr, "auto")
			if (g != nil) != tc.guessed {
				t.Fatalf("guessed: %v, want %v", g != nil, tc.guessed)
			}
			page, err := r.Page(ctx, tr, "auto", hs, ReportPower{})
			h := guessHead
			guessHead = 0
			want, wantErr := r.Page(ctx, tr, "auto", hs, ReportPower{})
			guessHead = h
			if !sameOutcome(t, err, wantErr, tc.bad) {
				return
			}
			var a, b bytes.Buffer
			if err := page.WriteHTML(&a); err != nil {
				t.Fatal(err)
			}
			if err := want.WriteHTML(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("the page (%d bytes) is not the page of two passes (%d bytes)", a.Len(), b.Len())
			}
			if g == nil {
				return
			}
			once, err := r.pagePass(ctx, tr, nil, report.PageOptions{Title: path, Horizons: hs}, g.Collector, g)
			if err != nil {
				t.Fatal(err)
			}
			if (once != nil) != tc.holds {
				t.Errorf("the guess held: %v, want %v", once != nil, tc.holds)
			}
		})
	}
}

// TestPredictSinglePass: predict reads a trace once where R and the run's
// span guessed from its beginning and end hold (or --workers and
// --horizon leave nothing to guess), twice where they do not or where the
// records would not fit the temporary file; the records (or the error)
// are those of two passes either way, on standard output and in -o DIR.
func TestPredictSinglePass(t *testing.T) {
	defer func(h int, m int64) { guessHead, spillMax = h, m }(guessHead, spillMax)
	guessHead = 4 << 10
	for _, tc := range []struct {
		name                   string
		late, tailVar, bad     bool
		workers                int
		horizons               []string
		spillMax               int64
		once, measured, stdout bool
	}{
		{name: "guess holds", once: true},
		{name: "guess holds, standard output", once: true, stdout: true},
		{name: "a container created late", late: true, measured: true},
		{name: "a container created late, standard output", late: true, measured: true, stdout: true},
		{name: "--workers and --horizon", late: true, workers: 4, horizons: []string{"20ms"}, once: true},
		{name: "--workers and --horizon, standard output", workers: 4, horizons: []string{"20ms"}, once: true, stdout: true},
		{name: "too many records for the temporary file", spillMax: 1000, stdout: true},
		{name: "a bad line after the head", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "w.trace")
			writeWorkers(t, path, 300, tc.late, tc.tailVar, tc.bad, false)
			tr := Trace{Path: path}
			spillMax = 128 << 20
			if tc.spillMax != 0 {
				spillMax = tc.spillMax
			}
			o := Forecasts{Rules: "auto", Queries: []string{"idle>=25%"}, Method: "auto", Coverage: 0.9, Format: "jsonl", Workers: tc.workers, Horizons: tc.horizons, Every: "1ms"}
			// predict: its records (standard output's, or -o DIR's files).
			predict := func(o Forecasts, guess bool) (string, error) {
				h := guessHead
				if !guess {
					guessHead = 0
				}
				defer func() { guessHead = h }()
				if tc.stdout {
					out, err := os.CreateTemp(dir, "stdout")
					if err != nil {
						t.Fatal(err)
					}
					defer out.Close()
					saved := os.Stdout
					os.Stdout = out
					_, err = r.Forecast(ctx, tr, o)
					os.Stdout = saved
					b, _ := os.ReadFile(out.Name())
					return string(b), err
				}
				o.Out = filepath.Join(dir, fmt.Sprintf("out-%v", guess))
				_, err := r.Forecast(ctx, tr, o)
				var all strings.Builder
				for _, f := range []string{"forecasts", "outcomes", "episodes", "skills"} {
					b, _ := os.ReadFile(filepath.Join(o.Out, f+".jsonl"))
					all.Write(b)
				}
				if left, _ := filepath.Glob(filepath.Join(o.Out, ".tracecast-predict-*")); len(left) > 0 {
					t.Errorf("left behind: %v", left)
				}
				return all.String(), err
			}
			got, err := predict(o, true)
			want, wantErr := predict(o, false)
			if !sameOutcome(t, err, wantErr, tc.bad) {
				return
			}
			if got != want || len(got) < 1000 {
				t.Errorf("the records (%d bytes) are not those of two passes (%d bytes)", len(got), len(want))
			}
			if !tc.stdout {
				o.Out = filepath.Join(dir, "direct")
				os.MkdirAll(o.Out, 0o755)
			}
			run := &ForecastRun{RunID: "x"}
			if tc.stdout {
				saved := os.Stdout
				os.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				defer func() { os.Stdout.Close(); os.Stdout = saved }()
			}
			done, measured, err := r.predictOnce(ctx, tr, o, run)
			if err != nil || done != tc.once || (measured != nil) != tc.measured {
				t.Errorf("predictOnce: done %v, measured %v, %v; want done %v, measured %v", done, measured != nil, err, tc.once, tc.measured)
			}
		})
	}
}

// TestBackfillSinglePass: backfill -o DIR reads a trace once where the
// workers and the run's start guessed from its beginning hold, twice where
// they do not (a worker first seen late) or where the records go to a
// writer; its files (or its error) are those of two passes either way.
func TestBackfillSinglePass(t *testing.T) {
	defer func(h int) { guessHead = h }(guessHead)
	guessHead = 4 << 10
	for _, tc := range []struct {
		name           string
		late, bad      bool
		once, measured bool
		writer         bool
	}{
		{name: "guess holds", once: true},
		{name: "a worker first seen late", late: true, measured: true},
		{name: "records to a writer", writer: true},
		{name: "a bad line after the head", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "w.trace")
			writeWorkers(t, path, 300, tc.late, false, tc.bad, false)
			tr := Trace{Path: path}
			o := Backfill{Rules: "auto", Tasks: []float64{0.005}, Mode: "wait", Alphas: []float64{10}, Spells: []float64{0.005}, Every: 0.01, Policies: []string{bf.Greedy}} // the plans of the forecast policy took seconds under -race
			run := func(guess bool) (string, error) {
				h := guessHead
				if !guess {
					guessHead = 0
				}
				defer func() { guessHead = h }()
				o := o
				var buf strings.Builder
				if tc.writer {
					o.Decisions = &buf
				} else {
					o.Out = filepath.Join(dir, fmt.Sprintf("out-%v", guess))
				}
				_, err := r.Backfill(ctx, tr, o)
				for _, f := range []string{"decisions.jsonl", "spells.jsonl", "values.jsonl", "spell_scores.jsonl"} {
					b, _ := os.ReadFile(filepath.Join(o.Out, f))
					buf.Write(b)
				}
				if left, _ := filepath.Glob(filepath.Join(o.Out, ".tracecast-backfill-*")); len(left) > 0 {
					t.Errorf("left behind: %v", left)
				}
				return buf.String(), err
			}
			got, err := run(true)
			want, wantErr := run(false)
			if !sameOutcome(t, err, wantErr, tc.bad) {
				return
			}
			if got != want || len(got) < 1000 {
				t.Errorf("the records (%d bytes) are not those of two passes (%d bytes)", len(got), len(want))
			}
			if tc.writer {
				o.Decisions = io.Discard
			} else {
				o.Out = filepath.Join(dir, "direct")
			}
			res, measured, err := r.backfillOnce(ctx, tr, o)
			if err != nil || (res != nil) != tc.once || (measured != nil) != tc.measured {
				t.Errorf("backfillOnce: done %v, measured %v, %v; want done %v, measured %v", res != nil, measured != nil, err, tc.once, tc.measured)
			}
		})
	}
}
