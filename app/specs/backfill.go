package specs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	bf "github.com/tracecast/tracecast/backfill"

	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/report"
	arrowsink "github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/sinks/parquet"
	stage "github.com/tracecast/tracecast/stages/backfill"
	fstage "github.com/tracecast/tracecast/stages/forecast"
)

// Backfill are the backfill command's options (bf.Config's, as flags).
type Backfill struct {
	Rules    string
	Tasks    []float64
	Overhead float64
	Mode     string
	Gang     int
	Alphas   []float64
	Policies []string
	Timeouts []float64
	Every    float64
	Spells   []float64
	RunID    string
	// Plans also writes the forecast policy's plans (tracecast.plan/1).
	Plans bool
	// Out is the output directory ("": decisions as JSON lines on
	// Decisions when it is set), Format its records' format (jsonl, the
	// default, arrow or parquet).
	Out       string
	Format    string
	Decisions io.Writer
}

// Backfill replays a trace file through the backfill engine: a first pass
// for the workers and the run's start, a second that runs every policy —
// or one pass, where the workers and the start are what the file's
// beginning says (backfillOnce). It writes the decisions (and spell
// forecasts) as they come, and returns the table.
func (r Runner) Backfill(ctx context.Context, t Trace, o Backfill) (*bf.Result, error) {
	if t.Path == "-" {
		return nil, &OptionError{Msgs: []string{"backfill reads the trace twice (the workers, then the policies): give a file, not standard input"}}
	}
	res, survey, err := r.backfillOnce(ctx, t, o)
	if err != nil || res != nil {
		return res, err
	}
	if survey == nil {
		survey = stage.NewSurvey(o.Rules, "")
		spec := pipelines.Spec{Name: "survey", Sources: []pipelines.Node{t.Source()}, Sinks: []pipelines.Node{collect("survey", "trace")}}
		if err := r.Run(ctx, spec, map[string]tracecast.Sink{"survey": survey}); err != nil {
			return nil, err
		}
	}
	if err := survey.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	res, _, err = r.backfillPass(ctx, t, o, survey, o.Out, o.Decisions, false)
	return res, err
}

// backfillPass runs the policies over the trace with the workers and
// start of survey, writing the records into dir (-o DIR) or to decisions.
// With measure, the pass also surveys the trace (returned, closed) for the
// caller to check survey against; then the table's files are left to the
// caller, and End is the measured one.
func (r Runner) backfillPass(ctx context.Context, t Trace, o Backfill, survey *stage.Survey, dir string, decisions io.Writer, measure bool) (*bf.Result, *stage.Survey, error) {
	run := o.RunID
	if run == "" {
		run = fstage.StreamRunID(t.Path, true)
	}
	format := o.Format
	if format == "" {
		format = "jsonl"
	}
	var outs []recordOut
	abort := func() {
		for _, r := range outs {
			r.abort()
		}
	}
	var dec, spl, pln recordOut
	switch {
	case o.Out != "":
		for _, name := range []string{"decisions", "spells", "plans"} {
			if name == "decisions" && len(o.Tasks) == 0 || name == "spells" && len(o.Spells) == 0 || name == "plans" && !o.Plans {
				continue // predict --spells launches nothing; backfill without --spells forecasts none
			}
			out, err := openRecords(filepath.Join(dir, name+"."+format), format, r.Log)
			if err != nil {
				abort()
				return nil, nil, err
			}
			outs = append(outs, out)
			switch name {
			case "decisions":
				dec = out
			case "spells":
				spl = out
			default:
				pln = out
			}
		}
	case decisions != nil:
		if format != "jsonl" {
			return nil, nil, &OptionError{Msgs: []string{fmt.Sprintf("--format %s needs -o DIR", format)}}
		}
		dec = &jsonOut{w: bufio.NewWriterSize(decisions, 1<<16)}
		spl, outs = dec, []recordOut{dec}
		if o.Plans {
			pln = dec
		}
	}
	var werr error
	put := func(out recordOut, rec any) {
		if out != nil && werr == nil {
			werr = out.put(ctx, rec)
		}
	}
	cfg := bf.Config{Run: run, Tasks: o.Tasks, Overhead: o.Overhead, Mode: bf.Mode(o.Mode), Gang: o.Gang, Alphas: o.Alphas,
		Policies: o.Policies, Timeouts: o.Timeouts, Every: o.Every, SpellLengths: o.Spells, KeepSpells: true}
	sink := bf.Sink{
		Decision: func(d tracecast.Decision) { put(dec, d) },
		Spell:    func(s tracecast.SpellForecast) { put(spl, s) }}
	if pln != nil {
		sink.Plan = func(p tracecast.Plan) { put(pln, p) }
	}
	eng, err := bf.New(cfg, sink)
	if err != nil {
		abort()
		return nil, nil, &OptionError{Msgs: strings.Split(err.Error(), "\n")}
	}
	feed := stage.NewFeed(eng, survey.Rules, survey.Unit, survey)
	spec := pipelines.Spec{Name: "backfill", Sources: []pipelines.Node{t.Source()}, Sinks: []pipelines.Node{collect("backfill", "trace")}}
	sinks := map[string]tracecast.Sink{"backfill": feed}
	var measured *stage.Survey
	if measure {
		measured = stage.NewSurvey(o.Rules, "")
		spec.Sinks = append(spec.Sinks, collect("survey", "trace"))
		sinks["survey"] = measured
	}
	if err := r.Run(ctx, spec, sinks); err != nil {
		abort()
		return nil, nil, err
	}
	end := survey.End
	if measured != nil {
		end = measured.End
	}
	res := eng.Finish(math.Max(feed.End(), end))
	for _, out := range outs {
		if werr == nil {
			werr = out.close(ctx)
		}
	}
	if werr != nil {
		abort()
		return nil, nil, werr
	}
	if !measure {
		return res, nil, r.writeTables(o.Out, res)
	}
	return res, measured, nil
}

// writeTables writes a backfill table's files into dir (none when dir is
// "").
func (r Runner) writeTables(dir string, res *bf.Result) error {
	if dir == "" {
		return nil
	}
	if len(res.Rows) > 0 { // predict --spells runs no policy
		if err := output.WriteFile(filepath.Join(dir, "values.jsonl"), func(w io.Writer) error { return WriteRows(w, res.Rows) }); err != nil {
			return err
		}
		if err := output.WriteFile(filepath.Join(dir, "values.svg"), func(w io.Writer) error { return WriteValuePlot(w, res) }); err != nil {
			return err
		}
	}
	if len(res.SpellScores) > 0 {
		if err := output.WriteFile(filepath.Join(dir, "spell_scores.jsonl"), func(w io.Writer) error { return writeSpellScores(w, res.SpellScores) }); err != nil {
			return err
		}
	}
	return nil
}

// recordOut is where the records of one kind go: JSON lines, Arrow or
// Parquet, written as they come (in batches for the tables).
type recordOut interface {
	put(ctx context.Context, rec any) error
	close(ctx context.Context) error
	abort()
}

func openRecords(path, format string, log zerolog.Logger) (recordOut, error) {
	switch format {
	case "jsonl":
		f, err := output.Open(path, output.Options{Logger: log})
		if err != nil {
			return nil, err
		}
		return &jsonOut{f: f, w: bufio.NewWriterSize(f, 1<<16)}, nil
	case "arrow":
		s, err := arrowsink.New(arrowsink.Options{Path: path, Logger: log})
		if err != nil {
			return nil, err
		}
		return &tableOut{s: s}, nil
	case "parquet":
		s, err := parquet.New(parquet.Options{Path: path, Logger: log})
		if err != nil {
			return nil, err
		}
		return &tableOut{s: s}, nil
	}
	return nil, &OptionError{Msgs: []string{fmt.Sprintf("--format %q: want jsonl, arrow or parquet", format)}}
}

// jsonOut writes JSON lines to a file (f) or a writer.
type jsonOut struct {
	f    *output.File
	w    *bufio.Writer
	line []byte
}

func (j *jsonOut) put(_ context.Context, rec any) error {
	j.line = append(rec.(interface{ AppendJSON([]byte) []byte }).AppendJSON(j.line[:0]), '\n')
	_, err := j.w.Write(j.line)
	return err
}

func (j *jsonOut) close(context.Context) error {
	if err := j.w.Flush(); err != nil || j.f == nil {
		return err
	}
	return j.f.Commit()
}

func (j *jsonOut) abort() {
	if j.f != nil {
		j.f.Abort()
	}
}

// tableOut writes records to an Arrow or Parquet sink in batches.
type tableOut struct {
	s interface {
		tracecast.Sink
		Abort() error
	}
	ds []tracecast.Decision
	ss []tracecast.SpellForecast
	ps []tracecast.Plan
}

const tableBatch = 4096

func (t *tableOut) put(ctx context.Context, rec any) error {
	switch r := rec.(type) {
	case tracecast.Decision:
		if t.ds = append(t.ds, r); len(t.ds) == tableBatch {
			return t.flush(ctx)
		}
	case tracecast.SpellForecast:
		if t.ss = append(t.ss, r); len(t.ss) == tableBatch {
			return t.flush(ctx)
		}
	case tracecast.Plan:
		if t.ps = append(t.ps, r); len(t.ps) == tableBatch {
			return t.flush(ctx)
		}
	}
	return nil
}

func (t *tableOut) flush(ctx context.Context) error {
	var items any
	switch {
	case len(t.ds) > 0:
		items, t.ds = t.ds, nil
	case len(t.ss) > 0:
		items, t.ss = t.ss, nil
	case len(t.ps) > 0:
		items, t.ps = t.ps, nil
	default:
		return nil
	}
	return t.s.Write(ctx, tracecast.Batch{Stream: "backfill", Items: items})
}

func (t *tableOut) close(ctx context.Context) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	return t.s.Close(ctx)
}

func (t *tableOut) abort() { _ = t.s.Abort() }

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
	return map[string]any{"record": "value", "policy": r.Policy, "mode": r.Mode, "d": r.D, "overhead": r.Overhead, "gang": r.Gang,
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
	if slices.ContainsFunc(res.Rows, func(r bf.Row) bool { return r.Value > 1 }) {
		fmt.Fprintln(w, "V > 1: a score above the oracle's (wait mode at a small α: overrunning tasks earn more than their delay costs, and the oracle never overruns)")
	}
	if _, err := fmt.Fprintf(w, "%d idle spells, %.4g idle worker-seconds; * sees the outcome (a reference, not causal); V = (S − S_ref)/(S_oracle − S_ref), S_ref the better of never and greedy\n",
		res.Spells, res.IdleWorkerSeconds); err != nil {
		return err
	}
	if len(res.SpellScores) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return WriteSpellScores(w, res.SpellScores)
}

// WriteSpellScores writes the spell forecasts' score table.
func WriteSpellScores(w io.Writer, scores []bf.SpellScore) error {
	fmt.Fprintf(w, "spell forecasts: P(the spell lasts d more), Brier score against the residual baseline (the run's completed spells) and climatology (all its spells, with hindsight)\n")
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "spells\td\tforecasts\tBrier\tresidual\tskill\tclimatology\tskill\tR ≥ q10\tR ≥ q50\t\n")
	for _, sc := range scores {
		fmt.Fprintf(tw, "%s\t%g\t%d\t%.4f\t%.4f\t%s\t%.4f\t%s\t%.3f\t%.3f\t\n", sc.State, sc.D, sc.N, sc.Brier, sc.BrierResidual, signed(sc.SkillResidual),
			sc.BrierClimatology, signed(sc.SkillClimatology), sc.CoverageQ10, sc.CoverageQ50)
	}
	return tw.Flush()
}

func signed(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*f)
}

// writeSpellScores writes the spell forecasts' scores as JSON lines, one
// "spell_score" record per length d (NaN is null).
func writeSpellScores(w io.Writer, scores []bf.SpellScore) error {
	bw := bufio.NewWriter(w)
	num := func(f float64) any {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return f
	}
	for _, sc := range scores {
		var rel []map[string]any
		for i, b := range sc.Reliability {
			rel = append(rel, map[string]any{"bin": i, "n": b.N, "mean_p": num(b.MeanP), "observed": num(b.Observed)})
		}
		b, err := json.Marshal(map[string]any{"record": "spell_score", "state": sc.State, "d": sc.D, "n": sc.N, "brier": num(sc.Brier),
			"brier_residual": num(sc.BrierResidual), "brier_climatology": num(sc.BrierClimatology),
			"skill_residual": num(sc.SkillResidual), "skill_climatology": num(sc.SkillClimatology),
			"coverage_q10": num(sc.CoverageQ10), "coverage_q50": num(sc.CoverageQ50), "reliability": rel})
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
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

// ReportAlphas are the α the report's backfill section scores at: its
// plot draws V against them, its table shows ReportAlpha's rows.
var ReportAlphas = []float64{1, 3, 10, 30, 100}

// ReportAlpha is the α of the report's backfill table (the stage's
// default: a second of the primary's delay costs ten of back-end work).
const ReportAlpha = 10.0

// BackfillSection runs `backfill --mode wait` with back-end tasks of the
// given lengths at ReportAlphas on the trace (every policy; no records
// written) and returns what adds its table and value plot to a report.
func (r Runner) BackfillSection(ctx context.Context, t Trace, rules string, tasks []float64) (func(*report.Page), error) {
	res, err := r.Backfill(ctx, t, Backfill{Rules: rules, Tasks: tasks, Mode: string(bf.Wait), Alphas: ReportAlphas})
	if err != nil {
		return nil, err
	}
	return backfillSection(res)
}

// backfillSection is the report's section of a backfill result scored at
// ReportAlphas: the plot of every α, the table of ReportAlpha's rows.
func backfillSection(res *bf.Result) (func(*report.Page), error) {
	var svg bytes.Buffer
	if err := WriteValuePlot(&svg, res); err != nil {
		return nil, err
	}
	table := *res
	table.Rows = nil
	for _, row := range res.Rows {
		if row.Alpha == ReportAlpha {
			table.Rows = append(table.Rows, row)
		}
	}
	return func(p *report.Page) { p.SetBackfill(&table, svg.Bytes()) }, nil
}
