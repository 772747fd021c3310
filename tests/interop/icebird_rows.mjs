// Print an Iceberg table as icebird (an independent reader) sees it (local,
// or s3:// on the tests' S3 server: s3_fetch_shim.mjs): one
// JSON line per row, sorted, bigints as strings, dates as ISO text, binary
// as text.  Usage: node icebird_rows.mjs TABLE_LOCATION [--omit=a.b,...]
// --omit leaves out nested fields (icebird 0.3.1 returns a struct field
// named "key" next to a map as a one-element array; hyparquet and DuckDB
// read the same file correctly, so tests check such fields with DuckDB).
import './fetch_shim.mjs';
import './s3_fetch_shim.mjs';
import { icebergRead } from 'icebird';

const norm = (v) => {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(norm);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = norm(v[k]);
    return o;
  }
  return v;
};
const omit = (process.argv.find((a) => a.startsWith('--omit=')) || '--omit=').slice(7)
  .split(',').filter(Boolean).map((p) => p.split('.'));
const rows = await icebergRead({ tableUrl: process.argv[2] });
for (const r of rows)
  for (const path of omit) {
    let o = r;
    for (const k of path.slice(0, -1)) o = o && o[k];
    if (o && typeof o === 'object') delete o[path[path.length - 1]];
  }
const lines = rows.map((r) => JSON.stringify(norm(r))).sort();
for (const l of lines) console.log(l);
