// Package file replays a file as batches of positioned lines: the ingest half
// of a replay, which knows files, compression and offsets but nothing about
// trace formats (parsers/ turn the lines into records).
//
// A Source reads a plain or gzip-compressed file (gzip is recognised by its
// magic bytes, not by the file name, so renamed or piped archives work), or
// standard input when the path is "-". Lines are split on '\n' and a trailing
// '\r' is removed. Each emitted batch owns the bytes of its lines in a single
// arena allocated for that batch, because a batch is handed to another
// goroutine and outlives the read buffer; nothing is recycled, so a consumer
// may keep a batch as long as it likes.
//
// Line.End is the byte offset just after the line's terminator on the
// decompressed stream, so a downstream consumer can name a position that
// survives re-reading. Progress, by contrast, counts bytes of the file as
// stored (compressed for gzip), because that is what the total size refers to
// and what a progress bar needs.
//
// Replays can be paced by trace time ("realtime", "10x", "0.5x"): the source
// asks a format-specific TimeOf hook for each line's timestamp and sleeps so
// that trace time advances at Speed × wall time, which makes a recorded trace
// look live to the rest of the pipeline.
package file
