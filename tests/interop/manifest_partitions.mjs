// Print the partition tuple and spec id of every live data file of an
// Iceberg table, read from its manifests with avsc: one JSON line per file,
// sorted.  Usage: node manifest_partitions.mjs TABLE_LOCATION
import { readFileSync } from 'node:fs';
import avro from 'avsc';

const loc = process.argv[2];
const readAvro = (path) => new Promise((res, rej) => {
  const out = [];
  avro.createFileDecoder(path).on('data', (d) => out.push(d)).on('end', () => res(out)).on('error', rej);
});
const local = (p) => p.replace(/^file:(\/\/)?/, '');
const hint = readFileSync(`${loc}/metadata/version-hint.text`, 'utf8').trim();
const md = JSON.parse(readFileSync(`${loc}/metadata/v${hint}.metadata.json`, 'utf8'));
const cur = md.snapshots.find((s) => s['snapshot-id'] === md['current-snapshot-id']);
const lines = [];
for (const m of await readAvro(local(cur['manifest-list'])))
  for (const e of await readAvro(local(m.manifest_path)))
    if (e.status !== 2)
      lines.push(JSON.stringify({ spec: m.partition_spec_id, partition: e.data_file.partition,
        dir: local(e.data_file.file_path).slice(loc.length + 6).replace(/\/[^/]*$/, '') },
        (k, v) => (typeof v === 'bigint' ? Number(v) : v)));
for (const l of lines.sort()) console.log(l);
console.log(JSON.stringify({ specs: md['partition-specs'].length, default: md['default-spec-id'] }));
