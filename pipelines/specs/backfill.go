package specs

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/tracecast/tracecast"
	bf "github.com/tracecast/tracecast/backfill"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/pipelines"
	stage "github.com/tracecast/tracecast/stages/backfill"
	fstage "github.com/tracecast/tracecast/stages/forecast"
)

// Backfill are the backfill command's options (bf.Config's, as flags).
type Backfill struct {
	Rules    string
	Tasks    []float64
	Overhead float64
	Mode     string
	Alphas   []float64
	Policies []string
	Timeouts []float64
	Every    float64
	Spells   []float64
	RunID    string
	// Out is the output directory ("": decisions as JSON lines on
	// Decisions when it is set).
	Out       string
	Decisions io.Writer
}

// Backfill replays a trace file through the backfill engine: a first pass
// for the workers and the run's start, a second that runs every policy. It
// writes the decisions (and spell forecasts) as they come, and returns the
// table.
func (r Runner) Backfill(ctx context.Context, t Trace, o Backfill) (*bf.Result, error) {
	if t.Path == "-" {
		return nil, &OptionError{[]string{"backfill reads the trace twice (the workers, then the policies): give a file, not standard input"}}
	}
	survey := stage.NewSurvey(o.Rules, "")
	spec := pipelines.Spec{Name: "survey", Sources: []pipelines.Node{t.Source()}, Sinks: []pipelines.Node{collect("survey", "trace")}}
	if err := r.Run(ctx, spec, map[string]tracecast.Sink{"survey": survey}); err != nil {
		return nil, err
	}
	if err := survey.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	run := o.RunID
	if run == "" {
		run = fstage.StreamRunID(t.Path, true)
	}
	var files []*output.File
	open := func(name string) (*bufio.Writer, error) {
		f, err := output.Open(filepath.Join(o.Out, name), output.Options{Logger: r.Log})
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		return bufio.NewWriterSize(f, 1<<16), nil
	}
	abort := func() {
		for _, f := range files {
			f.Abort()
		}
	}
	var dec, spl *bufio.Writer
	var err error
	switch {
	case o.Out != "":
		if dec, err = open("decisions.jsonl"); err != nil {
			return nil, err
		}
		if len(o.Spells) > 0 {
			if spl, err = open("spells.jsonl"); err != nil {
				abort()
				return nil, err
			}
		}
	case o.Decisions != nil:
		dec = bufio.NewWriterSize(o.Decisions, 1<<16)
		spl = dec
	}
	var line []byte
	var werr error
	put := func(w *bufio.Writer, rec interface{ AppendJSON([]byte) []byte }) {
		if w == nil || werr != nil {
			return
		}
		line = append(rec.AppendJSON(line[:0]), '\n')
		_, werr = w.Write(line)
	}
	cfg := bf.Config{Run: run, Tasks: o.Tasks, Overhead: o.Overhead, Mode: bf.Mode(o.Mode), Alphas: o.Alphas,
		Policies: o.Policies, Timeouts: o.Timeouts, Every: o.Every, SpellLengths: o.Spells, KeepSpells: true}
	eng, err := bf.New(cfg, bf.Sink{
		Decision: func(d tracecast.Decision) { put(dec, d) },
		Spell:    func(s tracecast.SpellForecast) { put(spl, s) }})
	if err != nil {
		abort()
		return nil, &OptionError{strings.Split(err.Error(), "\n")}
	}
	feed := stage.NewFeed(eng, survey.Rules, survey.Unit, survey)
	spec = pipelines.Spec{Name: "backfill", Sources: []pipelines.Node{t.Source()}, Sinks: []pipelines.Node{collect("backfill", "trace")}}
	if err := r.Run(ctx, spec, map[string]tracecast.Sink{"backfill": feed}); err != nil {
		abort()
		return nil, err
	}
	res := eng.Finish(math.Max(feed.End(), survey.End))
	for _, w := range []*bufio.Writer{dec, spl} {
		if w != nil && werr == nil {
			werr = w.Flush()
		}
	}
	if werr != nil {
		abort()
		return nil, werr
	}
	if o.Out != "" {
		for _, f := range files {
			if err := f.Commit(); err != nil {
				abort()
				return nil, err
			}
		}
		if err := output.WriteFile(filepath.Join(o.Out, "values.jsonl"), func(w io.Writer) error { return WriteRows(w, res.Rows) }); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// WriteRows writes a backfill table as JSON lines, one row each ("value"
// records: NaN is null).
func WriteRows(w io.Writer, rows []bf.Row) error {
	bw := bufio.NewWriter(w)
	for _, r := range rows {
		b, err := json.Marshal(rowJSON(r))
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func rowJSON(r bf.Row) map[string]any {
	num := func(f float64) any {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return f
	}
	return map[string]any{"record": "value", "policy": r.Policy, "mode": r.Mode, "d": r.D, "overhead": r.Overhead, "gang": 1,
		"alpha": r.Alpha, "timeout": num(r.Timeout), "launches": r.Launches, "completed": r.Completed,
		"harvest": r.Harvest, "waste": r.Waste, "delay": r.Delay, "score": r.Score, "value": num(r.Value),
		"oracle_harvest": r.OracleHarvest, "greedy_score": r.GreedyScore, "idle_worker_seconds": r.IdleWorkerSeconds, "causal": r.Causal}
}

// WriteTable writes the table a user reads: per task length and α, one
// line per policy.
func WriteTable(w io.Writer, res *bf.Result) error {
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "policy\td\tα\tlaunches\tU (s)\tW or D (s)\tU/U*\tU/idle\tloss ratio\tV(α)\t\n")
	for i, r := range res.Rows {
		if i > 0 && (r.D != res.Rows[i-1].D || r.Alpha != res.Rows[i-1].Alpha) {
			fmt.Fprintf(tw, "\t\t\t\t\t\t\t\t\t\t\n")
		}
		loss := r.Waste + r.Delay
		ratio := math.NaN()
		if r.Mode == string(bf.Kill) && r.Harvest+r.Waste > 0 {
			ratio = r.Waste / (r.Harvest + r.Waste)
		} else if r.Mode == string(bf.Wait) && r.Harvest > 0 {
			ratio = r.Delay / r.Harvest
		}
		name := r.Policy
		if !math.IsNaN(r.Timeout) {
			name += fmt.Sprintf(" (τ=%.3g s)", r.Timeout)
		}
		if !r.Causal {
			name += " *"
		}
		fmt.Fprintf(tw, "%s\t%g\t%g\t%d\t%.4g\t%.4g\t%s\t%s\t%s\t%s\t\n", name, r.D, r.Alpha, r.Launches, r.Harvest, loss,
			frac(r.Harvest, r.OracleHarvest), frac(r.Harvest, r.IdleWorkerSeconds), num3(ratio), num3(r.Value))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d idle spells, %.4g idle worker-seconds; * sees the outcome (a reference, not causal); V = (S − S_ref)/(S_oracle − S_ref), S_ref the better of never and greedy\n",
		res.Spells, res.IdleWorkerSeconds)
	return err
}

func frac(a, b float64) string {
	if !(b > 0) {
		return "-"
	}
	return fmt.Sprintf("%.3f", a/b)
}

func num3(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%.3f", f)
}
