// Write the Parquet files a floe iceberg test asks for, with DuckDB (a
// writer nobody here wrote): argv[2] is a JSON array of {path, sql} where
// sql is a complete COPY ... TO statement (field ids, iceberg.schema).
import { readFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const jobs = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
for (const j of jobs) {
  mkdirSync(dirname(j.path), { recursive: true });
  await con.run(j.sql);
}
console.error(`wrote ${jobs.length} parquet files`);
