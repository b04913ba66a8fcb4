// duckcheck.mjs: queries tracecast's outputs with DuckDB, a reader the
// project did not write.
//
// Usage: node duckcheck.mjs SQL...
//
// Runs each SQL statement in one in-memory DuckDB database (@duckdb/node-api,
// pinned in package-lock.json), in order, and prints one JSON object per
// statement on its own line:
//
//   {"columns":[names...], "types":[DuckDB type names...], "rows":[[...], ...]}
//
// Values: integers as JSON numbers (as strings beyond 2^53), doubles as the
// shortest decimal that round-trips ("NaN", "Infinity" as strings), NULL as
// null, timestamps, lists and other DuckDB values as their text form.
// It exits non-zero, with DuckDB's message on stderr, if a statement fails.
// The Go tests (internal/duckdbtest) run it on the Parquet files tracecast
// writes.
import { DuckDBInstance } from "@duckdb/node-api";

function plain(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (typeof v === "number") return Number.isFinite(v) ? v : String(v);
  if (typeof v === "string" || typeof v === "boolean") return v;
  return String(v);
}

const db = await DuckDBInstance.create(":memory:");
const conn = await db.connect();
try {
  for (const sql of process.argv.slice(2)) {
    const reader = await conn.runAndReadAll(sql);
    console.log(JSON.stringify({
      columns: reader.columnNames(),
      types: reader.columnTypes().map((t) => t.toString()),
      rows: reader.getRows().map((row) => row.map(plain)),
    }));
  }
} catch (err) {
  console.error(err && err.message ? err.message : String(err));
  process.exitCode = 1;
} finally {
  conn.closeSync();
}
