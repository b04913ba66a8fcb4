package main

import (
	"errors"

	"github.com/tracecast/tracecast/internal/paths"
	"github.com/tracecast/tracecast/pipelines/specs"
)

// runner runs the commands' pipelines with the CLI's logger.
func runner() specs.Runner { return specs.Runner{Log: log} }

// checkOutputs refuses, before anything is opened, output files that are
// one of the inputs or each other (by their real paths): a usage error.
// Pipelines check their sinks themselves (pipelines.Check).
func checkOutputs(inputs []string, outputs ...string) error {
	var uses []paths.Use
	for _, in := range inputs {
		uses = append(uses, paths.Use{Who: "the command", Path: in})
	}
	for _, out := range outputs {
		uses = append(uses, paths.Use{Who: "-o", Path: out, Output: true})
	}
	if errs := paths.Conflicts(uses); len(errs) > 0 {
		return usageErr(errors.Join(errs...))
	}
	return nil
}
