// Package pipelines is the tracecast runtime: it loads a pipeline file,
// resolves its components through an explicit Registry, wires them into a
// graph of goroutines connected by bounded channels, and runs the graph with
// a graceful and a hard stop. Components (ingest/, parsers/, stages/, sinks/)
// implement the contracts of the root package and never start goroutines or
// select on channels of the graph themselves.
//
// # Pipeline file
//
//	version: 1                      # required, must be 1
//	name: replay-starpu             # used in logs
//	settings:                       # all optional
//	  edge_capacity: 16             # batches per edge before the producer blocks
//	  shutdown_timeout: 20s         # graceful stop budget, then everything is cancelled
//	  status_interval: 30s          # status log line period; 0 disables it
//	sources:
//	  trace:                        # ids are unique across sources, stages and sinks
//	    type: file
//	    path: traces/run.trace.gz   # plain or gzip (by magic bytes); - is stdin
//	    speed: max                  # max | realtime | Nx (10x, 0.5x): pacing by trace time
//	    max_line_bytes: 1048576
//	    batch_lines: 1024
//	    strict_eol: false           # true: a missing final newline is an error
//	    time_unit: ms               # for pacing; default: the parser's, else s
//	    parser:                     # optional: without it the source emits raw lines
//	      type: paje
//	      lenient: false            # parser options, see paje.ParserConfig
//	      time_unit: ms
//	  runs:                         # traces from Kafka (see package ingest/kafka)
//	    type: kafka
//	    brokers: [127.0.0.1:9092]
//	    topic: tracecast.traces     # one trace per key; lines, seq and end headers
//	    group: tracecast-live       # members of a group share the partitions
//	    start: earliest             # earliest | latest, without a committed offset
//	    commit_interval: 1s         # checkpoint barrier period
//	    max_wait: 250ms             # fetch long poll (bounds a stop, not latency)
//	    session_timeout: 6s         # a silent member leaves the group after this
//	    batch_lines: 4096
//	    trace_timeout: 0s           # end a trace silent that long (0: never)
//	    tls: {ca: ca.pem, cert: client.pem, key: client-key.pem}  # optional; {} for the system's CAs
//	    sasl: {mechanism: SCRAM-SHA-512, user: u, password_env: KAFKA_PASSWORD}  # or password_file; never the password
//	    parser: {type: paje, time_unit: ms}
//	stages:
//	  idle: {type: predict, inputs: [trace], ...}     # see predict.StageConfig, signal.StageConfig
//	sinks:
//	  archive:
//	    type: arrow
//	    inputs: [trace]
//	    path: out/entities.arrow
//	    format: file                # file (footer on close, via PATH.tmp) | stream (flushed per batch)
//	    time_unit: ms               # recorded in the schema metadata
//	  dump:
//	    type: jsonl
//	    inputs: [trace]
//	    path: "-"                   # stdout
//
// Decoding is strict at every level: an unknown key is an error naming the
// key, its line and the keys that are known. Each component's own options
// are decoded into the config struct its package registered
// (file.SourceConfig, paje.ParserConfig, jsonl.SinkConfig, ...; see package
// component and `tracecast components`), starting from that type's
// defaults. Parse checks the structure (version, ids, inputs that exist and
// are not sinks, no cycles, stages and sinks with inputs, at least one
// source and one sink); Check and Validate add the types and options. All problems are reported at once in a *ConfigError.
//
// # Runtime
//
// Each source runs in its own goroutine, its parser (if any) in another
// right after it, and each stage and sink in one more. Every consumer has
// one inbound channel of edge_capacity batches, fed by all its inputs (fan-in,
// per-edge order preserved) and closed when the last of them finishes; a
// producer with several consumers sends every batch to each of them in turn
// (fan-out, shared read-only), so the slowest consumer paces the producer:
// backpressure, never unbounded buffering.
//
// Stopping has three paths:
//
//   - end of input: sources return, channels close downstream in order,
//     processors Flush, sinks Close; Run returns nil.
//   - graceful stop (the ctx given to Run is cancelled, e.g. by the first
//     SIGINT, see WithSignals): only sources see it; the rest drains exactly
//     as at end of input. Run returns nil.
//   - hard stop: when shutdown_timeout passes after a graceful stop began, or
//     RunOptions.HardStop is closed (second signal), every component's
//     context is cancelled at once. Run returns ErrShutdownTimeout or
//     ErrHardStop.
//
// # Streams, markers and checkpoints
//
// A batch names its stream (Batch.Stream: a file, or a trace id from
// Kafka). The paje parser and the signal and predict stages keep one state
// per stream (at most max_streams at once), so one pipeline follows many
// traces interleaved on a topic. Control items travel in order with the
// data and the runtime handles them: tracecast.StreamEnd (a trace's end
// marker: its state is flushed, final windows and verdicts emitted) and
// tracecast.StreamReset (state dropped: the trace will be read again from
// its start, after a consumer-group rebalance) and tracecast.StreamDrop
// (a stage evicted the trace for max_streams, or dropped it after an
// error: the stages after it drop their state unflushed and ignore the
// trace until it ends) go to processors that implement
// tracecast.StreamProcessor, then downstream. A
// tracecast.Barrier is passed along every path (one hold per consumer) and
// released by each sink once what it received before it is durable: when
// Write returns, or, for sinks durable only when closed (an Arrow file,
// tracecast.CloseDurable), after Close. When the last hold is released the
// source may commit its position; a barrier that is lost (an error, a hard
// stop) is never released, so nothing is committed on its behalf.
//
// The first component error, or a recovered panic, cancels the whole graph
// and is returned labelled with the component: `sink "archive" (arrow): ...`.
// Sinks are closed exactly once on every path.
//
// Every status_interval a "status" log line gives, per source, bytes read
// of the total, lines, records and records/s, and the depth of every queue.
// RunOptions.Progress receives the aggregated progress for a progress bar
// (package progress).
package pipelines
