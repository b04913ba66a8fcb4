package study

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestFlagChecks: the commands' option checks are *UsageError with the
// messages the commands gave.
func TestFlagChecks(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "a.trace")
	bad := DefaultReproduceFlags()
	bad.Sizes = "x"
	_, errSizes := bad.Config()
	bad = DefaultReproduceFlags()
	bad.Method = "fortran"
	_, errMethod := bad.Config()
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"synth without -o", "-o TRACE is required", SynthFiles{}.Check()},
		{"synth --meta -o", "", SynthFiles{Trace: trace, Meta: trace}.Check()},
		{"synth --dot on the default metadata", "", SynthFiles{Trace: trace, DOT: filepath.Join(dir, "a.meta.json")}.Check()},
		{"train without -o", "-o DIR is required", TrainInputs("", "", []string{trace})},
		{"train -o over an input", "", TrainInputs("", dir, []string{filepath.Join(dir, "points.csv")})},
		{"reproduce --sizes", "", errSizes},
		{"reproduce --method", "", errMethod},
	} {
		var ue *UsageError
		if !errors.As(tc.err, &ue) || tc.want != "" && tc.err.Error() != tc.want {
			t.Errorf("%s: %v, want a usage error %q", tc.name, tc.err, tc.want)
		}
	}
	if err := (SynthFiles{Trace: trace, DOT: filepath.Join(dir, "a.dot")}).Check(); err != nil {
		t.Errorf("synth, distinct files: %v", err)
	}
	c, err := DefaultReproduceFlags().Config()
	if err != nil || len(c.Sizes) != 16 || len(c.ClusterSizes) != 6 || c.Seed != 2013 || c.Out != "reproduce/out" || len(c.Windows) == 0 {
		t.Errorf("the defaults: %v %+v", err, c)
	}
}
