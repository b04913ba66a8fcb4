// check-arrow.mjs: an independent reader for tracecast's Arrow IPC output.
//
// Usage: node check-arrow.mjs FILE...
//
// Opens each FILE with the JavaScript Arrow implementation (apache-arrow from
// npm, pinned in package-lock.json), whichever IPC format it is in (file or
// stream), and prints one JSON object per FILE on its own line:
//
//   {"path":..., "format":"file"|"stream", "rows":N, "batches":N,
//    "columns":[names...], "types":[...], "nullable":[...], "nulls":[...],
//    "metadata":{...}, "first":{...first row...}}
//
// It exits non-zero if a file cannot be read. The Go tests in sinks/arrow run
// it to prove that another Arrow implementation reads what we write.
import { readFileSync } from "node:fs";
import { RecordBatchReader, Table } from "apache-arrow";

function plain(v) {
  if (typeof v === "bigint") return Number(v);
  if (v === null || v === undefined) return null;
  return v;
}

let failed = false;
for (const path of process.argv.slice(2)) {
  try {
    const bytes = readFileSync(path);
    const reader = RecordBatchReader.from(bytes);
    reader.open();
    const format = reader.isFile() ? "file" : "stream";
    const batches = [...reader];
    const table = new Table(reader.schema, batches);
    const fields = table.schema.fields;
    const first = {};
    if (table.numRows > 0) {
      for (const f of fields) first[f.name] = plain(table.getChild(f.name).get(0));
    }
    console.log(JSON.stringify({
      path,
      format,
      rows: table.numRows,
      batches: batches.length,
      columns: fields.map((f) => f.name),
      types: fields.map((f) => String(f.type)),
      nullable: fields.map((f) => f.nullable),
      nulls: fields.map((f) => table.getChild(f.name)?.nullCount ?? 0),
      metadata: Object.fromEntries(table.schema.metadata),
      first,
    }));
  } catch (err) {
    failed = true;
    console.error(`${path}: ${err && err.stack ? err.stack : err}`);
  }
}
process.exit(failed ? 1 : 0);
