package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast/models/eiger"
	"github.com/tracecast/tracecast/models/modelio"
)

// WriteStarPUText writes, after a sampling directory's models
// (WriteTaskModelText of s.File), the files skipped and why, and for each
// multiple-regression codelet: the monomials its model declares, their
// least-squares coefficients (what --write-back hands to StarPU) next to
// tracecast's own selection and both held-out errors, where the
// coefficients were (or would be) written, and the combinations the
// codelet would declare to use the selection.
func WriteStarPUText(w io.Writer, s *modelio.StarPUFit) error {
	d := s.Dir
	rel := func(p string) string {
		if r, err := filepath.Rel(d.Codelets, p); err == nil {
			return r
		}
		return p
	}
	fmt.Fprintf(w, "\nStarPU sampling directory %s: %d raw file(s), %d model file(s)\n", d.Codelets, len(d.Raw), len(d.Models))
	if len(d.Skipped) > 0 {
		fmt.Fprintln(w, "  skipped:")
		for _, sk := range d.Skipped {
			fmt.Fprintf(w, "    %s: %s\n", sk.Path, sk.Reason)
		}
	}
	for _, c := range s.Codelets {
		g, _ := s.File.Find(map[string]string{"codelet": c.Symbol, "arch": strings.TrimPrefix(c.Group, c.Symbol+"/")})
		fmt.Fprintf(w, "\n%s (%s: %d tasks)\n", c.Symbol, rel(c.Raw.Path), len(c.Raw.Duration))
		if g != nil && g.Model != nil && len(g.Model.Clusters) == 1 {
			fmt.Fprintf(w, "  tracecast's selection:  %s\n", Formula(s.File.Target, &g.Model.Clusters[0]))
		}
		if c.Coeff != nil {
			fmt.Fprintf(w, "  declared, least squares over the raw file: %s\n",
				Formula(s.File.Target, &eiger.Cluster{Terms: append([]string{"1"}, c.Monomials...), Weights: c.Coeff}))
		}
		if g != nil && g.Validation != nil && g.Validation.Folds > 0 {
			v := g.Validation
			fmt.Fprintf(w, "  held-out MAPE (%d folds of parameter combinations): selection %s", v.Folds, pct(v.Eiger.MAPE))
			if v.Declared != nil {
				fmt.Fprintf(w, ", declared %s", pct(v.Declared.MAPE))
			}
			fmt.Fprintln(w)
		}
		if c.Combinations != nil {
			fmt.Fprintf(w, "  to declare the selection: .ncombinations = %d, combinations %s (parameters %s)\n",
				len(c.Combinations), combos(c.Combinations), strings.Join(c.Raw.Params, ", "))
		}
		switch {
		case len(c.Targets) > 0 && s.Written:
			for _, t := range c.Targets {
				fmt.Fprintf(w, "  written: %s %s (backup %s)\n", rel(t.Model.Path), t.Arch.Arch, rel(t.Backup))
			}
		case len(c.Targets) > 0:
			var where []string
			for _, t := range c.Targets {
				where = append(where, rel(t.Model.Path)+" "+t.Arch.Arch)
			}
			fmt.Fprintf(w, "  to write (--write-back): %s\n", strings.Join(where, ", "))
		}
		if c.NotWritten != "" {
			fmt.Fprintf(w, "  not handed back: %s\n", c.NotWritten)
		}
	}
	return nil
}

// combos writes exponents as C initialisers: {{2, 1, 0}, {0, 3, 1}}.
func combos(cs [][]int) string {
	var parts []string
	for _, c := range cs {
		var e []string
		for _, x := range c {
			e = append(e, strconv.Itoa(x))
		}
		parts = append(parts, "{"+strings.Join(e, ", ")+"}")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// starpuSection is the HTML report's section of a sampling directory's
// models (Page.SetStarPU).
type starpuSection struct {
	Dir      string
	Rows     []starpuRow
	Codelets []starpuCodelet
	Skipped  []string
}

type starpuRow struct {
	Group, N, Model, Eiger, Declared, History, StarPU, Warn string
}

type starpuCodelet struct {
	Symbol, Selection, Declared, Errors, Declare, Where string
}

// SetStarPU adds to the page a section with a sampling directory's models
// (fit-model --starpu-dir): per codelet and arch the model, its held-out
// MAPE next to the baselines, and for each multiple-regression codelet
// the declared monomials' coefficients and where they go; the files
// skipped and why.
func (p *Page) SetStarPU(s *modelio.StarPUFit) {
	sec := &starpuSection{Dir: s.Dir.Codelets}
	score := func(sc *eiger.Scores) string {
		if sc == nil {
			return "–"
		}
		out := pct(sc.MAPE)
		if sc.Negative > 0 {
			out += fmt.Sprintf(" (%d negative)", sc.Negative)
		}
		return out
	}
	for i := range s.File.Groups {
		g := &s.File.Groups[i]
		r := starpuRow{Group: g.Name, N: strconv.Itoa(g.N), Eiger: "–", Declared: "–", History: "–", StarPU: "–"}
		switch {
		case g.Model == nil:
			r.Model, r.Warn = "no model", g.Error
		case len(g.Model.Clusters) == 1:
			cl := &g.Model.Clusters[0]
			r.Model = Formula(s.File.Target, cl)
			if cl.Negative > 0 {
				r.Warn = fmt.Sprintf("UNUSABLE: predicts a negative duration for %d of its %d rows", cl.Negative, cl.N)
			}
		default:
			r.Model = fmt.Sprintf("%d clusters", len(g.Model.Clusters))
		}
		if v := g.Validation; v != nil && v.Folds > 0 {
			r.Eiger, r.Declared, r.History, r.StarPU = score(&v.Eiger), score(v.Declared), score(&v.History), score(v.StarPU)
		} else if v != nil && r.Warn == "" {
			r.Warn = v.StarPUNote
		}
		sec.Rows = append(sec.Rows, r)
	}
	for _, c := range s.Codelets {
		sc := starpuCodelet{Symbol: c.Symbol, Where: c.NotWritten}
		g, _ := s.File.Find(map[string]string{"codelet": c.Symbol, "arch": strings.TrimPrefix(c.Group, c.Symbol+"/")})
		if g != nil && g.Model != nil && len(g.Model.Clusters) == 1 {
			sc.Selection = Formula(s.File.Target, &g.Model.Clusters[0])
			if v := g.Validation; v != nil && v.Folds > 0 {
				sc.Errors = "held-out MAPE: selection " + score(&v.Eiger)
				if v.Declared != nil {
					sc.Errors += ", declared " + score(v.Declared)
				}
			}
		}
		if c.Coeff != nil {
			sc.Declared = Formula(s.File.Target, &eiger.Cluster{Terms: append([]string{"1"}, c.Monomials...), Weights: c.Coeff})
			var where []string
			for _, t := range c.Targets {
				where = append(where, filepath.Base(t.Model.Path)+" "+t.Arch.Arch)
			}
			verb := "to write with fit-model --write-back: "
			if s.Written {
				verb = "written: "
			}
			sc.Where = strings.TrimSuffix(verb+strings.Join(where, ", ")+"; "+c.NotWritten, "; ")
		}
		if c.Combinations != nil {
			sc.Declare = fmt.Sprintf(".ncombinations = %d, combinations %s (%s)", len(c.Combinations), combos(c.Combinations), strings.Join(c.Raw.Params, ", "))
		}
		sec.Codelets = append(sec.Codelets, sc)
	}
	for _, sk := range s.Dir.Skipped {
		sec.Skipped = append(sec.Skipped, sk.Path+": "+sk.Reason)
	}
	p.starpu = sec
}
