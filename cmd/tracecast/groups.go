package main

import (
	"github.com/spf13/cobra"

	"github.com/tracecast/tracecast/internal/clidoc"
)

// commandGroups are the headings of `tracecast --help`, one per job, in
// order, with the commands under each (help and completion stay under
// "Additional Commands"). A command in no group panics at start.
var commandGroups = []clidoc.Group{
	{ID: "start", Title: "Start here:", Commands: []string{"demo", "report"}},
	{ID: "read", Title: "Read traces:", Commands: []string{"states", "signal", "ks", "hitrate"}},
	{ID: "forecast", Title: "Forecast and decide:", Commands: []string{"predict", "verify", "backfill", "closed-loop"}},
	{ID: "live", Title: "The live service:", Commands: []string{"live", "broker", "publish", "subscribe", "topics"}},
	{ID: "pipelines", Title: "Pipelines:", Commands: []string{"run", "validate", "components"}},
	{ID: "energy", Title: "Energy:", Commands: []string{"energy", "powermodel", "ctmodel", "energy-speedup", "pareto"}},
	{ID: "io", Title: "I/O:", Commands: []string{"iocalls", "iotime", "iobench", "iopredict"}},
	{ID: "tasks", Title: "Task models:", Commands: []string{"tasks", "fit-model", "predict-task"}},
	{ID: "study", Title: "The window-size study (Pallipuram et al. 2014):", Commands: []string{"synth", "train", "reproduce"}},
}

// perCore are the flags whose default is the number of cores.
var perCore = map[string]bool{"threads": true, "jobs": true}

// newGenDocsCmd is the hidden `tracecast gen-docs DIR` (make docs): the
// command reference, one Markdown page per command, generated from the
// commands themselves into DIR (docs/commands). TestCommandDocs fails when
// the committed pages are not what it writes.
func newGenDocsCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-docs DIR",
		Short:  "Write the command reference (Markdown, one page per command) into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return clidoc.Generate(newRootCmd(), args[0], perCore)
		},
	}
}
