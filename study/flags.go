package study

import (
	"errors"
	"path/filepath"

	"github.com/tracecast/tracecast/internal/paths"
)

// TrainFlags are the train command's analysis and fit options, also
// reproduce's: the TrainConfig with its window sizes and KS method as the
// user wrote them, parsed by Config.
type TrainFlags struct {
	TrainConfig
	Windows string `flag:"windows" help:"candidate window sizes in samples: a list or FROM:TO:STEP"`
	Method  string `flag:"method" help:"KS p-value method: matlab, scipy, r"`
}

// DefaultTrainFlags are train's defaults.
func DefaultTrainFlags() TrainFlags {
	return TrainFlags{TrainConfig: DefaultTrainConfig(), Windows: "1000:50000:1000", Method: "matlab"}
}

// Config is the TrainConfig with the windows and method parsed; a bad one
// is a *UsageError.
func (t TrainFlags) Config() (TrainConfig, error) {
	err := t.TrainConfig.Parse(t.Windows, t.Method)
	return t.TrainConfig, err
}

// TrainInputs checks the train command's options: -o DIR given, and none of
// the files it writes there one of its inputs (the metadata files of
// metaDir, or args); both *UsageError.
func TrainInputs(metaDir, out string, args []string) error {
	if out == "" {
		return usageErr(errors.New("-o DIR is required"))
	}
	ins := args
	if metaDir != "" {
		metas, _ := filepath.Glob(filepath.Join(metaDir, "*.meta.json"))
		ins = append(ins, metas...)
	}
	if err := paths.CheckOutputs(ins, paths.InDir(out, "window-model.json", "traces.jsonl", "points.csv")...); err != nil {
		return usageErr(err)
	}
	return nil
}

// Check refuses, as *UsageError, a synth run without -o TRACE or whose
// files are one file (by their real paths), naming their flags.
func (f SynthFiles) Check() error {
	if f.Trace == "" {
		return usageErr(errors.New("-o TRACE is required"))
	}
	meta := "--meta"
	if f.Meta == "" {
		meta = "the metadata file (--meta's default)"
	}
	if err := paths.CheckNamed(paths.Use{Who: "-o", Path: f.Trace}, paths.Use{Who: meta, Path: f.MetaPath()}, paths.Use{Who: "--dot", Path: f.DOT}); err != nil {
		return usageErr(err)
	}
	return nil
}

// ReproduceFlags are the reproduce command's options: the training's, the
// workload's and the study's, its sizes as the user wrote them.
type ReproduceFlags struct {
	TrainFlags
	SynthConfig
	Out               string `flag:"output,o" help:"output directory"`
	TrainSubsets      int    `flag:"train-subsets" help:"training DAG subsets (one DAG per size each)"`
	ValidationSubsets int    `flag:"validation-subsets" help:"validation DAG subsets, disjoint from the training ones"`
	Sizes             string `flag:"sizes" help:"DAG size groups (tasks): a list or FROM:TO:STEP"`
	ClusterSizes      string `flag:"cluster-sizes" help:"cluster sizes R (workers)"`
	Seed              uint64 `flag:"study-seed" help:"seed of the whole study"`
	KeepTraces        bool   `flag:"keep-traces" help:"also write the traces and metadata to DIR/traces"`
}

// DefaultReproduceFlags are reproduce's defaults: the reduced scale.
func DefaultReproduceFlags() ReproduceFlags {
	return ReproduceFlags{TrainFlags: DefaultTrainFlags(), SynthConfig: DefaultSynthConfig(), Out: "reproduce/out", TrainSubsets: 8, ValidationSubsets: 3,
		Sizes: "1000:4000:200", ClusterSizes: "8,16,32,64,128,256", Seed: 2013}
}

// Config is the study f asks for; a bad option is a *UsageError.
func (f ReproduceFlags) Config() (*ReproduceConfig, error) {
	tc, err := f.TrainFlags.Config()
	if err != nil {
		return nil, err
	}
	c := &ReproduceConfig{TrainConfig: tc, Synth: f.SynthConfig, Out: f.Out, TrainSubsets: f.TrainSubsets, ValidationSubsets: f.ValidationSubsets,
		Seed: f.Seed, KeepTraces: f.KeepTraces}
	return c, c.ParseSizes(f.Sizes, f.ClusterSizes)
}
