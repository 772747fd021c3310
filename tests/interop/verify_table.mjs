// Check an Iceberg table written by floe against the records of its topic,
// with readers nobody here wrote (icebird for rows, avsc for manifests).
// Usage: node verify_table.mjs LOCATION DUMP [--orphans]
//   DUMP: lines "partition \t offset \t value-JSON" (kcat -f '%p\t%o\t%s\n').
// Every record must be exactly one row (matched by _kafka partition and
// offset) whose columns equal the record's JSON fields (absent = null);
// with --orphans, every file under LOCATION/data (partition folders too)
// must be referenced by a snapshot.  Prints ok / not ok lines.
import './fetch_shim.mjs';
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import avro from 'avsc';
import { icebergRead } from 'icebird';

const [loc, dumpPath] = process.argv.slice(2);
let failed = 0;
const ok = (n) => console.log(`ok - ${n}`);
const notOk = (n, why) => { failed++; console.log(`not ok - ${n}: ${why}`); };

const norm = (v) => {
  if (typeof v === 'bigint') return Number(v);
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(norm);
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    const o = {};
    for (const k of Object.keys(v).sort()) if (norm(v[k]) !== null) o[k] = norm(v[k]);
    return o;
  }
  return v;
};

const want = new Map();
for (const line of readFileSync(dumpPath, 'utf8').split('\n')) {
  if (!line) continue;
  const [p, o, ...rest] = line.split('\t');
  want.set(`${p}:${o}`, JSON.parse(rest.join('\t')));
}
const rows = await icebergRead({ tableUrl: loc });
const seen = new Set();
let dup = 0, extra = 0, diff = 0, firstDiff = '';
for (const r of rows) {
  const k = `${r._kafka.partition}:${r._kafka.offset}`;
  if (seen.has(k)) { dup++; continue; }
  seen.add(k);
  if (!want.has(k)) { extra++; continue; }
  const got = { ...r };
  delete got._kafka;
  const a = JSON.stringify(norm(got)), b = JSON.stringify(norm(want.get(k)));
  if (a !== b) { diff++; if (!firstDiff) firstDiff = `${k}: ${a} != ${b}`; }
}
const missing = [...want.keys()].filter((k) => !seen.has(k));
if (dup || extra || missing.length || diff)
  notOk('table rows equal the topic records',
    `${rows.length} rows for ${want.size} records: ${dup} duplicates, ${extra} not in the topic, ` +
    `${missing.length} missing (${missing.slice(0, 3)}), ${diff} differ (${firstDiff})`);
else ok(`table rows equal the topic records (${rows.length})`);

if (process.argv.includes('--orphans')) {
  const readAvro = (path) => new Promise((res, rej) => {
    const out = [];
    avro.createFileDecoder(path).on('data', (d) => out.push(d)).on('end', () => res(out)).on('error', rej);
  });
  const local = (p) => p.replace(/^file:(\/\/)?/, '');
  const hint = readFileSync(`${loc}/metadata/version-hint.text`, 'utf8').trim();
  const md = JSON.parse(readFileSync(`${loc}/metadata/v${hint}.metadata.json`, 'utf8'));
  const refs = new Set();
  for (const s of md.snapshots || []) {
    for (const m of await readAvro(local(s['manifest-list'])))
      for (const e of await readAvro(local(m.manifest_path))) refs.add(local(e.data_file.file_path));
  }
  const walk = (d) => readdirSync(d).flatMap((f) =>
    statSync(`${d}/${f}`).isDirectory() ? walk(`${d}/${f}`) : [`${d}/${f}`]);
  const dir = `${loc}/data`;
  const files = existsSync(dir) ? walk(dir) : [];
  const orphans = files.filter((f) => !refs.has(f));
  if (orphans.length) notOk('no orphan data files', `${orphans.length} unreferenced: ${orphans.slice(0, 3)}`);
  else ok(`no orphan data files (${files.length} files, all referenced)`);
}
process.exit(failed ? 1 : 0);
