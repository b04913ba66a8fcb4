// Package builtin lists tracecast's own components: one registration line
// per component type, each defined (config, defaults, validation,
// constructor) in its own package. Adding a component is its package plus
// one line here.
package builtin

import (
	"github.com/tracecast/tracecast/app/builtin/columnar"
	"github.com/tracecast/tracecast/app/builtin/files"
	kafkasource "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/ingest/tail"
	"github.com/tracecast/tracecast/parsers/iocall"
	"github.com/tracecast/tracecast/parsers/power"
	"github.com/tracecast/tracecast/pipelines/component"
	kafkasink "github.com/tracecast/tracecast/sinks/kafka"
	"github.com/tracecast/tracecast/stages/backfill"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/forecast"
	"github.com/tracecast/tracecast/stages/iotime"
	"github.com/tracecast/tracecast/stages/predict"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stages/taskmodel"
	"github.com/tracecast/tracecast/stages/tasks"
)

// Register registers every built-in component type: the states
// command's (files.Register: the file source, the Paje parser, the text
// file sinks; columnar.Register: Arrow and Parquet), then the others.
func Register(r *component.Registry) {
	files.Register(r)
	columnar.Register(r)
	// Sources.
	tail.Register(r)
	kafkasource.Register(r)
	// Parsers.
	iocall.Register(r)
	power.Register(r)
	// Stages.
	signal.Register(r)
	predict.Register(r)
	forecast.Register(r)
	backfill.Register(r)
	iotime.Register(r)
	energy.Register(r)
	tasks.Register(r)
	taskmodel.Register(r)
	// Sinks.
	kafkasink.Register(r)
}

// Registry returns a new registry holding every built-in component.
func Registry() *component.Registry {
	r := component.NewRegistry()
	Register(r)
	return r
}
