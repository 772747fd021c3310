// Read an Iceberg table (v2, Parquet, unpartitioned or not) as a
// merge-on-read query in DuckDB: the live data files and delete files are
// listed from the manifests (avsc), and each data file's rows are read by
// DuckDB's read_parquet without those its position deletes name
// (file_path, pos: data sequence number <= the delete's) and those an
// equality delete matches (every equality column IS NOT DISTINCT FROM:
// data sequence number < the delete's), in the same partition or from an
// unpartitioned spec, as the Iceberg spec says.  Prints one JSON line per
// row (keys sorted, bigints as strings), sorted, then one line
// {"__files": {"data": N, "deletes": M}}.  Usage: node duck_mor_rows.mjs TABLE_LOCATION
import { DuckDBInstance } from '@duckdb/node-api';
import { currentMetadata, readAvro, localPath as local } from './iceberg_files.mjs';

const unwrap = (v) => (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1
  && !(v instanceof Uint8Array) ? Object.values(v)[0] : v);
const q = (s) => `'${String(s).replace(/'/g, "''")}'`;
const loc = process.argv[2];
const md = currentMetadata(loc);
const schema = md.schemas.find((s) => s['schema-id'] === md['current-schema-id']);
const cur = md.snapshots.find((s) => s['snapshot-id'] === md['current-snapshot-id']);
const unpartitioned = (specId) => {
  const s = md['partition-specs'].find((x) => x['spec-id'] === specId);
  return !s || s.fields.every((f) => f.transform === 'void');
};
const data = [], dels = [];
for (const m of cur ? await readAvro(cur['manifest-list']) : [])
  for (const e of await readAvro(m.manifest_path)) {
    if (e.status === 2) continue;
    const f = e.data_file;
    const seq = Number(unwrap(e.sequence_number) ?? m.sequence_number);
    const x = { path: f.file_path, content: f.content, seq, spec: m.partition_spec_id,
      part: JSON.stringify(f.partition), eq: unwrap(f.equality_ids) || [] };
    (f.content === 0 ? data : dels).push(x);
  }
const sameScope = (d, x) => unpartitioned(x.spec) || (d.spec === x.spec && d.part === x.part);
const name = (id) => schema.fields.find((f) => f.id === id).name;
const parts = [];
for (const d of data) {
  const conds = [];
  const pos = dels.filter((x) => x.content === 1 && x.seq >= d.seq && sameScope(d, x));
  if (pos.length)
    conds.push(`file_row_number NOT IN (SELECT pos FROM read_parquet([${pos.map((x) => q(local(x.path)))
      .join(',')}]) WHERE file_path = ${q(d.path)})`);
  for (const x of dels.filter((x) => x.content === 2 && x.seq > d.seq && sameScope(d, x))) {
    const on = x.eq.map((id) => `x.${name(id)} IS NOT DISTINCT FROM d.${name(id)}`).join(' AND ');
    conds.push(`NOT EXISTS (SELECT 1 FROM read_parquet(${q(local(x.path))}) x WHERE ${on})`);
  }
  parts.push(`SELECT * EXCLUDE (file_row_number) FROM read_parquet(${q(local(d.path))}, ` +
    `file_row_number = true) d${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`);
}
const norm = (v) => {
  if (typeof v === 'bigint') return v.toString();
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = norm(v[k]);
    return o;
  }
  return v;
};
const lines = [];
if (parts.length) {
  const c = await (await DuckDBInstance.create(':memory:')).connect();
  const r = await c.runAndReadAll(parts.join(' UNION ALL '));
  for (const row of r.getRowObjects()) lines.push(JSON.stringify(norm(row)));
}
for (const l of lines.sort()) console.log(l);
console.log(JSON.stringify({ __files: { data: data.length, deletes: dels.length } }));
