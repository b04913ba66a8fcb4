package main

import (
	"context"
	"errors"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/builtin"
	"github.com/tracecast/tracecast/pipelines/component"
)

// runSpec runs the pipeline a command built from its flags, with the
// command's own consumers registered as sink types under their names. An
// invalid option is the user's flag: a usage error (exit 2), not a
// configuration file's (78).
func runSpec(ctx context.Context, spec pipelines.Spec, sinks map[string]tracecast.Sink) error {
	reg := builtin.Registry()
	for name, s := range sinks {
		component.RegisterSinkValue(reg, name, s)
	}
	spec.Settings = map[string]any{"status_interval": "0s"}
	cfg, err := spec.Config()
	if err == nil {
		err = pipelines.Check(reg, cfg)
	}
	var ce *pipelines.ConfigError
	if errors.As(err, &ce) {
		// The messages, without the generated file's lines: each names
		// the option its flag set ("class: unknown class ...").
		msgs := make([]string, len(ce.Problems))
		for i, p := range ce.Problems {
			msgs[i] = p.Msg
		}
		return usageErr(errors.New(strings.Join(msgs, "; ")))
	} else if err != nil {
		return err
	}
	ctx, hard, stop := pipelines.WithSignals(ctx, log)
	defer stop()
	return pipelines.Run(ctx, cfg, pipelines.RunOptions{Registry: reg, Logger: log, HardStop: hard})
}

// traceSource is a file source (path, or - for standard input) with the
// paje parser.
func traceSource(path string, lenient, noStrict bool) pipelines.Node {
	return pipelines.Node{ID: "trace", Type: "file", Options: map[string]any{"path": path},
		Parser: &pipelines.Node{Type: "paje", Options: map[string]any{"lenient": lenient, "no_strict": noStrict}}}
}
