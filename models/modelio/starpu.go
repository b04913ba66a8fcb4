package modelio

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast/models/eiger"
	"github.com/tracecast/tracecast/models/starpudir"
)

// rawTable is a StarPU raw measurement file as a table: Duration (µs) and
// the parameters, numeric columns.
func rawTable(r *starpudir.Raw) *eiger.Table {
	t := &eiger.Table{Source: r.Path, Num: map[string][]float64{}, Text: map[string][]string{}}
	t.Columns = append([]string{starpudir.DurationColumn}, r.Params...)
	t.Num[starpudir.DurationColumn] = r.Duration
	for j, p := range r.Params {
		col := make([]float64, len(r.X))
		for i, row := range r.X {
			col[i] = row[j]
		}
		t.Num[p] = col
	}
	for _, c := range t.Columns {
		txt := make([]string, len(r.X))
		for i, v := range t.Num[c] {
			txt[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		t.Text[c] = txt
	}
	for _, l := range r.Lines {
		t.Lines = append(t.Lines, int64(l))
	}
	return t
}

// IsStarPURaw reports whether path names a StarPU raw measurement file
// (NAME.out, or NAME.out.gz).
func IsStarPURaw(path string) bool {
	return strings.HasSuffix(strings.TrimSuffix(strings.ToLower(path), ".gz"), ".out")
}

// Resolve sets what the options leave to the input: for StarPU's
// measurements (raw files, a sampling directory) the target Duration, and
// products of up to four factors chosen on held-out parameter
// combinations; for other tables Table 1's pool and adjusted R², unless
// --max-factors asks for products (then held-out selection too).
func (o *TaskFit) Resolve(starpu bool) error {
	sel, err := eiger.ParseSelection(o.Select)
	if err != nil {
		return err
	}
	switch {
	case starpu && o.MaxFactors == 0 && o.Select == "":
		o.maxFactors, o.sel = eiger.MaxFactors, eiger.SelectHeldOut
	case o.MaxFactors > 0 && o.Select == "":
		o.maxFactors, o.sel = o.MaxFactors, eiger.SelectHeldOut
	default:
		o.maxFactors, o.sel = o.MaxFactors, sel
	}
	if starpu && o.Target == "" {
		o.Target = starpudir.DurationColumn
	}
	o.foldByInputs = starpu
	return nil
}

func (o TaskFit) spec() eiger.Spec {
	return eiger.Spec{Target: o.Target, Folds: o.Folds, FoldByInputs: o.foldByInputs,
		Options: eiger.Options{Threshold: o.Threshold, Clusters: o.Clusters, PCA: o.PCA, Pool: o.Pool, Seed: o.Seed,
			MaxFactors: o.maxFactors, Select: o.sel}}
}

// StarPUFit is what fit-model --starpu-dir computes: the models of every
// codelet of a sampling directory, and for every codelet that declares
// monomials the coefficients handed back to StarPU.
type StarPUFit struct {
	Dir *starpudir.Dir
	// File holds the models, grouped by codelet and arch: for a raw file
	// the Eiger model of Duration (µs) from the parameters (arch: the
	// model files' one, or "all" when they have several: the raw file
	// does not say which device measured a row); for a history the model
	// of the footprints' mean duration (µs) from their data size, one row
	// per footprint.
	File *eiger.File
	// Codelets are the raw files' codelets, with the write-back.
	Codelets []*StarPUCodelet
	// Written is true when the coefficients were written to the files.
	Written bool
}

// StarPUCodelet is a multiple-regression codelet: its declared monomials,
// least squares on them over its raw file, and where they go.
type StarPUCodelet struct {
	Symbol string
	Raw    *starpudir.Raw
	// Group is the codelet's group in StarPUFit.File.
	Group string
	// Monomials are those its model files declare (nil: none declare any),
	// Coeff the least-squares coefficients on them (intercept first).
	Monomials []string
	Coeff     []float64
	// Targets are the model files and archs to receive Coeff.
	Targets []StarPUTarget
	// NotWritten says why nothing is handed back ("" when Targets are).
	NotWritten string
	// Combinations are the exponents of the selected model's terms, when
	// every term is a monomial of the parameters with non-negative
	// integer powers: what the codelet's combinations would declare.
	Combinations [][]int
}

// StarPUTarget is a model file and arch that receives coefficients.
type StarPUTarget struct {
	Model  *starpudir.Model
	Arch   *starpudir.PerArch
	Backup string // after WriteBack
}

// FitStarPUDir reads a sampling directory and fits its codelets' models;
// with writeBack it writes the least-squares coefficients of the declared
// monomials into the model files (a backup of each kept). A damaged or
// foreign file is in Dir.Skipped and the others are fitted.
func FitStarPUDir(dir string, o TaskFit, writeBack bool) (*StarPUFit, error) {
	d, err := starpudir.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := o.Resolve(true); err != nil {
		return nil, err
	}
	s := &StarPUFit{Dir: d}
	f := &eiger.File{}
	add := func(part *eiger.File, symbol, arch string) string {
		if f.Model == "" {
			*f = *part
			f.Groups = nil
			f.Source = d.Codelets
			f.GroupBy = []string{"codelet", "arch"}
			f.Target = o.Target
			f.Inputs = nil
		}
		g := part.Groups[0]
		g.Key = map[string]string{"codelet": symbol, "arch": arch}
		g.Name = symbol + "/" + arch
		f.Groups = append(f.Groups, g)
		return g.Name
	}
	for _, r := range d.Raw {
		c := &StarPUCodelet{Symbol: r.Symbol, Raw: r}
		arch := rawArch(d.ModelsOf(r.Symbol))
		c.declared(d)
		spec := o.spec()
		spec.Target = starpudir.DurationColumn
		if len(c.Monomials) > 0 {
			spec.Declared = c.Monomials
		}
		part, err := eiger.FitGroups(rawTable(r), spec)
		if err != nil {
			d.Skipped = append(d.Skipped, starpudir.Skipped{Path: r.Path, Reason: err.Error()})
			continue
		}
		c.Group = add(part, r.Symbol, arch)
		if g := part.Groups[0]; g.Model != nil && len(g.Model.Clusters) == 1 && !g.Model.PCA {
			c.Combinations = combinations(g.Model.Clusters[0].Terms[1:], r.Params)
		}
		s.Codelets = append(s.Codelets, c)
	}
	for _, m := range d.Models {
		for _, pa := range m.PerArch {
			if len(pa.Entries) == 0 {
				continue
			}
			arch := pa.Arch
			if len(d.ModelsOf(m.Symbol)) > 1 {
				arch = m.Host + "." + pa.Arch
			}
			spec := o.spec()
			spec.Target = "mean_us"
			spec.Inputs = []string{"Size"}
			spec.SizeColumn = "Size"
			spec.FootprintColumn = "footprint"
			part, err := eiger.FitGroups(historyTable(m, pa), spec)
			if err != nil {
				d.Skipped = append(d.Skipped, starpudir.Skipped{Path: m.Path, Reason: pa.Arch + ": " + err.Error()})
				continue
			}
			add(part, m.Symbol, arch)
		}
	}
	if f.Model == "" {
		return nil, fmt.Errorf("%s: no codelet to model: no raw file (tmp/*.out) and no history in %d/ could be read", d.Codelets, starpudir.Version)
	}
	s.File = f
	if writeBack {
		if err := s.WriteBack(); err != nil {
			return s, err
		}
	}
	return s, nil
}

// FitStarPUDefaults is FitStarPUDir with fit-model's default options and
// no write-back (the HTML report's section).
func FitStarPUDefaults(dir string) (*StarPUFit, error) {
	o := DefaultTaskFit()
	if err := o.Check(""); err != nil {
		return nil, err
	}
	return FitStarPUDir(dir, o, false)
}

// rawArch is the arch a raw file's rows come from: the one of its model
// files, or "all".
func rawArch(ms []*starpudir.Model) string {
	var archs []string
	for _, m := range ms {
		for _, pa := range m.PerArch {
			if !slices.Contains(archs, pa.Arch) {
				archs = append(archs, pa.Arch)
			}
		}
	}
	if len(archs) == 1 && len(ms) == 1 {
		return archs[0]
	}
	return "all"
}

// declared finds the monomials the codelet's model files declare, fits
// least squares on them over the raw file (what StarPU's dgels, or
// starpu_mlr_analysis, computes) and lists the files and archs to write.
func (c *StarPUCodelet) declared(d *starpudir.Dir) {
	ms := d.ModelsOf(c.Symbol)
	if len(ms) == 0 {
		c.NotWritten = fmt.Sprintf("no model file %d/%s.HOST", starpudir.Version, c.Symbol)
		return
	}
	var why []string
	for _, m := range ms {
		for _, pa := range m.PerArch {
			switch {
			case len(pa.Coeff) == 0:
				why = append(why, fmt.Sprintf("%s %s: not a multiple-regression model", m.Path, pa.Arch))
			case len(pa.Coeff) == 1:
				why = append(why, fmt.Sprintf("%s %s: the codelet declares no monomials (ncombinations 0)", m.Path, pa.Arch))
			case pa.Monomials == nil:
				why = append(why, fmt.Sprintf("%s:%d: %s: the comment before the coefficients does not name the monomials (# n intercept ...)", m.Path, pa.CoeffLine, pa.Arch))
			case c.Monomials != nil && !slices.Equal(c.Monomials, pa.Monomials):
				why = append(why, fmt.Sprintf("%s %s: declares %s, another file %s", m.Path, pa.Arch, strings.Join(pa.Monomials, " "), strings.Join(c.Monomials, " ")))
			default:
				bad := false
				for _, mono := range pa.Monomials {
					if _, err := starpudir.Exponents(mono, c.Raw.Params); err != nil {
						why = append(why, fmt.Sprintf("%s:%d: %v", m.Path, pa.CoeffLine, err))
						bad = true
					}
				}
				if !bad {
					c.Monomials = pa.Monomials
					c.Targets = append(c.Targets, StarPUTarget{Model: m, Arch: pa})
				}
			}
		}
	}
	if len(c.Targets) == 0 {
		c.NotWritten = strings.Join(why, "; ")
		return
	}
	fit, err := eiger.FitDeclared(c.Monomials, c.Raw.Params, c.Raw.X, c.Raw.Duration)
	if err != nil {
		c.NotWritten = fmt.Sprintf("%s: %v", c.Raw.Path, err)
		c.Targets = nil
		return
	}
	c.Coeff = fit.Weights
	if len(why) > 0 {
		c.NotWritten = "also: " + strings.Join(why, "; ")
	}
}

// WriteBack writes every codelet's coefficients into its model files,
// keeping a backup of each file (starpudir.WriteModel).
func (s *StarPUFit) WriteBack() error {
	done := map[*starpudir.Model]string{}
	for _, c := range s.Codelets {
		for i := range c.Targets {
			t := &c.Targets[i]
			if err := t.Model.SetCoefficients(t.Arch, c.Coeff); err != nil {
				return err
			}
		}
		for i := range c.Targets {
			t := &c.Targets[i]
			if b, ok := done[t.Model]; ok {
				t.Backup = b
				continue
			}
			b, err := starpudir.WriteModel(t.Model)
			if err != nil {
				return fmt.Errorf("writing back %s: %w", t.Model.Path, err)
			}
			done[t.Model], t.Backup = b, b
		}
	}
	s.Written = true
	return nil
}

// historyTable is a history's footprints as a table: Size (bytes), mean_us
// and the footprint.
func historyTable(m *starpudir.Model, pa *starpudir.PerArch) *eiger.Table {
	t := &eiger.Table{Source: m.Path, Num: map[string][]float64{}, Text: map[string][]string{},
		Columns: []string{"Size", "mean_us", "footprint"}}
	for _, e := range pa.Entries {
		t.Num["Size"] = append(t.Num["Size"], float64(e.Size))
		t.Num["mean_us"] = append(t.Num["mean_us"], e.Mean)
		t.Text["Size"] = append(t.Text["Size"], strconv.FormatUint(e.Size, 10))
		t.Text["mean_us"] = append(t.Text["mean_us"], strconv.FormatFloat(e.Mean, 'g', -1, 64))
		t.Text["footprint"] = append(t.Text["footprint"], fmt.Sprintf("%08x", e.Footprint))
		t.Lines = append(t.Lines, int64(e.Line))
	}
	return t
}

// combinations are the exponents of terms when each is a monomial of the
// parameters with non-negative integer powers (no log, no root, no
// inverse): what a codelet's combinations declare; nil otherwise.
func combinations(terms, params []string) [][]int {
	var out [][]int
	for _, t := range terms {
		exp, err := starpudir.Exponents(t, params)
		if err != nil {
			return nil
		}
		out = append(out, exp)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
