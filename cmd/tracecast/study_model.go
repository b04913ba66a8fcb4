package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/study"
)

// studyModelFlags are predict's --model and --tasks: the window size comes
// from a window-size model (tracecast train) for the trace's R and T
// instead of --window. Embed in predictFlags, call registerModel from
// register and applyModel once the trace is loaded.
type studyModelFlags struct {
	model string
	tasks int
}

func (f *studyModelFlags) registerModel(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "window-size model from 'tracecast train': the window is the model's for the trace's R (workers) and T (--tasks), instead of --window")
	fl.IntVar(&f.tasks, "tasks", 0, "DAG size T for --model (0: count the tasks in the trace, a second read of the file)")
}

// applyModel sets *window from the model when --model is given (and
// --window is not). path is the trace (for counting tasks), r its
// number of selected containers.
func (f *studyModelFlags) applyModel(path string, r int, window *int) error {
	if f.model == "" {
		return nil
	}
	if *window > 0 {
		return usageErr(fmt.Errorf("give --window or --model, not both"))
	}
	w, T, err := study.ModelWindow(f.model, path, r, f.tasks)
	if err != nil {
		return err
	}
	*window = w
	log.Info().Str("model", f.model).Int("r", r).Int("t", T).Int("window", w).Msg("window from the model")
	return nil
}
