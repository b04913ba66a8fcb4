package main

import (
	"errors"
	"fmt"
	"github.com/tracecast/tracecast/internal/paths"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracecast/tracecast/app/specs"
	bf "github.com/tracecast/tracecast/backfill"
	"github.com/tracecast/tracecast/internal/cliflags"
	fstage "github.com/tracecast/tracecast/stages/forecast"
)

// predictSpells is predict --spells: the spell forecasts of a trace, to
// standard output or DIR/spells.jsonl, and their scores.
func predictSpells(cmd *cobra.Command, t specs.Trace, spells []string, every, runID, out, format string) error {
	o := specs.Backfill{Rules: "auto", Mode: "wait", Alphas: []float64{1}, Policies: []string{"never"}, RunID: runID, Out: out, Format: format}
	var err error
	if o.Spells, err = durations("spells", spells); err != nil {
		return err
	}
	if every != "" {
		e, err := durations("every", []string{every})
		if err != nil {
			return err
		}
		o.Every = e[0]
	}
	res, tableTo, err := runBackfill(cmd, t, o)
	if err != nil {
		return err
	}
	return specs.WriteSpellScores(tableTo, res.SpellScores)
}

// runBackfill runs the engine on a trace: records on standard output when
// there is no -o DIR and it is not a terminal, and then the tables on
// standard error.
func runBackfill(cmd *cobra.Command, t specs.Trace, o specs.Backfill) (*bf.Result, io.Writer, error) {
	tableTo := os.Stderr
	if o.Out != "" || isTerminal(os.Stdout) {
		tableTo = os.Stdout
	} else {
		o.Decisions = os.Stdout
	}
	res, err := runner().Backfill(cmd.Context(), t, o)
	return res, tableTo, err
}

// durations reads a flag's durations with units (1ms, 500us) as seconds
// (one per string, 0 where one is bad, and the first error).
func durations(flag string, ss []string) ([]float64, error) {
	v := make([]float64, len(ss))
	var first error
	for i, s := range ss {
		d, err := fstage.ParseDuration(s)
		if err != nil && first == nil {
			first = fmt.Errorf("--%s %w", flag, err)
		}
		v[i] = d
	}
	return v, first
}

func newBackfillCmd() *cobra.Command {
	t := specs.DefaultTrace()
	o := specs.Backfill{Rules: "auto", Mode: "wait"}
	var tasks, timeouts, spells []string
	var overhead, every, out string
	cmd := &cobra.Command{
		Use:   "backfill TRACE --task D... [--mode kill|wait] [--overhead O] [--gang K] [--alpha A]... [--policy P]... [-o DIR]",
		Short: "Put back-end tasks on idle workers by each policy, and measure what it is worth",
		Long: `backfill replays a trace and, for each back-end task length --task d,
runs every --policy causally (each decides at time t from the trace up to
t): never, greedy (launch whenever a worker is idle), timeout (once a spell
has lasted --timeout), online-timeout (the best timeout on the run's
completed spells so far), residual (once the completed spells say the spell
outlasts the task with probability α/(1+α)), forecast (tracecast's
idle-spell forecasts: launch when the expected score is positive), and two
references that see the outcome: hindsight-timeout (the best timeout for
this trace) and oracle (knows every spell).

In --mode kill a task still running when the primary takes its worker back
is killed (waste W); in --mode wait it completes and the primary waits
(delay D). With --gang K a task needs K workers at once: it runs while at
least K workers are idle. Score S = U − α·W or U − α·D (U: the completed tasks' work);
value V = (S − S_ref)/(S_oracle − S_ref), S_ref the better of never and
greedy: 1 is the oracle, 0 no better than the better of never and greedy.

Decisions go to standard output as JSON lines (tracecast.decision/1), or
to DIR/decisions.jsonl with -o DIR (.arrow or .parquet with --format) with
the table in DIR/values.jsonl; the table goes to standard error (standard
output on a terminal, or with -o). --spells D writes the spell forecasts
(tracecast.spell/2: how long each idle worker stays idle, each busy one
busy) too, and scores them. --plans writes the
forecast policy's plans (tracecast.plan/1): each idle worker's launch
windows, what a scheduler acting on them needs (DIR/plans.jsonl).
docs/backfill.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			parse := func(flag string, ss []string) []float64 {
				v, err := durations(flag, ss)
				errs = append(errs, err)
				return v
			}
			o.Tasks, o.Timeouts, o.Spells = parse("task", tasks), parse("timeout", timeouts), parse("spells", spells)
			if overhead != "" {
				o.Overhead = parse("overhead", []string{overhead})[0]
			}
			if every != "" {
				o.Every = parse("every", []string{every})[0]
			}
			if err := errors.Join(errs...); err != nil {
				return err
			}
			ext := o.Format
			if ext == "" {
				ext = "jsonl"
			}
			if err := checkOutputs(args, paths.InDir(out, "decisions."+ext, "spells."+ext, "plans."+ext, "values.jsonl")...); err != nil {
				return err
			}
			t.Path, o.Out = args[0], out
			res, tableTo, err := runBackfill(cmd, t, o)
			if err != nil {
				return err
			}
			return specs.WriteTable(tableTo, res)
		},
	}
	fl := cmd.Flags()
	cliflags.Bind(fl, &t)
	fl.StringVar(&o.Rules, "rules", o.Rules, "state classes and selected containers: auto, starpu or smpi")
	fl.StringArrayVar(&tasks, "task", nil, "back-end task length d, a duration with a unit: 1ms, 10ms (repeatable)")
	fl.StringVar(&overhead, "overhead", "", "set-up cost o of a back-end task, spent before its work starts (wasted if it is killed)")
	fl.IntVar(&o.Gang, "gang", 0, "K ≥ 2: a back-end task needs K idle workers at once for its whole length (the spells of 'at least K idle')")
	fl.StringVar(&o.Mode, "mode", o.Mode, "kill (the primary takes its worker back: the task is killed) or wait (the task completes; the primary waits)")
	fl.Float64SliceVar(&o.Alphas, "alpha", []float64{1, 10}, "what one second of waste (kill) or delay (wait) costs, in seconds of back-end work (repeatable)")
	fl.StringArrayVar(&o.Policies, "policy", nil, "never, greedy, timeout, online-timeout, residual, forecast, hindsight-timeout, oracle (repeatable; default: all)")
	fl.StringArrayVar(&timeouts, "timeout", nil, "the timeout policy's τ, a duration (repeatable)")
	fl.StringVar(&every, "every", "", "how often an idle worker's spell forecast is issued again while it stays idle (default: the shortest task's o+d / 4)")
	fl.StringArrayVar(&spells, "spells", nil, "also write idle and busy spell forecasts (tracecast.spell/2) for these lengths d (repeatable)")
	fl.BoolVar(&o.Plans, "plans", false, "also write the forecast policy's plans (tracecast.plan/1): when to launch on each idle worker")
	fl.StringVar(&o.RunID, "run-id", "", "names the run in every id (default: as predict names it)")
	fl.StringVarP(&out, "output", "o", "", "directory for decisions.jsonl, spells.jsonl and values.jsonl (the table)")
	fl.StringVar(&o.Format, "format", "", "decisions and spells as jsonl (the default), arrow or parquet (both need -o DIR)")
	return cmd
}
