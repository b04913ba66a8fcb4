package main

import "github.com/spf13/cobra"

// studyCommands are seed 004's benchmarking-phase commands: the workload
// synthesizer, the surface builder/analyzer and the reduced reproduction.
func studyCommands() []*cobra.Command {
	return []*cobra.Command{newSynthCmd(), newTrainCmd(), newReproduceCmd()}
}
