// Package files registers the component types the states command uses —
// the file source, the Paje parser and the file sinks — apart from
// app/builtin, which registers every type, so that a binary of the states
// command links these alone (app/reader, internal/front).
package files

import (
	"github.com/tracecast/tracecast/ingest/file"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/sinks/csv"
	"github.com/tracecast/tracecast/sinks/jsonl"
	"github.com/tracecast/tracecast/sinks/parquet"
	"github.com/tracecast/tracecast/sinks/pjdump"
)

// Register registers the file source, the Paje parser and the file sinks.
func Register(r *component.Registry) {
	file.Register(r)
	paje.Register(r)
	jsonl.Register(r)
	arrow.Register(r)
	csv.Register(r)
	pjdump.Register(r)
	parquet.Register(r)
}
