package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/report"
	"github.com/tracecast/tracecast/stages/energy"
	stage "github.com/tracecast/tracecast/stages/forecast"
)

func newReportCmd() *cobra.Command {
	var out, rules string
	var horizons []string
	var lenient, noStrict bool
	var power, mapping []string
	pin := report.EnergyInputs{Stage: energy.DefaultStageConfig()}
	cmd := &cobra.Command{
		Use:   "report TRACE [--power FILE]... -o report.html",
		Short: "Write one self-contained HTML page about a trace: Gantt chart, occupancy, forecasts and their skill",
		Long: `report reads a trace and writes one HTML page that opens in any browser
without network access: the trace's summary, a zoomable Gantt chart of the
selected containers' states (StarPU workers or SMPI ranks) as StarVZ and
ViTE draw it, how many are idle, computing or communicating over time, the
idle-capacity forecasts (idle>=25%) drawn over what happened, and their skill
against the baselines (docs/forecasts.md). Large traces are aggregated so the
page stays small.

With --power (repeatable: one power-meter stream per file, in any format
tracecast energy reads), the page also shows the power over time under the
occupancy and the energy of each node by state class, as tracecast energy
computes it (same --node, --map, --node-type, --offset, --max-gap,
--lateness, --power-format, --metric), with warnings when samples miss the
run (docs/report.md).`,
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
			var ein *report.EnergyInputs
			if len(power) > 0 {
				var err error
				pin.Power, pin.Lenient, pin.Stage.Rules = power, lenient, rules
				if pin.Stage.Map, err = report.ParseNodeMap(mapping); err != nil {
					return usageErr(err)
				}
				if err := pin.Validate(); err != nil {
					return usageErr(err)
				}
				ein = &pin
			} else {
				for _, f := range []string{"power-format", "metric", "node", "map", "node-type", "offset", "max-gap", "lateness"} {
					if cmd.Flags().Changed(f) {
						return usageErr(fmt.Errorf("--%s is an option of the power streams: give --power", f))
					}
				}
			}
			if err := writeReportEnergy(cmd.Context(), args[0], out, rules, hs, lenient, noStrict, ein); err != nil {
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
	fl := cmd.Flags()
	fl.StringArrayVar(&power, "power", nil, "power stream (plain or gzip; repeatable): adds the power chart and the energy by state")
	fl.StringVar(&pin.Format, "power-format", "auto", "power format: auto, csv, jsonl, rapl, kwollect")
	fl.StringVar(&pin.Metric, "metric", "", "with Kwollect input: keep only this metric_id (e.g. wattmetre_power_watt)")
	fl.StringVar(&pin.Stage.Node, "node", energy.DefaultNode, "node of unmapped workers and of power rows without a node")
	fl.StringArrayVar(&mapping, "map", nil, "CONTAINER=NODE: put a worker on a node (repeatable)")
	fl.StringVar(&pin.Stage.NodeType, "node-type", "", "put each unmapped worker on its nearest ancestor container of this type (e.g. \"Memory Node\")")
	fl.Float64Var(&pin.Stage.Offset, "offset", 0, "power time minus trace time, seconds (e.g. the run's start epoch for Kwollect)")
	fl.Float64Var(&pin.Stage.MaxGap, "max-gap", 5, "longest interval between power samples that is integrated, seconds")
	fl.Float64Var(&pin.Stage.Lateness, "lateness", 0, "how late (s) a power sample may arrive and still be used")
	return cmd
}

// writeReport reads the trace at path and writes its HTML report to out.
func writeReport(ctx context.Context, path, out, rules string, hs []float64, lenient, noStrict bool) error {
	return writeReportEnergy(ctx, path, out, rules, hs, lenient, noStrict, nil)
}

// writeReportEnergy is writeReport with, when ein is set, the energy
// section from its power streams.
func writeReportEnergy(ctx context.Context, path, out, rules string, hs []float64, lenient, noStrict bool, ein *report.EnergyInputs) error {
	c, err := report.NewPageCollector(rules)
	if err != nil {
		return usageErr(err)
	}
	spec := pipelines.Spec{Name: "report", Sources: []pipelines.Node{traceSource(path, lenient, noStrict)},
		Sinks: []pipelines.Node{{ID: "page", Type: "page", Inputs: []string{"trace"}}}}
	sinks := map[string]tracecast.Sink{"page": c}
	o := report.PageOptions{Title: path, Horizons: hs}
	if ein != nil {
		if err := ein.AddTo(&spec, "trace", "energy-page"); err != nil {
			return usageErr(err)
		}
		o.Energy = report.NewEnergyCollector(*ein)
		sinks["energy-page"] = o.Energy
	}
	if err := runSpec(ctx, spec, sinks); err != nil {
		return err
	}
	page, err := c.Page(o)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	return firstErr(page.WriteHTML(f), f.Close())
}
