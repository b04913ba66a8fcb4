package cliflags

import (
	"errors"
	"io"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestUsage(t *testing.T) {
	if Usage(nil) != nil {
		t.Error("Usage(nil) is not nil")
	}
	base := errors.New("bad --x")
	err := Usage(base)
	var ue UsageError
	if !errors.As(err, &ue) || !errors.Is(err, base) || err.Error() != "bad --x" {
		t.Errorf("Usage: %#v", err)
	}
}

// TestRequire: every missing flag is named, in the order asked, and a
// flag given its zero value counts as given.
func TestRequire(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var a, b, c float64
	fs.Float64Var(&a, "a", 0, "")
	fs.Float64Var(&b, "b", 0, "")
	fs.Float64Var(&c, "c", 0, "")
	if err := fs.Parse([]string{"--b", "0"}); err != nil {
		t.Fatal(err)
	}
	err := Require(fs, "a", "b", "c")
	var ue UsageError
	if !errors.As(err, &ue) || err.Error() != "missing --a, --c" {
		t.Errorf("Require: %v", err)
	}
	if err := Require(fs, "b"); err != nil {
		t.Errorf("Require(b): %v", err)
	}
	if Given(fs, "a", &a) != nil || Given(fs, "b", &b) != &b {
		t.Error("Given: a not given, b given")
	}
}

// TestUsageArgs: a wrong number of arguments, in a subcommand too, is a
// usage error.
func TestUsageArgs(t *testing.T) {
	root := &cobra.Command{Use: "r", SilenceErrors: true, SilenceUsage: true}
	sub := &cobra.Command{Use: "s", Args: cobra.ExactArgs(1), RunE: func(*cobra.Command, []string) error { return nil }}
	root.AddCommand(sub)
	UsageArgs(root)
	root.SetArgs([]string{"s"})
	root.SetOut(io.Discard)
	err := root.Execute()
	var ue UsageError
	if !errors.As(err, &ue) {
		t.Errorf("s without its argument: %v, want a usage error", err)
	}
}
