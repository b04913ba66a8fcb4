package specs

import (
	"bytes"
	"errors"
	"github.com/spf13/pflag"
	"github.com/tracecast/tracecast/models/eiger"
	"github.com/tracecast/tracecast/models/modelio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/live"
	"github.com/tracecast/tracecast/models/iobench"
)

func usage(err error) bool {
	var ue cliflags.UsageError
	return errors.As(err, &ue)
}

// TestCommandChecks: the checks moved from the commands give the same
// messages, as usage errors, before anything runs.
func TestCommandChecks(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"iobench without -o", "--profile and -o are required", r.RunIOBench(ctx, IOBench{Path: strace})},
		{"iobench -o the profile", "", r.RunIOBench(ctx, IOBench{Path: strace, Out: strace})},
		{"iobench --file-size", "", r.RunIOBench(ctx, IOBench{Path: strace, Out: filepath.Join(dir, "b.json"), FileSize: "lots"})},
		{"iopredict without --ref", "--profile, --ref and --target are required", r.RunIOPredict(ctx, IOPredictCmd{Path: strace, Target: "t"}, nil, false)},
		{"iopredict --stat", `unknown --stat "mode" (mean or median)`, r.RunIOPredict(ctx, IOPredictCmd{Path: strace, Ref: "r", Target: "t", Stat: "mode", Overhead: "0"}, nil, false)},
		{"iopredict --overhead", `bad --overhead "x" (auto or a duration such as 2us)`, r.RunIOPredict(ctx, IOPredictCmd{Path: strace, Ref: "r", Target: "t", Stat: "mean", Overhead: "x"}, nil, false)},
		{"--metrics-addr", "", func() error { _, err := r.Start(Metrics{Addr: "nowhere"}); return err }()},
		{"live option", `--addr "x": bad`, FlagError(&live.OptionError{Option: "addr", Value: "x", Err: errors.New("bad")})},
		{"predict -o the trace's directory", "", Predict{Out: filepath.Dir(strace)}.Prepare([]string{filepath.Join(filepath.Dir(strace), "records.jsonl")})},
	} {
		if !usage(tc.err) || tc.want != "" && tc.err.Error() != tc.want {
			t.Errorf("%s: %v, want a usage error %q", tc.name, tc.err, tc.want)
		}
	}
	if err := FlagError(os.ErrNotExist); err != os.ErrNotExist {
		t.Errorf("FlagError changed another error: %v", err)
	}
	out := filepath.Join(dir, "p")
	if err := (Predict{Out: out}).Prepare([]string{strace}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || !fi.IsDir() {
		t.Errorf("Prepare did not create -o DIR: %v", err)
	}
}

// TestIOCommands: iobench and iopredict run end to end from their flags'
// structs: a benchmark, then the profile predicted against it.
func TestIOCommands(t *testing.T) {
	dir := t.TempDir()
	b := IOBench{Profile: DefaultProfile(), Path: strace, Out: filepath.Join(dir, "bench.json"), FileSize: "1M", Options: iobench.DefaultOptions()}
	b.Dir, b.MinCalls, b.MaxCalls, b.Reps = dir, 2, 4, 1
	if err := r.RunIOBench(ctx, b); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p := IOPredictCmd{Profile: DefaultProfile(), Path: strace, Ref: b.Out, Target: b.Out, Stat: "median", Overhead: "auto"}
	if err := r.RunIOPredict(ctx, p, &out, false); err != nil || !strings.Contains(out.String(), `"categories"`) {
		t.Errorf("iopredict: %v\n%s", err, out.String())
	}
}

// TestMovedChecks: the verify, hitrate, states, fit-model and predict-task
// checks, moved from their commands, are usage errors with the commands'
// messages; fit-model's --regressors help lists the pool it checks against.
func TestMovedChecks(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"verify --format", `--format "csv": want table or jsonl`, r.RunVerify(ctx, Trace{Path: ring}, Verify{Rules: "auto", Format: "csv"}, "f.jsonl", nil)},
		{"hitrate --method", "", r.RunHitrate(ctx, Trace{Path: ring}, DefaultSignal(1000), Hitrate{Method: "sas", Alpha: 0.05, Windows: "10"}, nil, false)},
		{"hitrate --windows", "", r.RunHitrate(ctx, Trace{Path: ring}, DefaultSignal(1000), Hitrate{Method: "matlab", Alpha: 0.05, Windows: "10:1:2"}, nil, false)},
		{"states --memory-limit", "", r.RunStates(ctx, States{Trace: ring, Format: "csv", Out: "-", MemLimit: "lots"})},
		{"states -o the trace", "", r.RunStates(ctx, States{Trace: ring, Format: "csv", Out: ring})},
		{"fit-model --regressors", "", FitModelCmd{TaskFit: modelio.DefaultTaskFit(), Regressors: "x^3"}.Run(nil, nil, "t.csv")},
		{"fit-model without a file", "", FitModelCmd{TaskFit: modelio.DefaultTaskFit()}.Run(nil, nil, "")},
		{"predict-task without --model", "", PredictTask(nil, modelio.TaskQuery{Codelet: "c"})},
	} {
		if !usage(tc.err) || tc.want != "" && tc.err.Error() != tc.want {
			t.Errorf("%s: %v, want a usage error %q", tc.name, tc.err, tc.want)
		}
	}
	f, ok := reflect.TypeFor[FitModelCmd]().FieldByName("Regressors")
	if !ok || !strings.HasSuffix(f.Tag.Get("help"), ": "+strings.Join(eiger.PoolNames, ",")) {
		t.Errorf("--regressors' help %q does not list eiger.PoolNames", f.Tag.Get("help"))
	}
	var out bytes.Buffer
	if err := r.RunHitrate(ctx, Trace{Path: ring}, DefaultSignal(1_000_000), Hitrate{Method: "matlab", Alpha: 0.05, Windows: "2,4"}, &out, false); err != nil || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("hitrate: %v\n%s", err, out.String())
	}
}

// TestListingCommands: ks, validate and components from their options,
// and report's power-stream options without --power.
func TestListingCommands(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("1\n2\n3\n"), 0o644)
	os.WriteFile(b, []byte("1\n2\n9\n"), 0o644)
	var out, errw bytes.Buffer
	if err := KSFiles(&out, "scipy", 0.05, [2]string{a, b}); err != nil || !strings.Contains(out.String(), `"n1":3`) {
		t.Errorf("ks: %v %s", err, out.String())
	}
	if err := KSFiles(&out, "sas", 0.05, [2]string{a, b}); !usage(err) {
		t.Errorf("ks --method sas: %v", err)
	}
	out.Reset()
	if err := Validate(&out, &errw, []string{"replay-starpu"}); err != nil || !strings.HasPrefix(out.String(), "replay-starpu: ok (") {
		t.Errorf("validate: %v %s", err, out.String())
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("bogus: 1\n"), 0o644)
	if err := Validate(&out, &errw, []string{"replay-starpu", bad}); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("validate of a bad file: %v", err)
	}
	out.Reset()
	if err := Components(&out, []string{"paje"}); err != nil || !strings.Contains(out.String(), "paje") {
		t.Errorf("components paje: %v %s", err, out.String())
	}
	if err := Components(&out, []string{"nothing"}); !usage(err) || err.Error() != `no component type "nothing"` {
		t.Errorf("components nothing: %v", err)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	p := ReportPower{Attribution: DefaultAttribution()}
	cliflags.Bind(fs, &p)
	if err := fs.Parse([]string{"--node", "n0"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(fs); !usage(err) || err.Error() != "--node is an option of the power streams: give --power" {
		t.Errorf("report --node without --power: %v", err)
	}
	p.Powers = []string{"p.csv"}
	if err := p.Check(fs); err != nil {
		t.Errorf("with --power: %v", err)
	}
}
