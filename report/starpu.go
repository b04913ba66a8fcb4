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
