// Read an Iceberg v2 table with DuckDB as a merge-on-read query over its
// Parquet files: the current snapshot's live data files (manifests read
// with avsc), minus the rows its position delete files name (file_path,
// pos) and the rows equal on the equality fields to a row of an equality
// delete file with a higher data sequence number (the spec's rules),
// each delete file applied only to data files of its partition (same spec
// id and partition values), but for equality deletes of an unpartitioned
// spec, which apply to every partition (global deletes).
// Prints one JSON line per row (bigints as strings; the columns ID is
// compared on are those of each file's equality_ids, named by path), then
// on stderr `duck_mor ms=N rows=N data=N posdel=N eqdel=N` (ms: the query
// materialized in DuckDB, from the file list to the result table; not
// the conversion of its rows to JSON for printing) and, with --count, no
// rows, the best of three runs of the query in one process (--count=N: of
// N), and `rg=N` (row groups of the data files) in that line too.
// Usage: node duck_mor.mjs TABLE_LOCATION [--count[=N]]
import { DuckDBInstance } from '@duckdb/node-api';
import { currentMetadata, localPath, readAvro } from './iceberg_files.mjs';

const loc = process.argv[2];
const countOnly = (process.argv[3] || '').startsWith('--count');
const runs = countOnly ? Number(process.argv[3].split('=')[1] || 3) : 1;
const md = currentMetadata(loc);
const snap = md.snapshots.find((s) => s['snapshot-id'] === md['current-snapshot-id']);
const schema = md.schemas.find((s) => s['schema-id'] === md['current-schema-id']);
const nameOf = new Map();
const walk = (fields, prefix) => {
  for (const f of fields) {
    const n = prefix ? `${prefix}.${f.name}` : f.name;
    nameOf.set(f.id, n);
    if (f.type && f.type.type === 'struct') walk(f.type.fields, n);
  }
};
walk(schema.fields, '');
const unpartitioned = new Set(md['partition-specs'].filter((s) => !s.fields.length)
  .map((s) => s['spec-id']));
const partKey = (spec, p) => `${spec}:${JSON.stringify(p ?? {}, (k, x) => (typeof x === 'bigint' ? x.toString() : x))}`;
const data = [], pos = [], eq = [];
if (snap) {
  for (const m of await readAvro(snap['manifest-list'])) {
    for (const e of await readAvro(m.manifest_path)) {
      if (e.status === 2) continue;
      const f = e.data_file;
      const seq = Number(e.sequence_number ?? m.sequence_number);
      const spec = m.partition_spec_id;
      const item = { path: f.file_path, local: localPath(f.file_path), seq, ids: f.equality_ids,
        part: partKey(spec, f.partition), global: unpartitioned.has(spec) };
      (f.content === 0 ? data : f.content === 1 ? pos : eq).push(item);
    }
  }
}
const q = (s) => `'${s.replace(/'/g, "''")}'`;
const list = (xs) => `[${xs.map((x) => q(x.local)).join(',')}]`;
const c = await (await DuckDBInstance.create(':memory:')).connect();
let out = [];
// The query, timed; again from scratch when repeated.
const mor = async () => {
  await c.run('DROP TABLE IF EXISTS res; DROP TABLE IF EXISTS pd; DROP TABLE IF EXISTS pdf; DROP TABLE IF EXISTS files');
  const t0 = performance.now();
  if (!data.length) return performance.now() - t0;
  await c.run(`CREATE TEMP TABLE files AS SELECT * FROM (VALUES ${data
    .map((d, i) => `(${i}, ${q(d.local)}, ${q(d.path)}, ${d.seq}, ${q(d.part)})`).join(',')}) v(fid, local, path, seq, part)`);
  let where = 'true';
  if (pos.length) {
    await c.run(`CREATE TEMP TABLE pdf AS SELECT * FROM (VALUES ${pos
      .map((d) => `(${q(d.local)}, ${d.seq}, ${q(d.part)})`).join(',')}) v(local, seq, part)`);
    // each delete resolved once to the live data file it applies to (same
    // path and partition, a data sequence number at least the file's), as
    // a reader's per-file delete set; the scan then drops (file, position)
    await c.run(`CREATE TEMP TABLE pd AS SELECT f.fid, p.pos FROM read_parquet(${list(pos)}, filename=true, hive_partitioning=false) p JOIN pdf x ON x.local = p.filename JOIN files f ON f.path = p.file_path AND f.part = x.part AND x.seq >= f.seq`);
    where += ' AND NOT EXISTS (SELECT 1 FROM pd WHERE pd.fid = f.fid AND pd.pos = d.file_row_number)';
  }
  eq.forEach((e, i) => {
    const cols = e.ids.map((id) => nameOf.get(id));
    const cond = cols.map((n) => `e${i}.${n} IS NOT DISTINCT FROM d.${n}`).join(' AND ');
    const scope = e.global ? 'true' : `f.part = ${q(e.part)}`;
    where += ` AND NOT EXISTS (SELECT 1 FROM read_parquet(${q(e.local)}) e${i} WHERE ${e.seq} > f.seq AND ${scope} AND ${cond})`;
  });
  await c.run(
    `CREATE TEMP TABLE res AS SELECT d.* EXCLUDE (filename, file_row_number) FROM read_parquet(${list(data)}, filename=true, file_row_number=true, union_by_name=true, hive_partitioning=false) d JOIN files f ON f.local = d.filename WHERE ${where}`);
  return performance.now() - t0;
};
let ms = await mor();
// --count: the best of three (--count=N: of N), the first of which also warms the process up
for (let i = 1; i < runs; i++) ms = Math.min(ms, await mor());
if (countOnly) {
  let rows = 0, rg = 0;
  if (data.length) {
    rows = Number((await c.runAndReadAll('SELECT count(*) FROM res')).getRows()[0][0]);
    rg = Number((await c.runAndReadAll(`SELECT count(*) FROM (SELECT DISTINCT file_name, row_group_id FROM parquet_metadata(${list(data)}))`)).getRows()[0][0]);
  }
  console.error(`duck_mor ms=${ms.toFixed(1)} rows=${rows} data=${data.length} posdel=${pos.length} eqdel=${eq.length} rg=${rg}`);
  process.exit(0);
}
if (data.length) out = (await c.runAndReadAll('SELECT * FROM res')).getRowObjectsJson();
const norm = (v) => JSON.parse(JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? x.toString() : x)));
for (const l of out.map((r) => JSON.stringify(norm(r))).sort()) console.log(l);
console.error(`duck_mor ms=${ms.toFixed(1)} rows=${out.length} data=${data.length} posdel=${pos.length} eqdel=${eq.length}`);
