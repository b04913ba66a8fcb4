package specs

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	bf "github.com/tracecast/tracecast/backfill"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/report"
)

// The demo's backfill question: back-end tasks of demoTask seconds on the
// idle workers, the primary waiting for a task to end (wait mode), one
// second of its delay costing demoAlpha seconds of back-end work.
const (
	demoTask  = 0.010
	demoAlpha = 10.0
)

// Demo writes the StarPU trace built into the binary to dir, runs the
// built-in pipelines replay-starpu and idle-starpu on it (their outputs in
// dir/NAME/), the HTML report (dir/report.html, with the run's power
// stream built into the binary, and the forecasts and their skill) and the
// backfilling policies (dir/backfill/), and prints to w a summary — the
// forecasts' skill against the baselines and what the forecast policy's
// backfilling is worth first, the KS windows of the method tracecast
// started from in one line — and the files written.
func (r Runner) Demo(ctx context.Context, dir string, bar bool, w io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	trace := filepath.Join(dir, "starpu-cholesky-2cpu.trace.gz")
	if err := writeBytes(trace, pipelines.DemoTrace()); err != nil {
		return err
	}
	start := time.Now()
	replay, err := r.runBuiltin(ctx, "replay-starpu", trace, dir, bar)
	if err != nil {
		return err
	}
	took := time.Since(start)
	idle, err := r.runBuiltin(ctx, "idle-starpu", trace, dir, false)
	if err != nil {
		return err
	}
	var d demoSummary
	if err := readJSONFile(replay["records"], func(f io.Reader) (err error) { d.replay, err = report.ReadReplay(f, replay["records"]); return err }); err != nil {
		return err
	}
	if err := readJSONFile(idle["records"], func(f io.Reader) (err error) { d.ks, err = report.ReadPredictions(f, idle["records"]); return err }); err != nil {
		return err
	}
	// The page to look at: Gantt chart, occupancy, forecasts and their
	// skill, and energy from the run's power stream.
	power := ReportPower{Powers: []string{filepath.Join(dir, pipelines.DemoPowerName)}, Attribution: DefaultAttribution()}
	if err := writeBytes(power.Powers[0], pipelines.DemoPower()); err != nil {
		return err
	}
	bfDir := filepath.Join(dir, "backfill")
	if d.backfill, err = r.Backfill(ctx, Trace{Path: trace}, Backfill{Rules: "auto", Tasks: []float64{demoTask}, Mode: string(bf.Wait),
		Alphas: ReportAlphas, Out: bfDir}); err != nil {
		return err
	}
	addBackfill, err := backfillSection(d.backfill)
	if err != nil {
		return err
	}
	page, err := r.Page(ctx, Trace{Path: trace}, "auto", nil, power)
	if err != nil {
		return err
	}
	addBackfill(page)
	pagePath := filepath.Join(dir, "report.html")
	if err := output.WriteFile(pagePath, page.WriteHTML); err != nil {
		return err
	}
	d.skill = page.Skill
	if err := d.write(w, took); err != nil {
		return err
	}
	files := []map[string]string{replay, idle, {"backfill": filepath.Join(bfDir, "values.jsonl"), "decisions": filepath.Join(bfDir, "decisions.jsonl")}}
	for _, out := range files {
		for _, id := range slices.Sorted(maps.Keys(out)) {
			if _, err := fmt.Fprintf(w, "  %-12s %s\n", id, out[id]); err != nil {
				return err
			}
		}
	}
	_, err = fmt.Fprintf(w, "  %-12s %s (open it in a browser)\n", "report", pagePath)
	return err
}

// demoSummary is what the demo read back from its runs.
type demoSummary struct {
	replay   report.Replay
	ks       report.Predictions
	skill    []fc.Score
	backfill *bf.Result
}

// write prints the summary: the run, the forecasts' skill table, the
// backfill value, the KS windows.
func (d demoSummary) write(w io.Writer, took time.Duration) error {
	r := d.replay
	fmt.Fprintf(w, "tracecast demo: StarPU Cholesky, %d workers, %.0f ms of execution, read in %s\n", r.Workers, r.End, took.Round(time.Millisecond))
	fmt.Fprintf(w, "  records: %d containers, %d states, %d variables, %d events, %d links\n",
		r.ByNature["Container"], r.ByNature["State"], r.ByNature["Variable"], r.ByNature["Event"], r.ByNature["Link"])
	fmt.Fprintf(w, "  worker time by state (all imbrication levels):")
	for _, s := range r.TopStates(6) {
		fmt.Fprintf(w, " %s %.1f%%", s.Value, 100*s.Fraction)
	}
	fmt.Fprintln(w)
	if len(d.skill) > 0 {
		fmt.Fprintf(w, "  forecasts of %s over the next H, scored against what happened (skill = 1 − MSE/MSE of the baseline; above 0 beats it):\n", d.skill[0].Query)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "\tH\tforecasts\tMSE of p\tvs KS windows\tvs persistence\tvs climatology\t90%% interval coverage\t\n")
		for _, s := range d.skill {
			fmt.Fprintf(tw, "\t%s\t%d\t%.5f\t%s\t%s\t%s\t%.3f\t\n", fc.HorizonLabel(s.Horizon), s.N, s.MSEP,
				signedPct(s.SkillKSPaper), signedPct(s.SkillPersistence), signedPct(s.SkillClimatology), s.Coverage)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if line := d.backfillLine(); line != "" {
		fmt.Fprintln(w, line)
	}
	k := d.ks
	rate := "n/a" // no verdict: no rate, not 0 %
	if k.Verdicts > 0 {
		rate = fmt.Sprintf("%.1f%%", 100*float64(k.Hits)/float64(k.Verdicts))
	}
	_, err := fmt.Fprintf(w, "  KS windows (Pallipuram et al. 2014): %d windows of %.3g s, %d verdicts, hit rate %s; alerts: %d idle opportunities, %d regime changes\n",
		k.Windows, k.Horizon, k.Verdicts, rate, k.Alerts["idle-opportunity"], k.Alerts["regime-change"])
	return err
}

// backfillLine says what the forecast policy's backfilling is worth, next
// to the best fixed timeout chosen in hindsight ("" without the rows).
func (d demoSummary) backfillLine() string {
	if d.backfill == nil {
		return ""
	}
	value := map[string]float64{}
	for _, row := range d.backfill.Rows {
		if row.Alpha == demoAlpha {
			value[row.Policy] = row.Value
		}
	}
	v, ok := value[bf.Forecast]
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  backfilling %s back-end tasks on the idle workers (wait mode, α = %g), value V (1: the oracle's; 0: the better of never and greedy):\n", fc.HorizonLabel(demoTask), demoAlpha)
	fmt.Fprintf(&b, "    the forecast policy %s; the best fixed timeout, chosen in hindsight, %s", num(v), num(value[bf.HindsightTimeout]))
	return b.String()
}

func signedPct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "undefined"
	}
	return fmt.Sprintf("%.2f", x)
}

// readJSONFile opens path and hands it to read.
func readJSONFile(path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return read(f)
}
