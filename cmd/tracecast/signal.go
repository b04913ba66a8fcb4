package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/pipelines"
)

// signalFlags are the flags shared by the commands that sample a signal.
type signalFlags struct {
	class      string
	rules      string
	period     float64
	minPeriod  float64
	maxSamples int
	lenient    bool
	noStrict   bool
}

func (f *signalFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.class, "class", "idle", "the class counted: idle, compute, comm, other")
	fl.StringVar(&f.rules, "rules", "auto", "state classes: auto (starpu when there are StarPU worker states, else smpi), starpu, smpi")
	fl.Float64Var(&f.period, "period", 0, "sampling period Δ in trace time units (0: seed 004's rule, half the shortest time between two changes of the signal)")
	fl.Float64Var(&f.minPeriod, "min-period", 0, "floor for the automatic period, in trace time units")
	fl.IntVar(&f.maxSamples, "max-samples", 10_000_000, "the automatic period is raised so that the signal has at most this many samples")
	fl.BoolVar(&f.lenient, "lenient", false, "skip bad trace lines instead of failing")
	fl.BoolVarP(&f.noStrict, "no-strict", "n", false, "accept the deprecated field names of old traces (pj_dump -n)")
}

// stage is the signal stage these flags configure, reading "trace".
func (f *signalFlags) stage(typ string) pipelines.Node {
	return pipelines.Node{ID: typ, Type: typ, Inputs: []string{"trace"}, Options: map[string]any{"rules": f.rules, "class": f.class,
		"period": f.period, "min_period": f.minPeriod, "max_samples": f.maxSamples}}
}

func newSignalCmd() *cobra.Command {
	var f signalFlags
	var out string
	cmd := &cobra.Command{
		Use:   "signal [flags] TRACE -o FILE",
		Short: "Sample the event-occurrence signal of a trace (how many workers are idle, computing, ...)",
		Long: `signal reads a trace, classifies the states of the selected containers
(--rules: StarPU workers or SMPI ranks) and writes x_k, the number of
containers in --class at t_k = t_0 + kΔ, as Arrow (FILE.arrow) or CSV
(FILE.csv, or - for standard output). Period and times are in the trace's
own unit (milliseconds for StarPU).

Semantics: the innermost (top-of-stack) state decides a container's class;
states are [start, end) intervals; t_0 is the first state start among the
selected containers and samples are taken while t_k is before the last state
end. Without --period, Δ is seed 004's: half the shortest time between two
successive changes of the signal, raised to --min-period and to
(end − t_0)/--max-samples; a log line says which Δ was used and how many
samples it makes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr(fmt.Errorf("-o FILE is required (.arrow or .csv, - for CSV on standard output)"))
			}
			ext := strings.ToLower(filepath.Ext(out))
			if out != "-" && ext != ".csv" && ext != ".arrow" {
				return usageErr(fmt.Errorf("-o %s: the extension says the format: .arrow or .csv", out))
			}
			spec := pipelines.Spec{Name: "signal", Sources: []pipelines.Node{traceSource(args[0], f.lenient, f.noStrict)},
				Stages: []pipelines.Node{f.stage("signal")},
				Sinks:  []pipelines.Node{{ID: "out", Type: "csv", Inputs: []string{"signal"}, Options: map[string]any{"path": out, "records": "samples"}}}}
			if ext == ".arrow" {
				spec.Sinks[0].Type = "arrow"
			}
			if err := checkOutputs(args, out); err != nil {
				return err
			}
			return runSpec(cmd.Context(), spec, nil)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "output: FILE.arrow, FILE.csv or - (CSV)")
	return cmd
}
