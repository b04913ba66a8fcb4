// Package columnar registers the states command's columnar file sinks,
// Arrow and Parquet. They are kept apart from the other file components
// (app/builtin/files) so that the front binary, which runs states with
// the text formats, does not link their libraries: their package
// initializers were 0.7 ms of its start-up (docs/performance.md); states
// --format arrow|parquet runs in the full binary.
package columnar

import (
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/sinks/parquet"
)

// Register registers the arrow and parquet sinks.
func Register(r *component.Registry) {
	arrow.Register(r)
	parquet.Register(r)
}
