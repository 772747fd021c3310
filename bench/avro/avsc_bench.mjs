// avsc's side of bench/avro/bench_avro.c: read the container floe wrote
// (decoding every record), then write the same records as a container
// (codec null, in memory).  Prints: AVSC write_rows_s=... read_rows_s=...
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../../tests/interop/package.json'));
const avro = require('avsc');

const [file, rowsArg] = process.argv.slice(2);
const rows = Number(rowsArg);
const bytes = fs.readFileSync(file);

function decode() {
  return new Promise((resolve, reject) => {
    const recs = [];
    let type;
    const dec = new avro.streams.BlockDecoder();
    dec.on('metadata', (t) => { type = t; });
    dec.on('data', (r) => recs.push(r));
    dec.on('error', reject);
    dec.on('end', () => resolve({ recs, type }));
    dec.end(bytes);
  });
}

function encode(type, recs) {
  return new Promise((resolve, reject) => {
    const enc = new avro.streams.BlockEncoder(type);
    let n = 0;
    enc.on('data', (c) => { n += c.length; });
    enc.on('error', reject);
    enc.on('end', () => resolve(n));
    for (const r of recs) enc.write(r);
    enc.end();
  });
}

const t0 = process.hrtime.bigint();
const { recs, type } = await decode();
const t1 = process.hrtime.bigint();
if (recs.length !== rows) throw new Error(`avsc read ${recs.length} rows, want ${rows}`);
const n = await encode(type, recs);
const t2 = process.hrtime.bigint();
const rs = rows / (Number(t1 - t0) / 1e9), ws = rows / (Number(t2 - t1) / 1e9);
console.log(`avsc: read ${rows} rows at ${rs.toFixed(0)} rows/s, wrote ${n} bytes at ${ws.toFixed(0)} rows/s`);
console.log(`AVSC write_rows_s=${ws.toFixed(0)} read_rows_s=${rs.toFixed(0)}`);
