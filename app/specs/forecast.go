package specs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/report"
	"github.com/tracecast/tracecast/stages/energy"
	stage "github.com/tracecast/tracecast/stages/forecast"
	"github.com/tracecast/tracecast/stages/signal"
)

// Steps reads the step function of a class (idle, compute, ...) of a
// trace: what forecasts of that class are scored against; without whole,
// its first step and end only (R, start, span: what forecasting needs, in
// memory that does not grow with the trace).
func (r Runner) Steps(ctx context.Context, t Trace, rules, class string, workers int, whole bool) (*fc.Steps, error) {
	s := stage.NewStepsSink(rules, class, "", workers)
	if !whole {
		s.FirstOnly()
	}
	spec := pipelines.Spec{Name: "steps", Sources: []pipelines.Node{t.Source()}, Sinks: []pipelines.Node{collect("steps", "trace")}}
	if err := r.Run(ctx, spec, map[string]tracecast.Sink{"steps": s}); err != nil {
		return nil, err
	}
	steps, err := s.Steps()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	return steps, nil
}

// Forecasts are the options of the forecast stage, and where its records
// go.
type Forecasts struct {
	Rules, Method string
	Queries       []string
	Threshold     float64  // opportunity_threshold
	Horizons      []string `flag:"horizon" help:"the consumer's horizon H, a duration with a unit: 500us, 10ms, 2s (repeatable; default: 0.1%, 1% and 10% of the run)"`
	Every         string   `flag:"every" help:"issue a forecast every this much trace time, a duration with a unit (default: the shortest horizon / 10)"`
	Coverage      float64  `flag:"coverage" help:"probability the interval [lo, hi] is meant to have of containing the outcome of p"`
	RunID         string   `flag:"run-id" help:"names the run in every id (default: DIR/NAME-HASH, the trace's directory and file name and a hash of its absolute path and first MiB; stdin from standard input)"`
	Workers       int      `flag:"workers" help:"R, the selected containers (default: counted in a first pass over the file; required on standard input)"`
	RegimeAlpha   float64  `flag:"regime-alpha" help:"regime-change episodes: the test's false-alarm level per window of the longest horizon (0: none)"`
	// Records go to Out/{forecasts,outcomes,episodes,skills}.Format (jsonl,
	// the default, arrow or parquet), or as JSON lines on standard output
	// when Out is empty — unless Format is empty and Terminal set: then
	// they are kept for a summary.
	Out      string
	Format   string `flag:"format" help:"jsonl (forecasts and outcomes as JSON lines; the default when standard output is not a terminal), arrow or parquet (both need -o DIR; with --window, the tables of -o DIR: arrow, the default, or parquet)"`
	Terminal bool
	// Score scores the forecasts against the trace (a file), and writes the
	// scores to Out/scores.jsonl.
	Score bool
	// Explain prints, after the run, what carried the auto method's
	// forecasts (and writes Out/explain.jsonl).
	Explain bool `flag:"explain" help:"say what carried the forecasts (method auto): per query and horizon, each expert's mean weight in the mix and MSE, each feature's permutation importance; a table after the scores, DIR/explain.jsonl with -o (docs/forecasts.md)"`
}

// ForecastRun is what a forecast run gives its command.
type ForecastRun struct {
	RunID, Method string
	// Keep: the records were kept for a summary, not written.
	Keep bool
	Kept stage.Kept // the forecasts and episodes, with Keep or Score
	// Scores are the forecasts' scores (with Keep or Score, when the
	// trace was a file).
	Scores []fc.Score
	Scored bool
	// Threshold and Score are the options'.
	Threshold float64
	Score     bool
	// Explained are the explanation records, with Explain.
	Explained stage.Explained
	Explain   bool
}

// Report writes what the predict command prints after a run: with the
// records kept for a summary, the summary on out (from standard input, how
// to score them); scored without, the score table on errw.
func (run *ForecastRun) Report(out, errw io.Writer) error {
	w := errw // the tables' writer: standard error unless kept for a summary
	if run.Keep {
		w = out
	}
	if err := run.report(out, errw); err != nil || !run.Explain {
		return err
	}
	if run.Keep || run.Score {
		fmt.Fprintln(w)
	}
	return fc.WriteExplanations(w, run.Explained.Records)
}

func (run *ForecastRun) report(out, errw io.Writer) error {
	switch {
	case !run.Keep && !run.Score:
		return nil
	case !run.Scored: // standard input: nothing to score against
		_, err := fmt.Fprintf(out, "%d forecasts of run %s (method %s); score them with: tracecast verify TRACE FORECASTS.jsonl\n", len(run.Kept.Forecasts), run.RunID, run.Method)
		return err
	case run.Keep:
		return fc.WriteSummary(out, fc.Summary{Forecasts: len(run.Kept.Forecasts), Run: run.RunID, Method: run.Method,
			Scores: run.Scores, Threshold: run.Threshold, Opened: run.Kept.Opened})
	}
	return fc.WriteTable(errw, run.Scores)
}

// Forecast runs the forecast stage on the trace. A file is read twice —
// first for R, the run's span (default horizons) and what the forecasts
// are scored against — or once, where no score is asked and R and the
// span are what the file's beginning and end say (predictOnce).
func (r Runner) Forecast(ctx context.Context, t Trace, o Forecasts) (*ForecastRun, error) {
	run := &ForecastRun{RunID: o.RunID, Method: o.Method, Threshold: o.Threshold, Score: o.Score, Explain: o.Explain}
	if o.Explain && o.Method != string(fc.Auto) {
		return nil, &OptionError{Msgs: []string{fmt.Sprintf("--explain explains method auto's mix of experts, not --method %s", o.Method)}}
	}
	switch o.Format {
	case "":
		run.Keep, o.Format = o.Out == "" && o.Terminal, "jsonl"
	case "jsonl":
	case "arrow", "parquet":
		if o.Out == "" {
			return nil, &OptionError{Msgs: []string{fmt.Sprintf("--format %s needs -o DIR", o.Format)}}
		}
	default:
		return nil, &OptionError{Msgs: []string{fmt.Sprintf("--format %q: want jsonl, arrow or parquet", o.Format)}}
	}
	if t.Path == "-" && o.Score {
		return nil, &OptionError{Msgs: []string{"--verify reads the trace twice: give a file, not standard input"}}
	}
	if t.Path == "-" && o.Workers == 0 {
		// R is counted in a first pass over a file; on standard input it
		// would grow as workers appear, and the first forecasts (and what
		// auto learns from them) would not be the file's.
		return nil, &OptionError{Msgs: []string{"--workers R is required on standard input (R, the selected containers, is counted in a first pass over a file; give the file, or R)"}}
	}
	if run.RunID == "" { // the forecast stage's own default on a file
		run.RunID = stage.StreamRunID(t.Path, true)
	}
	var steps *fc.Steps
	if t.Path == "-" {
		if len(o.Horizons) == 0 {
			o.Horizons = stage.DefaultStageConfig().Horizons
		}
	} else {
		if !o.Score && !run.Keep {
			done, measured, err := r.predictOnce(ctx, t, o, run)
			if err != nil {
				return nil, err
			} else if done {
				return run, nil
			}
			steps = measured // the guess did not hold: the pass measured them
		}
		if steps == nil {
			var err error
			// The whole step function only to score, or for the
			// terminal's summary.
			if steps, err = r.Steps(ctx, t, o.Rules, queryClass(o.Queries), o.Workers, o.Score || run.Keep); err != nil {
				return nil, err
			}
		}
		o = r.withSteps(o, steps)
	}
	spec, sinks := forecastSpec(t, o, run, o.Out, "-")
	if err := r.Run(ctx, spec, sinks); err != nil || (!run.Keep && !o.Score) || steps == nil {
		return run, err
	}
	var err error
	if run.Scores, err = fc.VerifyAt(steps, run.Kept.Forecasts, o.Coverage); err != nil {
		return nil, err
	}
	r.warnUnscored(steps, run.Kept.Forecasts, run.Scores)
	run.Scored = true
	if o.Out == "" {
		return run, nil
	}
	return run, output.WriteFile(filepath.Join(o.Out, "scores.jsonl"), func(w io.Writer) error { return fc.WriteScores(w, run.Scores) })
}

// withSteps sets what o leaves to the trace from what a first pass
// measured: R (--workers, with a warning when the trace selects more) and
// the default horizons (0.1%, 1% and 10% of the run).
func (r Runner) withSteps(o Forecasts, steps *fc.Steps) Forecasts {
	if o.Workers == 0 {
		o.Workers = steps.R[0]
	} else if steps.Selected > o.Workers {
		// R counts every selected container (fractions would pass 1):
		// the stage grows R as they start.
		r.Log.Warn().Int("workers", o.Workers).Int("selected", steps.Selected).
			Msgf("--workers %d, but the trace selects %d containers: R grows to %d as they start", o.Workers, steps.Selected, steps.Selected)
	}
	if len(o.Horizons) == 0 {
		span := steps.End - steps.T[0]
		o.Horizons = stage.DefaultHorizons(span)
		r.Log.Info().Strs("horizons", o.Horizons).Str("run", fmt.Sprintf("%.3gs", span)).Msg("no --horizon: forecasting over 0.1%, 1% and 10% of the run")
	}
	return o
}

// forecastSpec is the forecast pipeline of o, its records written into
// dir (o.Out: the files of -o DIR) or, without o.Out, as JSON lines to
// stdout ("-": standard output), or kept in run.
func forecastSpec(t Trace, o Forecasts, run *ForecastRun, dir, stdout string) (pipelines.Spec, map[string]tracecast.Sink) {
	opts := map[string]any{"rules": o.Rules, "queries": o.Queries, "horizons": o.Horizons, "method": o.Method, "coverage": o.Coverage,
		"run_id": run.RunID, "opportunity_threshold": o.Threshold, "regime_alpha": o.RegimeAlpha, "workers": o.Workers, "explain": o.Explain}
	if o.Every != "" {
		opts["every"] = o.Every
	}
	spec := pipelines.Spec{Name: "predict", Sources: []pipelines.Node{t.Source()},
		Stages: []pipelines.Node{{ID: "forecast", Type: "forecast", Inputs: []string{"trace"}, Options: opts}}}
	sinks := map[string]tracecast.Sink{}
	if run.Keep || o.Score {
		spec.Sinks = append(spec.Sinks, collect("keep", "forecast"))
		sinks["keep"] = &run.Kept
	}
	if o.Explain {
		spec.Sinks = append(spec.Sinks, collect("explain", "forecast"))
		sinks["explain"] = &run.Explained
	}
	switch {
	case run.Keep:
	case o.Out == "":
		spec.Sinks = append(spec.Sinks, pipelines.Node{ID: "out", Type: "jsonl", Inputs: []string{"forecast"}, Options: map[string]any{"path": stdout}})
	default:
		for _, rec := range []string{"forecasts", "outcomes", "episodes", "skills"} {
			spec.Sinks = append(spec.Sinks, pipelines.Node{ID: rec, Type: o.Format, Inputs: []string{"forecast"},
				Options: map[string]any{"path": filepath.Join(dir, rec+"."+o.Format), "records": rec}})
		}
		if o.Explain {
			spec.Sinks = append(spec.Sinks, pipelines.Node{ID: "explanations", Type: "jsonl", Inputs: []string{"forecast"},
				Options: map[string]any{"path": filepath.Join(dir, "explain.jsonl"), "records": "explanations"}})
		}
	}
	return spec, sinks
}

// warnUnscored says which (query, horizon) groups of forecasts have no
// score: none of their intervals lies within the run (from its first state
// start to its last state end: a horizon longer than the run, say), so
// their outcomes are unknown. The
// score table and records leave them out; without a word, an empty table
// reads as a failure.
func (r Runner) warnUnscored(steps *fc.Steps, fs []tracecast.Forecast, scores []fc.Score) {
	type key struct {
		q string
		h float64
	}
	scored := map[key]bool{}
	for _, s := range scores {
		scored[key{s.Query, s.Horizon}] = true
	}
	for _, f := range fs {
		if k := (key{f.Query, f.Horizon}); !scored[k] {
			scored[k] = true
			r.Log.Warn().Str("query", f.Query).Str("horizon", fc.HorizonLabel(f.Horizon)).Str("run", fmt.Sprintf("%.3gs", steps.End-steps.T[0])).
				Msg("no forecast scored: none of their intervals lies within the run, from its first state start to its last state end (a horizon longer than the run?)")
		}
	}
}

// queryClass is the class the queries count (the forecast stage allows one
// class per stage), the one their forecasts are scored against: idle by
// default, and for queries the stage will refuse (it says why).
func queryClass(queries []string) string {
	for _, q := range queries {
		if pq, err := fc.ParseQuery(q); err == nil {
			if _, err := signal.ParseClass(pq.Class); err == nil {
				return pq.Class
			}
		}
	}
	return "idle"
}

// ReportPower are the HTML report's power streams: with any, the page
// has an energy section, attributed as tracecast energy does.
type ReportPower struct {
	Powers []string `flag:"power" help:"power stream (plain or gzip; repeatable): adds the power chart and the energy by state"`
	Metric string   `flag:"metric" help:"with Kwollect input: keep only this metric_id (e.g. wattmetre_power_watt)"`
	Attribution
}

// inputs are the energy section's inputs (nil without power streams).
func (p ReportPower) inputs(lenient bool, rules string) (*report.EnergyInputs, error) {
	if len(p.Powers) == 0 {
		return nil, nil
	}
	m, err := energy.ParseMap(p.Map)
	if err != nil {
		return nil, &OptionError{Msgs: []string{err.Error()}}
	}
	st := energy.DefaultStageConfig()
	st.Rules, st.Node, st.Map, st.NodeType = rules, p.Node, m, p.NodeType
	st.Offset, st.MaxGap, st.Lateness = tracecast.Seconds(p.Offset), tracecast.Seconds(p.MaxGap), tracecast.Seconds(p.Lateness)
	in := &report.EnergyInputs{Power: p.Powers, Format: p.PowerFormat, Metric: p.Metric, Lenient: lenient, Stage: st}
	if err := in.Validate(); err != nil {
		return nil, &OptionError{Msgs: []string{err.Error()}}
	}
	return in, nil
}

// Page reads the trace (and its power streams) into the HTML report's
// page (report.PageCollector), with forecasts over horizons (seconds; nil:
// 0.1%, 1% and 10% of the run).
func (r Runner) Page(ctx context.Context, t Trace, rules string, horizons []float64, power ReportPower) (*report.Page, error) {
	if t.Path == "-" {
		// The page's bins, R and the default horizons come from a first
		// pass over the file: memory does not grow with the trace.
		return nil, &OptionError{Msgs: []string{"report may read the trace twice (its run's span and containers first): give a file, not standard input"}}
	}
	survey, err := report.NewPageSurvey(rules)
	if err != nil {
		return nil, &OptionError{Msgs: []string{err.Error()}}
	}
	ein, err := power.inputs(t.Lenient, rules)
	if err != nil {
		return nil, err
	}
	o := report.PageOptions{Title: t.Path, Horizons: horizons}
	if g := guessPage(t, rules); g != nil {
		page, err := r.pagePass(ctx, t, ein, o, g.Collector, g)
		if err != nil || page != nil {
			return page, err
		}
		r.Log.Debug().Str("trace", t.Path).Msg("the report's survey was not what the file's beginning and end said: reading it again")
		survey = g.Survey()
	} else {
		first := pipelines.Spec{Name: "report-survey", Sources: []pipelines.Node{t.Source()}, Sinks: []pipelines.Node{collect("survey", "trace")}}
		if err := r.Run(ctx, first, map[string]tracecast.Sink{"survey": survey}); err != nil {
			return nil, err
		}
	}
	return r.pagePass(ctx, t, ein, o, survey.Collector, nil)
}

// pagePass reads the trace (and its power streams) into a page collector
// made by collector. With a guess (the single pass) the page is nil, with
// no error, when the guess did not hold.
func (r Runner) pagePass(ctx context.Context, t Trace, ein *report.EnergyInputs, o report.PageOptions,
	collector func(report.PageOptions) (*report.PageCollector, error), guess *report.PageGuess) (*report.Page, error) {
	spec := pipelines.Spec{Name: "report", Sources: []pipelines.Node{t.Source()}, Sinks: []pipelines.Node{collect("page", "trace")}}
	sinks := map[string]tracecast.Sink{}
	if ein != nil {
		if err := ein.AddTo(&spec, "trace", "energy-page"); err != nil {
			return nil, &OptionError{Msgs: []string{err.Error()}}
		}
		o.Energy = report.NewEnergyPageCollector(*ein)
		sinks["energy-page"] = o.Energy
	}
	c, err := collector(o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	ps := newPageSink(c)
	ps.guess = guess
	sinks["page"] = ps
	if err := r.Run(ctx, spec, sinks); err != nil {
		return nil, err
	}
	if guess != nil && !guess.Holds() {
		return nil, nil
	}
	return c.Page()
}

// pageSink runs the two halves of the page collector's Write (the Gantt
// chart's, and the class counts' with the forecasts) on two goroutines,
// and the spell overlay's forecaster on a third (SpellsAsync): alone, the
// collector took longer than the reader on the second pass; then the
// Gantt chart's half, with the spell forecaster in it, did (12.1 of 16 s
// of CPU samples on the 2.1 GB trace, the reader 5.2).
type pageSink struct {
	c *report.PageCollector
	// spells takes the forecaster's batches (two queued at most: its
	// memory stays bounded when it falls behind), done closes when the
	// goroutine has run them all; started once the first came.
	spells  chan func()
	done    chan struct{}
	started bool
	err     error // a panic of the forecaster, as Close returns it
	// guess, in the single pass, surveys each batch before the collector
	// sees it; off once a batch said the guess is wrong: the collector
	// sees no more, and is not closed.
	guess *report.PageGuess
	off   bool
}

func newPageSink(c *report.PageCollector) *pageSink {
	p := &pageSink{c: c, spells: make(chan func(), 2), done: make(chan struct{})}
	// The goroutine starts with the first batch, not here: a run that
	// fails before its sinks write leaves none behind (Close is called
	// once a sink runs).
	c.SpellsAsync(func(f func()) {
		if !p.started {
			p.started = true
			go func() {
				defer close(p.done)
				defer func() {
					if r := recover(); r != nil {
						p.err = fmt.Errorf("report: the spell forecaster failed: %v", r)
						for range p.spells { // Close waits for the rest
						}
					}
				}()
				for f := range p.spells {
					f()
				}
			}()
		}
		p.spells <- f
	}, p.stopSpells)
	return p
}

// stopSpells waits for the spell forecaster's goroutine to run what it
// was given and end.
func (p *pageSink) stopSpells() {
	if p.started {
		close(p.spells)
		<-p.done
		p.started = false
	}
}

func (p *pageSink) Write(_ context.Context, b tracecast.Batch) error {
	if p.guess != nil && !p.guess.Write(b) {
		p.off = true
	}
	if p.off {
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.c.WriteCounts(b)
	}()
	p.c.WriteStates(b)
	<-done
	return nil
}

// ForgetsItems: the collector keeps nothing of a batch.
func (p *pageSink) ForgetsItems() bool { return true }

func (p *pageSink) Close(ctx context.Context) error {
	if p.guess != nil && (p.off || !p.guess.Holds()) {
		p.stopSpells() // the page is read again: this one is not drawn
		return p.err
	}
	if err := p.c.Close(ctx); err != nil {
		return err
	}
	return p.err
}

// Verify scores the forecast records of a JSON-lines file (other records
// skipped) against the trace: those of run (all of them when run is "",
// which must then be one run, the trace's: its run id as predict names
// it, or as a tailed file's stream names it).
func (r Runner) Verify(ctx context.Context, t Trace, rules string, workers int, forecasts, run string) ([]fc.Score, error) {
	in, name, closeIn, err := input.Open(forecasts)
	if err != nil {
		return nil, err
	}
	fs, err := fc.ReadForecasts(in, name)
	closeIn()
	if err != nil {
		return nil, err
	}
	var runs []string
	for _, f := range fs {
		if !slices.Contains(runs, f.Run) {
			runs = append(runs, f.Run)
		}
	}
	quoted := func(runs []string) string {
		q := make([]string, len(runs))
		for i, r := range runs {
			q[i] = strconv.Quote(r)
		}
		if len(q) > 5 {
			q = append(q[:5], "...")
		}
		return strings.Join(q, ", ")
	}
	switch trace := stage.StreamRunID(t.Path, true); {
	case run != "":
		if !slices.Contains(runs, run) {
			return nil, fmt.Errorf("%s: no forecast of run %q (runs: %s)", name, run, quoted(runs))
		}
		fs = slices.DeleteFunc(fs, func(f tracecast.Forecast) bool { return f.Run != run })
	case len(runs) > 1:
		return nil, fmt.Errorf("%s: forecasts of %d runs (%s): give --run R to score one run's against %s", name, len(runs), quoted(runs), t.Path)
	case runs[0] != trace && runs[0] != stage.RunID(t.Path):
		return nil, fmt.Errorf("%s: forecasts of run %s, not of %s (run %q): give the forecasts of this trace, or --run %s to score them against it anyway (a run named by --run-id, a Kafka key)",
			name, strconv.Quote(runs[0]), t.Path, trace, runs[0])
	}
	// Each class's forecasts against that class's step function.
	var classes []string
	for _, f := range fs {
		if !slices.Contains(classes, f.Class) {
			classes = append(classes, f.Class)
		}
	}
	var scores []fc.Score
	for _, class := range classes {
		if _, err := signal.ParseClass(class); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		steps, err := r.Steps(ctx, t, rules, class, workers, true)
		if err != nil {
			return nil, err
		}
		R := slices.Max(steps.R)
		of := slices.DeleteFunc(slices.Clone(fs), func(f tracecast.Forecast) bool { return f.Class != class })
		for _, f := range of {
			if f.Workers > R {
				return nil, fmt.Errorf("%s: forecast %s is for %d containers, %s has %d selected: forecasts of another trace, or other --rules or --workers",
					name, f.ID, f.Workers, t.Path, R)
			}
		}
		s, err := fc.Verify(steps, of)
		if err != nil {
			return nil, err
		}
		r.warnUnscored(steps, of, s)
		scores = append(scores, s...)
	}
	// Sorted by query and horizon, as Verify sorts one class's.
	slices.SortStableFunc(scores, func(a, b fc.Score) int {
		if a.Query != b.Query {
			return strings.Compare(a.Query, b.Query)
		}
		return cmp.Compare(a.Horizon, b.Horizon)
	})
	return scores, nil
}

// WriteReport writes the trace's HTML report to out, with forecasts over
// horizons (durations with a unit; none: 0.1%, 1% and 10% of the run) and
// the energy section of the power streams; sections add to the page
// before it is written (the task models of a StarPU sampling directory).
func (r Runner) WriteReport(ctx context.Context, t Trace, rules string, horizons []string, power ReportPower, out string, sections ...func(*report.Page)) error {
	if out == "" {
		return &OptionError{Msgs: []string{"-o report.html is required"}}
	}
	var hs []float64
	for _, h := range horizons {
		s, err := stage.ParseDuration(h)
		if err != nil {
			return &OptionError{Msgs: []string{"--horizon: " + err.Error()}}
		}
		hs = append(hs, s)
	}
	page, err := r.Page(ctx, t, rules, hs, power)
	if err != nil {
		return err
	}
	for _, add := range sections {
		add(page)
	}
	return output.WriteFile(out, page.WriteHTML)
}

// explanations reads, when explain, the explanation records of the runs
// scored from the forecasts' file, or from explain.jsonl beside it
// (predict -o DIR).
func explanations(forecasts string, scores []fc.Score, explain bool) ([]tracecast.Explanation, error) {
	if !explain {
		return nil, nil
	}
	files := []string{forecasts}
	if forecasts != "-" {
		files = append(files, filepath.Join(filepath.Dir(forecasts), "explain.jsonl"))
	}
	for i, file := range files {
		var xs []tracecast.Explanation
		err := func() error {
			in, name, closeIn, err := input.Open(file)
			if err != nil {
				return err
			}
			defer closeIn()
			xs, err = fc.ReadExplanations(in, name)
			return err
		}()
		if i > 0 && errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
		xs = slices.DeleteFunc(xs, func(x tracecast.Explanation) bool {
			return !slices.ContainsFunc(scores, func(s fc.Score) bool { return s.Run == x.Run })
		})
		if len(xs) > 0 {
			return xs, nil
		}
	}
	return nil, fmt.Errorf("--explain: no explanation record of the run scored in %s: forecast with predict --explain (-o DIR writes DIR/explain.jsonl) or a forecast stage with explain: true", strings.Join(files, " or "))
}
