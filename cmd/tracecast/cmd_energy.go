package main

import "github.com/spf13/cobra"

// energyCommands are the energy and power-model commands (energy,
// powermodel, ctmodel, pareto, ...).
func energyCommands() []*cobra.Command { return nil }
