// Print a Parquet file as DuckDB reads it: one JSON line per row (values
// as DuckDB returns them, bigints as strings), then one line
// {"field_ids": ["name=id", ...], "kv_keys": [...]} in schema order.  Usage: node duck_rows.mjs FILE
import { DuckDBInstance } from "@duckdb/node-api";

const file = process.argv[2];
const db = await DuckDBInstance.create(":memory:");
const c = await db.connect();
const norm = (v) => JSON.parse(JSON.stringify(v, (k, x) => (typeof x === "bigint" ? x.toString() : x)));
const rows = await c.runAndReadAll(`SELECT * FROM read_parquet('${file.replace(/'/g, "''")}')`);
for (const r of rows.getRowObjectsJson()) console.log(JSON.stringify(norm(r)));
const schema = await c.runAndReadAll(
  `SELECT name, field_id FROM parquet_schema('${file.replace(/'/g, "''")}') WHERE field_id IS NOT NULL`);
const ids = [];
for (const [name, id] of schema.getRows()) ids.push(`${name}=${Number(id)}`);
const kv = await c.runAndReadAll(
  `SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${file.replace(/'/g, "''")}')`);
const meta = {};
for (const [k, v] of kv.getRows()) meta[k] = v;
console.log(JSON.stringify({ field_ids: ids, kv_keys: Object.keys(meta).sort() }));
