// The manifests of an Iceberg table on the tests' S3 server, decoded by
// avsc, against the data files icebird reads.  Usage:
//   S3_ENDPOINT=http://127.0.0.1:PORT node s3_manifests.mjs s3://BUCKET/TABLE
// Fetches (through s3_fetch_shim.mjs) the current metadata, its manifest
// list and every manifest, decodes them with avsc's block decoder, reads
// the table with icebird while noting which objects it fetched, and prints
// one JSON line: {rows, icebird_files, manifest_files, record_count,
// manifests, codecs, format_version} (files as "BUCKET/KEY", sorted).
import './fetch_shim.mjs';
import './s3_fetch_shim.mjs';
import avro from 'avsc';
import { icebergRead } from 'icebird';

// "BUCKET/KEY" of the URLs icebird and the metadata use for one object
const objectOf = (u) => {
  const m = /^https:\/\/([^/.]+)\.s3\.amazonaws\.com\/(.*)$/.exec(u) ||
    /^s3[an]?:\/\/([^/]+)\/(.*)$/.exec(u);
  return m ? `${m[1]}/${m[2]}` : u;
};
const fetched = new Set();
const shimmed = globalThis.fetch;
globalThis.fetch = async (url, init) => {
  fetched.add(objectOf(String(url)));
  return shimmed(url, init);
};

const get = async (u) => {
  const r = await shimmed(u);
  if (!r.ok) throw new Error(`${u}: HTTP ${r.status}`);
  return Buffer.from(await r.arrayBuffer());
};
const codecs = new Set();
const decode = (buf) => new Promise((res, rej) => {
  const out = [];
  const d = new avro.streams.BlockDecoder();
  d.on('metadata', (type, codec) => codecs.add(codec))
    .on('data', (x) => out.push(x)).on('end', () => res(out)).on('error', rej);
  d.end(buf);
});

const loc = process.argv[2].replace(/\/$/, '');
const hint = (await get(`${loc}/metadata/version-hint.text`)).toString().trim();
const meta = JSON.parse((await get(`${loc}/metadata/v${hint}.metadata.json`)).toString());
const snap = meta.snapshots.find((s) => s['snapshot-id'] === meta['current-snapshot-id']);
const list = await decode(await get(snap['manifest-list']));
const files = [];
let count = 0;
for (const m of list) {
  if (m.content !== undefined && m.content !== 0) continue; // delete manifests: none here
  for (const e of await decode(await get(m.manifest_path))) {
    if (e.status === 2) continue; // deleted
    files.push(objectOf(e.data_file.file_path));
    count += Number(e.data_file.record_count);
  }
}
const rows = await icebergRead({ tableUrl: loc });
const icebird = [...fetched].filter((f) => f.endsWith('.parquet')).sort();
console.log(JSON.stringify({
  rows: rows.length, icebird_files: icebird, manifest_files: files.sort(), record_count: count,
  manifests: list.length, codecs: [...codecs], format_version: meta['format-version'],
}));
