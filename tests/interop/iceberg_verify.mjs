// Verify Iceberg tables written by floe with readers nobody here wrote:
//   icebird reads each table and must return exactly the expected rows;
//   avsc decodes every manifest and manifest list and checks header keys
//   and field ids; DuckDB reads every data file with its recorded count.
// argv[2]: JSON [{name, url, columns, rows}].  Prints ok / not ok lines.
import { readFileSync, readdirSync, statSync, openSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import avro from 'avsc';
import { icebergRead } from 'icebird';
import { DuckDBInstance } from '@duckdb/node-api';

// icebird reads through global fetch, which has no file:// in Node 20:
// serve local paths (plain or file://), with HEAD and Range.
globalThis.fetch = async (url, init = {}) => {
  let p = String(url);
  if (p.startsWith('file://')) p = p.slice(7); else if (p.startsWith('file:')) p = p.slice(5);
  let size;
  try { size = statSync(p).size; } catch { return new Response('not found', { status: 404 }); }
  if ((init.method || 'GET') === 'HEAD')
    return new Response(null, { status: 200, headers: { 'content-length': String(size) } });
  const range = init.headers && (init.headers.Range || init.headers.range);
  let start = 0, end = size - 1, status = 200;
  if (range) {
    const m = /bytes=(\d+)-(\d*)/.exec(range);
    start = Number(m[1]); if (m[2]) end = Math.min(Number(m[2]), size - 1); status = 206;
  }
  const buf = Buffer.alloc(Math.max(0, end - start + 1));
  const fd = openSync(p, 'r'); readSync(fd, buf, 0, buf.length, start); closeSync(fd);
  return new Response(buf, { status, headers: { 'content-length': String(buf.length) } });
};

const norm = (v) => {
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Date) return v.toISOString();
  if (v === undefined) return null;
  return v;
};
const key = (r) => JSON.stringify(r);
let failed = 0;
const ok = (name) => console.log(`ok - ${name}`);
const notOk = (name, why) => { failed++; console.log(`not ok - ${name}: ${why}`); };

const tables = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();

function fieldIdsOk(schemaJson, wanted) {
  const seen = new Map();
  const walk = (t) => {
    if (!t || typeof t !== 'object') return;
    if (Array.isArray(t)) { t.forEach(walk); return; }
    if (t.type === 'record') for (const f of t.fields) { seen.set(f.name, f['field-id']); walk(f.type); }
    else if (t.type === 'array') walk(t.items);
    else walk(t.type);
  };
  walk(schemaJson);
  for (const [n, id] of Object.entries(wanted)) if (seen.get(n) !== id) return `${n} has field-id ${seen.get(n)}, want ${id}`;
  return null;
}

async function decodeAvro(path) {
  return new Promise((resolve, reject) => {
    const recs = []; let meta;
    avro.createFileDecoder(path, { parseHook: (s) => avro.Type.forSchema(s, { wrapUnions: false }) })
      .on('metadata', (type, codec, header) => { meta = { type, codec, header }; })
      .on('data', (r) => recs.push(r)).on('error', reject).on('end', () => resolve({ meta, recs }));
  });
}

for (const t of tables) {
  // 1. icebird: exact row set
  try {
    const rows = await icebergRead({ tableUrl: t.url });
    const got = rows.map((r) => { const o = {}; for (const c of t.columns) o[c] = norm(r[c]); return o; }).map(key).sort();
    const want = t.rows.map((r) => { const o = {}; for (const c of t.columns) o[c] = norm(r[c]); return o; }).map(key).sort();
    if (got.length !== want.length) notOk(`icebird ${t.name}`, `${got.length} rows, want ${want.length}: ${got.slice(0, 5)}`);
    else {
      const diff = got.findIndex((g, i) => g !== want[i]);
      if (diff >= 0) notOk(`icebird ${t.name}`, `row ${got[diff]} != ${want[diff]}`);
      else ok(`icebird ${t.name} (${got.length} rows)`);
    }
  } catch (e) { notOk(`icebird ${t.name}`, e.stack || e.message); }

  // 2. avsc: every manifest and manifest list, header keys and field ids
  const mdir = join(t.url.replace(/^file:(\/\/)?/, ''), 'metadata');
  const dataFiles = new Map();
  let nman = 0, nlist = 0, bad = null;
  for (const f of readdirSync(mdir).filter((f) => f.endsWith('.avro'))) {
    try {
      const { meta, recs } = await decodeAvro(join(mdir, f));
      const h = meta.header.meta;
      const schema = JSON.parse(h['avro.schema'].toString());
      if (schema.name === 'manifest_file') {
        nlist++;
        for (const k of ['snapshot-id', 'sequence-number', 'format-version']) if (!h[k]) bad = `${f}: no ${k}`;
        const e = fieldIdsOk(schema, { manifest_path: 500, manifest_length: 501, partition_spec_id: 502, content: 517,
          sequence_number: 515, min_sequence_number: 516, added_snapshot_id: 503, added_files_count: 504,
          partitions: 507, contains_null: 509, lower_bound: 510, upper_bound: 511 });
        if (e) bad = `${f}: ${e}`;
        if (!recs.length) bad = `${f}: empty manifest list`;
      } else {
        nman++;
        for (const k of ['schema', 'schema-id', 'partition-spec', 'partition-spec-id', 'format-version', 'content'])
          if (!h[k]) bad = `${f}: no header ${k}`;
        if (h['format-version'] && h['format-version'].toString() !== '2') bad = `${f}: format-version ${h['format-version']}`;
        JSON.parse(h['schema'].toString()); JSON.parse(h['partition-spec'].toString());
        const e = fieldIdsOk(schema, { status: 0, snapshot_id: 1, sequence_number: 3, file_sequence_number: 4,
          data_file: 2, content: 134, file_path: 100, file_format: 101, partition: 102, record_count: 103,
          file_size_in_bytes: 104, column_sizes: 108, value_counts: 109, null_value_counts: 110,
          lower_bounds: 125, upper_bounds: 128, split_offsets: 132, equality_ids: 135, sort_order_id: 140 });
        if (e) bad = `${f}: ${e}`;
        for (const r of recs) if (r.status !== 2) dataFiles.set(r.data_file.file_path, Number(r.data_file.record_count));
      }
    } catch (e) { bad = `${f}: ${e.message}`; }
  }
  if (bad) notOk(`avsc ${t.name}`, bad);
  else ok(`avsc ${t.name} (${nman} manifests, ${nlist} manifest lists)`);

  // 3. DuckDB reads every data/delete file the manifests name
  let dbad = null;
  for (const [p, n] of dataFiles) {
    try {
      const r = await con.runAndReadAll(`SELECT count(*) FROM read_parquet('${p.replace(/^file:(\/\/)?/, '').replace(/'/g, "''")}')`);
      const c = Number(r.getRows()[0][0]);
      if (c !== n) dbad = `${p}: ${c} rows, manifest says ${n}`;
    } catch (e) { dbad = `${p}: ${e.message}`; }
  }
  if (dbad) notOk(`duckdb ${t.name}`, dbad);
  else ok(`duckdb ${t.name} (${dataFiles.size} files)`);
}
process.exit(failed ? 1 : 0);
