package specs

import (
	"context"
	"os"
	"slices"
	"strings"

	bf "github.com/tracecast/tracecast/backfill"
	stage "github.com/tracecast/tracecast/stages/backfill"
)

// backfillOnce runs backfill in one pass over the file where the rules,
// the time unit, the workers and the run's start are what its first MiB
// says (guessSurvey; predict's one pass is the same, app/specs/guess.go):
// the records go to a directory inside -o DIR while the pass surveys the
// trace as the first pass would, and are moved into place when the survey
// is the guess's; otherwise they are dropped, and measured is what the
// second pass needs. Records to a writer (standard output) keep the two
// passes, streamed: nothing bounds them (predict --spells on a long run).
// res and measured nil: no guess, or the temporary directory failed
// (then the two passes write where they were asked to).
func (r Runner) backfillOnce(ctx context.Context, t Trace, o Backfill) (res *bf.Result, measured *stage.Survey, err error) {
	if o.Out == "" && o.Decisions != nil {
		return nil, nil, nil
	}
	g := guessSurvey(t, o.Rules)
	if g == nil {
		return nil, nil, nil
	}
	dir := ""
	if o.Out != "" {
		// -o DIR is made as the outputs would make it, and removed if
		// the run leaves it empty (a bad trace).
		if _, statErr := os.Stat(o.Out); statErr != nil {
			defer os.Remove(o.Out)
		}
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return nil, nil, nil
		}
		if dir, err = os.MkdirTemp(o.Out, ".tracecast-backfill-"); err != nil {
			return nil, nil, nil
		}
		defer os.RemoveAll(dir)
	}
	res, measured, err = r.backfillPass(ctx, t, o, g, dir, nil, true)
	if err != nil {
		if dir != "" && strings.Contains(err.Error(), dir) {
			r.Log.Debug().Err(err).Msg("backfill: the records' temporary place failed: reading the trace twice")
			return nil, nil, nil
		}
		return nil, nil, err
	}
	if measured.Rules != g.Rules || measured.Unit != g.Unit || measured.T0 != g.T0 || !slices.Equal(measured.Workers, g.Workers) {
		r.Log.Debug().Msg("backfill: the workers or the run's start were not what the file's beginning said: reading it again")
		return nil, measured, nil
	}
	if dir != "" {
		if err := moveInto(dir, o.Out); err != nil {
			return nil, nil, err
		}
	}
	return res, nil, r.writeTables(o.Out, res)
}
