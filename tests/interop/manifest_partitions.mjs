// Print the partition tuple and spec id of every live data file of an
// Iceberg table, read from its manifests with avsc: one JSON line per file,
// sorted.  Usage: node manifest_partitions.mjs TABLE_LOCATION
import { currentMetadata, readAvro, localPath as local } from './iceberg_files.mjs';

const loc = process.argv[2];
const md = currentMetadata(loc);
const cur = md.snapshots.find((s) => s['snapshot-id'] === md['current-snapshot-id']);
const lines = [];
for (const m of await readAvro(cur['manifest-list']))
  for (const e of await readAvro(m.manifest_path))
    if (e.status !== 2)
      lines.push(JSON.stringify({ spec: m.partition_spec_id, partition: e.data_file.partition,
        dir: local(e.data_file.file_path).slice(loc.length + 6).replace(/\/[^/]*$/, '') },
        (k, v) => (typeof v === 'bigint' ? Number(v) : v)));
for (const l of lines.sort()) console.log(l);
console.log(JSON.stringify({ specs: md['partition-specs'].length, default: md['default-spec-id'] }));
