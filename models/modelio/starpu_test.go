package modelio

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/starpudirtest"
	"github.com/tracecast/tracecast/models/starpudir"
)

const starpuFixtures = "../starpudir/testdata/codelets"

func TestFitStarPUDir(t *testing.T) {
	_, codelets := starpudirtest.Home(t)
	model := filepath.Join(codelets, "45", "mlr_final.vm")
	orig, _ := os.ReadFile(model)
	// A damaged file and a foreign one: reported and skipped.
	os.WriteFile(filepath.Join(codelets, "45", "chol_model_21.vm"), []byte("45\n1\n1\n0\n"), 0o644)
	os.WriteFile(filepath.Join(codelets, "tmp", "notes.out"), []byte("what I measured\n"), 0o644)
	o := DefaultTaskFit()
	if err := o.Check(""); err != nil {
		t.Fatal(err)
	}
	s, err := FitStarPUDir(filepath.Dir(filepath.Dir(codelets)), o, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range s.File.Groups {
		names = append(names, g.Name)
	}
	if !slices.Equal(names, []string{"mlr_final/cpu0_impl0", "mlr_init/cpu0_impl0", "chol_model_11/cpu0_impl0", "chol_model_22/cpu0_impl0"}) {
		t.Errorf("groups %v", names)
	}
	if s.File.Target != "Duration" || !slices.Equal(s.File.GroupBy, []string{"codelet", "arch"}) || s.File.MaxFactors != 4 || s.File.Selection != "held-out" {
		t.Errorf("file: target %s group by %v max factors %d selection %q", s.File.Target, s.File.GroupBy, s.File.MaxFactors, s.File.Selection)
	}
	if len(s.Dir.Skipped) != 2 || !strings.Contains(s.Dir.Skipped[0].Path+s.Dir.Skipped[1].Path, "chol_model_21.vm") {
		t.Errorf("skipped %+v", s.Dir.Skipped)
	}
	if len(s.Codelets) != 2 {
		t.Fatalf("codelets %+v", s.Codelets)
	}
	final, init := s.Codelets[0], s.Codelets[1]
	if final.Symbol != "mlr_final" || !slices.Equal(final.Monomials, []string{"M^2*N", "N^3*K"}) || len(final.Targets) != 1 || final.NotWritten != "" {
		t.Fatalf("mlr_final %+v", final)
	}
	want := starpudirtest.LSMonomials(final.Raw.X, final.Raw.Duration)
	for k := range 3 {
		if math.Abs(final.Coeff[k]-want[k]) > 1e-9*math.Abs(want[k]) {
			t.Errorf("coefficient %d: %g, normal equations %g", k, final.Coeff[k], want[k])
		}
	}
	if init.Symbol != "mlr_init" || init.Targets != nil || !strings.Contains(init.NotWritten, "declares no monomials") {
		t.Errorf("mlr_init %+v", init)
	}
	g, err := s.File.Find(map[string]string{"codelet": "mlr_final", "arch": "cpu0_impl0"})
	if err != nil || g.Validation == nil || !g.Validation.ByInputs || g.Validation.Declared == nil || g.Declared == nil {
		t.Fatalf("mlr_final group %+v %v", g, err)
	}
	// The history of chol_model_11 (4 footprints) is a model of Size,
	// validated leaving one footprint out, next to StarPU's a·size^b + c.
	h, _ := s.File.Find(map[string]string{"codelet": "chol_model_11", "arch": "cpu0_impl0"})
	if h == nil || h.N != 4 || h.Model == nil || !slices.Equal(h.Model.Inputs, []string{"Size"}) || h.Validation == nil || h.Validation.Folds != 4 || h.Validation.StarPU == nil {
		t.Errorf("history %+v", h)
	}
	// Nothing written without --write-back.
	if now, _ := os.ReadFile(model); !bytes.Equal(now, orig) || s.Written {
		t.Fatal("a dry run changed the model file")
	}
	// Written back: the file holds the coefficients, its backup the
	// original, and the raw file is as it was.
	if err := s.WriteBack(); err != nil {
		t.Fatal(err)
	}
	m, err := starpudir.ReadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.PerArch[0].Coeff, final.Coeff) || final.Targets[0].Backup != model+".bak" {
		t.Errorf("written %v (want %v), backup %q", m.PerArch[0].Coeff, final.Coeff, final.Targets[0].Backup)
	}
	if b, _ := os.ReadFile(model + ".bak"); !bytes.Equal(b, orig) {
		t.Error("the backup is not the original")
	}
}

func TestFitStarPURawFile(t *testing.T) {
	raw := filepath.Join(starpuFixtures, "tmp", "mlr_final.out")
	tt, err := ReadTaskTable(raw)
	if err != nil || !tt.StarPURaw || tt.Rows() != 420 || !slices.Equal(tt.Columns, []string{"Duration", "M", "N", "K"}) {
		t.Fatalf("%+v %v", tt, err)
	}
	o := DefaultTaskFit()
	o.Check("")
	f, err := FitTaskFile(raw, o)
	if err != nil {
		t.Fatal(err)
	}
	if f.Target != "Duration" || f.MaxFactors != 4 || f.Selection != "held-out" || len(f.Groups) != 1 || !f.Groups[0].Validation.ByInputs {
		t.Errorf("file %+v", f)
	}
	// --max-factors 0 and --select adj-r2: Table 1's Algorithm 1.
	o.Select = "adj-r2"
	o.MaxFactors = 0
	f, err = FitTaskFile(raw, o)
	if err != nil {
		t.Fatal(err)
	}
	// (Resolve: a StarPU file with --select given keeps Table 1.)
	if f.MaxFactors != 0 || f.Selection != "" {
		t.Errorf("adj-r2: max factors %d selection %q", f.MaxFactors, f.Selection)
	}
	// A CSV with --max-factors: products, held out.
	o = DefaultTaskFit()
	o.Target, o.MaxFactors = "Duration", 3
	o.Check("")
	csv := filepath.Join(t.TempDir(), "m.csv")
	data, _ := os.ReadFile(raw)
	os.WriteFile(csv, data, 0o644)
	f, err = FitTaskFile(csv, o)
	if err != nil || f.MaxFactors != 3 || f.Selection != "held-out" || f.Groups[0].Validation.ByInputs {
		t.Errorf("csv: %+v %v", f, err)
	}
	// A damaged raw file is an error naming its line.
	bad := filepath.Join(t.TempDir(), "bad.out")
	os.WriteFile(bad, []byte("Duration, M\n1.0, 2.0\n1.0\n"), 0o644)
	if _, err := FitTaskFile(bad, DefaultTaskFit()); err == nil || !strings.Contains(err.Error(), bad+":3:") {
		t.Errorf("bad raw file: %v", err)
	}
}

func TestTaskFitChecks(t *testing.T) {
	for _, c := range []struct {
		o   func(*TaskFit)
		err string
	}{
		{func(o *TaskFit) { o.MaxFactors = 5 }, "--max-factors"},
		{func(o *TaskFit) { o.MaxFactors = -1 }, "--max-factors"},
		{func(o *TaskFit) { o.Select = "best" }, "--select"},
	} {
		o := DefaultTaskFit()
		c.o(&o)
		if err := o.Check(""); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", o, err, c.err)
		}
	}
	// Combinations: the selected terms as a codelet declares them.
	if got := combinations([]string{"M^2*N", "N^3*K"}, []string{"M", "N", "K"}); !slices.EqualFunc(got, [][]int{{2, 1, 0}, {0, 3, 1}}, slices.Equal) {
		t.Errorf("combinations %v", got)
	}
	if got := combinations([]string{"N*log2(N)"}, []string{"M", "N", "K"}); got != nil {
		t.Errorf("a log declared: %v", got)
	}
}
