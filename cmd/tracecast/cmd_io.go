package main

import "github.com/spf13/cobra"

// ioCommands are the I/O-call commands (iobench, iopredict, ...).
func ioCommands() []*cobra.Command {
	return []*cobra.Command{newIOCallsCmd(), newIOTimeCmd(), newIOBenchCmd(), newIOPredictCmd()}
}
