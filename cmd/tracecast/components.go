package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tracecast/tracecast/pipelines/builtin"
)

func newComponentsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "components [TYPE]",
		Short: "List the pipeline components (sources, parsers, stages, sinks) with their options and defaults",
		Long: `components lists every component type a pipeline file can use, by kind,
with each option's YAML key, type and default (blank: unset or zero). Given a
type name, it shows only that type. The list is generated from the same
config structs the pipelines decode, so it is what 'tracecast validate'
accepts.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			found := false
			for _, d := range builtin.Registry().Describe() {
				if len(args) == 1 && d.Name != args[0] {
					continue
				}
				found = true
				fmt.Fprintf(tw, "%s %s\t%s\n", d.Kind, d.Name, d.Doc)
				for _, o := range d.Options {
					def := o.Default
					if def != "" {
						def = "default " + def
					}
					fmt.Fprintf(tw, "  %s\t%s\t%s\n", o.Key, o.Type, def)
				}
				fmt.Fprintln(tw)
			}
			if !found {
				return usageErr(fmt.Errorf("no component type %q", args[0]))
			}
			return tw.Flush()
		},
	}
}
