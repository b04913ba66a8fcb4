// Package files registers the component types the states command uses
// with its text formats — the file source, the Paje parser and the
// pjdump, CSV and JSON-lines sinks — apart from app/builtin, which
// registers every type, so that a binary of the states command links these
// alone (app/reader, internal/front; the Arrow and Parquet sinks are
// app/builtin/columnar's).
package files

import (
	"github.com/tracecast/tracecast/ingest/file"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/sinks/csv"
	"github.com/tracecast/tracecast/sinks/jsonl"
	"github.com/tracecast/tracecast/sinks/pjdump"
)

// Register registers the file source, the Paje parser and the text file
// sinks.
func Register(r *component.Registry) {
	file.Register(r)
	paje.Register(r)
	jsonl.Register(r)
	csv.Register(r)
	pjdump.Register(r)
}
