// Package tracecast is the vocabulary shared by every tracecast component: the
// records that travel between stages (resolved Paje entities, lines), the batch
// that carries them, and the contracts of sources, processors (parsers and
// stages) and sinks. It holds no behaviour beyond small helpers on these types;
// the runtime lives in package pipelines, the components in ingest/, parsers/,
// stages/ and sinks/.
package tracecast

// The record types' JSON encoders and JSON Schemas are derived from their
// structs' tags (internal/recordgen).
//go:generate go run ./tools/recordgen
