package modelio

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tracecast/tracecast/internal/cliflags"
)

// flags binds opts and parses args, as the command does.
func flags(t *testing.T, opts any, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	if opts != nil {
		cliflags.Bind(fs, opts)
	}
	for _, n := range []string{"model", "cpu", "freq", "measured"} {
		if fs.Lookup(n) == nil {
			fs.String(n, "", "")
		}
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func isUsage(err error) bool {
	var ue cliflags.UsageError
	return errors.As(err, &ue)
}

// TestCommandChecks: the model commands' missing and bad options are
// usage errors that name them, before any file is read.
func TestCommandChecks(t *testing.T) {
	var p PowerFit
	fs := flags(t, &p, "--fmin", "1", "--fmax", "2")
	if err := p.Run(new(bytes.Buffer), fs); !isUsage(err) || err.Error() != "missing --p-idle-fmin, --p-idle-fmax, --p-full-fmin, --p-full-fmax" {
		t.Errorf("powermodel fit: %v", err)
	}
	var c CTFit
	fs = flags(t, &c, "--fmin", "1", "--fmax", "2", "--x", "20")
	if err := c.Run(new(bytes.Buffer), fs); !isUsage(err) || !strings.HasPrefix(err.Error(), "missing --ct-full-fmin") {
		t.Errorf("ctmodel fit: %v", err)
	}
	var s SpeedupInputs
	fs = flags(t, &s, "--time-speedup", "2", "--idle-fraction", "0.5", "--idle-energy", "0")
	if err := s.Run(new(bytes.Buffer), fs); !isUsage(err) || !strings.Contains(err.Error(), "not both") {
		t.Errorf("energy-speedup, both: %v", err)
	}
	if err := ParetoFront(new(bytes.Buffer), "none.csv", "xml"); !isUsage(err) {
		t.Errorf("pareto --format xml: %v", err)
	}
	fs = flags(t, nil, "--model", "m.json", "--cpu", "0.5")
	if err := Predict(new(bytes.Buffer), fs, ModelQuery{}, true, ReadPowerModel); !isUsage(err) || err.Error() != "missing --freq" {
		t.Errorf("predict without --freq: %v", err)
	}
}

// TestCommandOutputs: the inputs given become the models and answers the
// commands print; ctmodel's --x 20 is 20%, and --measured 0 is a
// measurement (given), not its absence.
func TestCommandOutputs(t *testing.T) {
	var c CTFit
	fs := flags(t, &c, "--fmin", "1", "--fmax", "2", "--x", "20", "--ct-full-fmin", "10", "--ct-full-fmax", "6", "--ct-x-fmin", "30", "--ct-x-fmax", "20")
	var pct, frac bytes.Buffer
	if err := c.Run(&pct, fs); err != nil {
		t.Fatal(err)
	}
	var c2 CTFit
	fs = flags(t, &c2, "--fmin", "1", "--fmax", "2", "--x", "0.2", "--ct-full-fmin", "10", "--ct-full-fmax", "6", "--ct-x-fmin", "30", "--ct-x-fmax", "20")
	if err := c2.Run(&frac, fs); err != nil {
		t.Fatal(err)
	}
	if pct.String() != frac.String() || !strings.Contains(pct.String(), `"x": 0.2`) {
		t.Errorf("--x 20 and --x 0.2 differ:\n%s\n%s", pct.String(), frac.String())
	}
	var s SpeedupInputs
	fs = flags(t, &s, "--time-speedup", "2", "--idle-fraction", "0.5")
	var out bytes.Buffer
	if err := s.Run(&out, fs); err != nil || !strings.Contains(out.String(), `"energy_speedup"`) {
		t.Errorf("energy-speedup: %v %s", err, out.String())
	}
}
