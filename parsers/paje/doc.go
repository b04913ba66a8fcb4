// Package paje reads Paje traces (the format of pajeng, StarPU, SimGrid and
// ViTE) as a stream and resolves them into tracecast.Entity records: container
// lifetimes, state intervals with their imbrication level, variable pieces,
// events and links — the records Debian pajeng's pj_dump prints.
//
// The reader is header-driven: %EventDef blocks map event ids to definitions,
// fields are found by name (never by position), one event name may have
// several definitions, and user-defined fields are kept by name. Unlike
// pj_dump, it does not hold the trace in memory: an entity is emitted as soon
// as it is complete, so memory is bounded by the live containers, open states
// and pending links, plus the reorder buffer (Options.HeapBound).
//
// Read cuts its input into chunks of whole lines, tokenizes and decodes them
// on Options.Threads goroutines and resolves them in order on the calling
// one: the output does not depend on the number of threads. Nothing is
// allocated per line once the trace's containers and recurring values are
// known.
//
// StarPU writes its traces in milliseconds and not in time order. The reader
// holds events in a reorder buffer and processes them in time order as long as
// they are at most ReorderHorizon late; an event later than that is processed
// as it comes, which is still valid as long as it does not go back in time on
// its own (container, type) — the rule pajeng enforces. When it does, the error
// names the line and suggests a larger horizon.
package paje
