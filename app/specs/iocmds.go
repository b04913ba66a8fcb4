package specs

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/internal/paths"
	"github.com/tracecast/tracecast/models/iobench"
	"github.com/tracecast/tracecast/stages/iotime"
)

// IOBench is the iobench command: a profile's categories replayed on a
// directory, the times written to Out.
type IOBench struct {
	Profile
	Path     string `flag:"profile" help:"the application's I/O-call profile (strace, CSV or JSON lines)"`
	Out      string `flag:"output,o" help:"BENCH.json to write"`
	FileSize string `flag:"file-size" help:"least size of the test file (e.g. 8G: larger than the page cache)"`
	iobench.Options
}

// RunIOBench checks o's flags (usage errors) and runs the benchmark.
func (r Runner) RunIOBench(ctx context.Context, o IOBench) error {
	if o.Path == "" || o.Out == "" {
		return cliflags.Usage(errors.New("--profile and -o are required"))
	}
	if err := cliflags.Usage(paths.CheckOutputs([]string{o.Path}, o.Out)); err != nil {
		return err
	}
	if o.FileSize != "" {
		v, err := iotime.ParseSize(o.FileSize)
		if err != nil {
			return cliflags.Usage(err)
		}
		o.Options.FileSize = v
	}
	o.Profile.Path = o.Path
	return r.Bench(ctx, o.Profile, o.Options, o.Out)
}

// IOPredictCmd is the iopredict command: a profile's I/O time predicted on
// a target from iobench's results on the reference and the target.
type IOPredictCmd struct {
	Profile
	Path     string `flag:"profile" help:"the application's I/O-call profile on the reference"`
	Ref      string `flag:"ref" help:"BENCH.json measured on the reference"`
	Target   string `flag:"target" help:"BENCH.json measured on the target"`
	Actual   string `flag:"actual" help:"profile of the application run on the target (for the error)"`
	Stat     string `flag:"stat" help:"benchmark statistic: mean or median"`
	Overhead string `flag:"overhead" help:"tracer cost per call taken out before scaling: 0 (none), auto (the shortest call in the profile), calibrated (the call-weighted median over categories of the traced mean minus the reference benchmark's) or a duration (2us)"`
}

// RunIOPredict checks o's flags (usage errors), predicts and writes the
// prediction to w: a table when terminal, else one JSON object.
func (r Runner) RunIOPredict(ctx context.Context, o IOPredictCmd, w io.Writer, terminal bool) error {
	if o.Path == "" || o.Ref == "" || o.Target == "" {
		return cliflags.Usage(errors.New("--profile, --ref and --target are required"))
	}
	var po iobench.PredictOptions
	if po.SetStat(o.Stat) != nil {
		return cliflags.Usage(fmt.Errorf("unknown --stat %q (mean or median)", o.Stat))
	}
	if po.SetOverhead(o.Overhead) != nil {
		return cliflags.Usage(fmt.Errorf("bad --overhead %q (auto or a duration such as 2us)", o.Overhead))
	}
	o.Profile.Path = o.Path
	p, err := r.IOPredict(ctx, o.Profile, o.Ref, o.Target, o.Actual, po)
	if err != nil {
		return err
	}
	if terminal {
		return p.WriteTable(w)
	}
	return iobench.WriteJSON(w, p)
}
