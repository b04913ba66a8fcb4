package main

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/lineerr"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/builtin"
	"github.com/tracecast/tracecast/pipelines/component"
)

// runSpec runs the pipeline a command built from its flags, with the
// command's own consumers registered as sink types under their names. An
// invalid option is the user's flag: a usage error (exit 2), not a
// configuration file's (78). more registers other component types.
func runSpec(ctx context.Context, spec pipelines.Spec, sinks map[string]tracecast.Sink, more ...func(*component.Registry)) error {
	return runSpecReporting(ctx, spec, sinks, nil, more...)
}

// runSpecReporting is runSpec with the components' end-of-stream reports
// (a parser's statistics) handed to report instead of logged.
func runSpecReporting(ctx context.Context, spec pipelines.Spec, sinks map[string]tracecast.Sink, report func(id, stream string, r any), more ...func(*component.Registry)) error {
	reg := builtin.Registry()
	for name, s := range sinks {
		component.RegisterSinkValue(reg, name, s)
	}
	for _, m := range more {
		m(reg)
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
	return componentErr(pipelines.Run(ctx, cfg, pipelines.RunOptions{Registry: reg, Logger: log, HardStop: hard, Embedded: true, Report: report}))
}

// componentErr is what a command shows of its pipeline's failure: the
// component's own error (FILE:LINE: reason from a parser, a file that
// cannot be opened) without the runtime's labels, which name a pipeline the
// user never wrote.
func componentErr(err error) error {
	var le *lineerr.Error
	if errors.As(err, &le) {
		return le
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe
	}
	return err
}

// traceSource is a file source (path, or - for standard input) with the
// paje parser.
func traceSource(path string, lenient, noStrict bool) pipelines.Node {
	return pipelines.Node{ID: "trace", Type: "file", Options: map[string]any{"path": path},
		Parser: &pipelines.Node{Type: "paje", Options: map[string]any{"lenient": lenient, "no_strict": noStrict}}}
}
