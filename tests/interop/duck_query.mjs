// Run one SQL statement in DuckDB and print its rows as a JSON array of
// arrays of strings.  Usage: node duck_query.mjs "SELECT ..."
import { DuckDBInstance } from '@duckdb/node-api';

const c = await (await DuckDBInstance.create(':memory:')).connect();
const r = await c.runAndReadAll(process.argv[2]);
console.log(JSON.stringify(r.getRows().map((row) => row.map((v) => String(v)))));
