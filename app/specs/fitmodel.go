package specs

import (
	"fmt"
	"io"
	"os"

	"github.com/tracecast/tracecast/internal/paths"
	"github.com/tracecast/tracecast/models/eiger"
	"github.com/tracecast/tracecast/models/modelio"
	"github.com/tracecast/tracecast/report"
)

// FitStarPU is fit-model --starpu-dir: the models of every codelet of
// StarPU's sampling directory dir, printed on w (what was skipped said on
// errw), written back into its model files with writeBack, and to out
// and plots when given.
func FitStarPU(w, errw io.Writer, dir string, o modelio.TaskFit, writeBack bool, out, plots string) error {
	if out != "" {
		if err := paths.CheckOutputs([]string{dir}, out); err != nil {
			return &OptionError{Msgs: []string{err.Error()}}
		}
	}
	s, err := modelio.FitStarPUDir(dir, o, writeBack)
	if s == nil {
		return err
	}
	if werr := report.WriteTaskModelText(w, s.File); werr != nil {
		return werr
	}
	if werr := report.WriteStarPUText(w, s); werr != nil {
		return werr
	}
	if n := len(s.Dir.Skipped) - s.Dir.Backups(); n > 0 {
		fmt.Fprintf(errw, "tracecast fit-model: %d file(s) of %s skipped (damaged or not StarPU's): listed above\n", n, s.Dir.Codelets)
	}
	if err != nil {
		return err
	}
	return writeModelOutputs(w, s.File, out, plots)
}

// FitModel is fit-model FILE: the models of a table of measurements (a
// tasks file, a CSV, a StarPU raw file), printed on w and written to out
// and plots when given.
func FitModel(w io.Writer, path string, o modelio.TaskFit, out, plots string) error {
	if out != "" {
		if err := paths.CheckOutputs([]string{path}, out); err != nil {
			return &OptionError{Msgs: []string{err.Error()}}
		}
	}
	file, err := modelio.FitTaskFile(path, o)
	if err != nil {
		return err
	}
	if err := report.WriteTaskModelText(w, file); err != nil {
		return err
	}
	return writeModelOutputs(w, file, out, plots)
}

// writeModelOutputs writes the plots (--plots) and the model file (-o).
func writeModelOutputs(w io.Writer, file *eiger.File, out, plots string) error {
	if plots != "" {
		if err := os.MkdirAll(plots, 0o755); err != nil {
			return err
		}
		names, err := report.WriteTaskModelPlots(plots, file)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\nplots: %d group(s) in %s (.png, .svg)\n", len(names), plots)
	}
	if out != "" {
		if err := modelio.WriteTaskModel(out, file); err != nil {
			return err
		}
		fmt.Fprintf(w, "models: %s\n", out)
	}
	return nil
}
