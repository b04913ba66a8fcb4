package main

import (
	"fmt"
	"github.com/tracecast/tracecast/internal/cliflags"
	"strings"

	"github.com/spf13/cobra"
)

// newHelpCmd is `tracecast help [command]`: cobra's, except that a topic
// that is no command is a usage error (exit 2) saying so, not the usage
// text with exit 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "help prints the help of a command: what it does, its arguments and flags.",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, _, err := c.Root().Find(args)
			if cmd == nil || err != nil {
				return cliflags.Usage(fmt.Errorf("unknown help topic %q: 'tracecast --help' lists the commands", strings.Join(args, " ")))
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}
