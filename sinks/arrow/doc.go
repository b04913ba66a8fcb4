// Package arrow writes batches as Apache Arrow IPC, the columnar output that
// analysis tools (pyarrow, polars, DuckDB, R arrow, arrow-js) read without a
// parser. Its tables (RecordTables) are the schemas of every columnar
// output: sinks/parquet writes the same ones through Builder.
//
// # Formats
//
// FormatStream ("stream", conventionally *.arrows) uses the IPC streaming
// format: the schema, then one record batch per tracecast batch, each written
// and flushed to the OS as soon as it arrives; Close appends the
// end-of-stream marker. A file is written, as every output, as PATH.tmp
// renamed by Close (internal/output), except in a live pipeline
// (Options.InPlace): there the file is readable while it is written and a
// killed run keeps every flushed batch. Path "-" streams to standard output.
//
// FormatFile ("file", conventionally *.arrow) uses the IPC file format, whose
// footer indexes the batches for random access and is only written by Close.
// Because a file without its footer is unreadable, the sink writes PATH.tmp
// and renames it to PATH after the footer is written and synced: PATH either
// does not exist or is complete. A PATH.tmp already there was left by a
// killed run: it is removed first (logged), never written through. A PATH
// that is a device or a named pipe (/dev/null, a consumer's FIFO) is
// written in place, since a rename would replace it with a regular file;
// Abort then leaves it without a footer.
//
// Record batches never use dictionary-encoded columns (arrow/go v15 leaks
// memory with dictionary deltas) and every record is released after writing.
//
// # Entity schema (tracecast.entity/1)
//
// The default table, EntityTable, writes []tracecast.Entity batches, one row
// per entity, with the columns pj_dump prints:
//
//	column           type     nullable  meaning
//	nature           utf8     no        Container, State, Variable, Event or Link
//	container        utf8     no        container holding the entity (parent, for a container)
//	type             utf8     no        entity type name
//	start            float64  no        start time, in trace units
//	end              float64  no        end time (= start for events)
//	duration         float64  no        end − start
//	imbrication      int32    no        state nesting depth (0 for other natures)
//	value            utf8     no        state/event/link value, container name ("" for variables)
//	number           float64  yes       variable value; null for other natures
//	start_container  utf8     yes       link source container; null unless Link
//	end_container    utf8     yes       link destination container; null unless Link
//	key              utf8     yes       link key; null unless Link
//	extra            utf8     yes       JSON object of user-defined fields in header order; null when none
//
// Schema metadata: "tracecast.schema" = "tracecast.entity/1" and "time_unit"
// = the unit of start, end and duration ("s", "ms", ... or "trace" when the
// pipeline does not know it: seconds for SimGrid, milliseconds for StarPU).
// Times stay in trace units rather than UTC timestamps because Paje times are
// relative to the start of the run, not wall-clock instants.
//
// # Other record types
//
// Later stages declare their own schema with NewTable: an Arrow schema plus
// a bind function that resolves the typed column builders once and returns
// the per-record append function. A Sink is given the tables it may write
// (Options.Tables) and picks the one matching the item type of the first
// non-empty batch; one output holds one schema.
package arrow
