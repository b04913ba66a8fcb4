package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/report"
	stage "github.com/tracecast/tracecast/stages/forecast"
)

func newReportCmd() *cobra.Command {
	var out, rules string
	var horizons []string
	var lenient, noStrict bool
	cmd := &cobra.Command{
		Use:   "report TRACE -o report.html",
		Short: "Write one self-contained HTML page about a trace: Gantt chart, occupancy, forecasts and their skill",
		Long: `report reads a trace and writes one HTML page that opens in any browser
without network access: the trace's summary, a zoomable Gantt chart of the
selected containers' states (StarPU workers or SMPI ranks) as StarVZ and
ViTE draw it, how many are idle, computing or communicating over time, the
idle-capacity forecasts (idle>=25%) drawn over what happened, and their skill
against the baselines (docs/forecasts.md). Large traces are aggregated so the
page stays small.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr(fmt.Errorf("-o report.html is required"))
			}
			var hs []float64
			for _, h := range horizons {
				s, err := stage.ParseDuration(h)
				if err != nil {
					return usageErr(fmt.Errorf("--horizon: %w", err))
				}
				hs = append(hs, s)
			}
			c, err := report.NewPageCollector(rules)
			if err != nil {
				return usageErr(err)
			}
			spec := pipelines.Spec{Name: "report", Sources: []pipelines.Node{traceSource(args[0], lenient, noStrict)},
				Sinks: []pipelines.Node{{ID: "page", Type: "page", Inputs: []string{"trace"}}}}
			if err := runSpec(cmd.Context(), spec, map[string]tracecast.Sink{"page": c}); err != nil {
				return err
			}
			page, err := c.Page(report.PageOptions{Title: args[0], Horizons: hs})
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			f, err := os.Create(out)
			if err != nil {
				return err
			}
			if err := errors.Join(page.WriteHTML(f), f.Close()); err != nil {
				return err
			}
			fmt.Println(out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the HTML file to write")
	cmd.Flags().StringVar(&rules, "rules", "auto", "state classes: auto, starpu, smpi")
	cmd.Flags().StringArrayVar(&horizons, "horizon", nil, "forecast horizons (default: 0.1%, 1% and 10% of the run)")
	cmd.Flags().BoolVar(&lenient, "lenient", false, "skip bad trace lines instead of failing")
	cmd.Flags().BoolVarP(&noStrict, "no-strict", "n", false, "accept the deprecated field names of old traces (pj_dump -n)")
	return cmd
}
