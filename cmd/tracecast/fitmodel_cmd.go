package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracecast/tracecast/app/specs"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/models/modelio"
)

func newFitModelCmd() *cobra.Command {
	o := specs.FitModelCmd{TaskFit: modelio.DefaultTaskFit()}
	cmd := &cobra.Command{
		Use:   "fit-model FILE.csv|TASKS.arrow|TASKS.jsonl|CODELET.out --target COLUMN [--group COLUMN] [--threshold T] [--clusters K] [--inputs a,b] [--pca] [--max-factors N] [-o model.json] | fit-model --starpu-dir DIR [--write-back]",
		Short: "Fit models of a task's duration (or energy) from its parameters, one per codelet and worker kind",
		Long: `fit-model builds, per group of rows (default for a tasks file: codelet and
worker kind), a formula for the --target column from the inputs (default:
the tasks' parameters, or every numeric column of a CSV): constant and
redundant inputs are dropped, the rows are split into --clusters by
k-means, and terms (x^-2, x^-1, x^-0.5, log2 x, x^0.5, x, x^2, x*y) enter
one at a time while each raises the adjusted R² by more than --threshold
(Eiger's construction; --pca fits on principal components instead).

It prints each group's formula and fit and, with --folds K, cross-validated
errors next to two baselines: the mean per footprint (StarPU's history
model) and a·size^b + c (StarPU's regression). A model that predicts
negative values for its own rows is marked UNUSABLE. -o writes the models
(for predict-task and the taskmodel stage), --plots measured-vs-predicted
and residual plots. docs/tasks.md.

StarPU's own measurements: a raw file (.starpu/sampling/codelets/tmp/NAME.out,
target Duration in µs by default) is a table like the others; --starpu-dir
DIR ($STARPU_HOME, or its .starpu/sampling/codelets) fits every codelet of
the directory — raw files, and the history of the others by data size — and
prints, for each codelet whose model declares monomials (M^2*N N^3*K), their
least-squares coefficients beside tracecast's own selection; --write-back
writes the coefficients into the model files (a .bak of each kept), where
StarPU's schedulers read them. With StarPU's measurements the terms are
products of up to four factors chosen on held-out parameter combinations
(--max-factors, --select). A damaged or foreign file is reported and skipped.`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.OutOrStdout(), cmd.ErrOrStderr(), strings.Join(args, ""))
		},
	}
	cliflags.Bind(cmd.Flags(), &o)
	return cmd
}

func newPredictTaskCmd() *cobra.Command {
	var q modelio.TaskQuery
	cmd := &cobra.Command{
		Use:   "predict-task --model FILE --codelet NAME [--worker-kind KIND] --param NAME=VALUE...",
		Short: "Evaluate a fit-model model: a task's predicted duration (or energy) from its parameters",
		Long: `predict-task finds the model of the group (--codelet and --worker-kind for
models of tasks grouped as fit-model does by default; --key COLUMN=VALUE for
other group columns), picks the cluster nearest to the parameters, and
prints the prediction as JSON, with the rows of the cluster the model was
fitted on (n) and its training RMSE: a model fitted on one or two tasks
answers too, and says so there. A parameter the model needs and lacks, a
value outside a term's domain (x^-1 at 0, log2 of a non-positive value) and
a negative prediction (a duration or an energy below 0: the model does not
hold there) are errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return specs.PredictTask(cmd.OutOrStdout(), q) },
	}
	cliflags.Bind(cmd.Flags(), &q)
	return cmd
}
