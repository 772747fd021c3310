// Avro interop with avsc, driven by tests/unit/test_avro_interop.c.
//   node avro_interop.mjs read DIR   read every floe_*.avro in DIR with avsc and
//                                    compare header schema, metadata and records
//                                    with the NAME.json written next to it
//   node avro_interop.mjs write DIR  write avsc_CASE_CODEC.avro from
//                                    avro_cases.json for floe to read back
//   node avro_interop.mjs canonical  print each case schema's canonical form
// Prints "ok - ..." / "not ok - ...: why" lines.
// Records are compared in floe's JSON rendering (floe_avro_value_to_json):
// unions as their branch's value, bytes/fixed as {"$bytes": hex}, NaN and
// infinities as strings; longs of 16+ digits as strings (JSON numbers in JS
// are doubles).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import { snappyCompress, snappyUncompress } from 'hysnappy';
import { decompress as zstdDecompress } from 'fzstd';

const here = path.dirname(fileURLToPath(import.meta.url));

// Exact 64-bit longs (avsc's default long refuses values past 2^53).
const LongBig = avro.types.LongType.__with({
  fromBuffer: (b) => b.readBigInt64LE(),
  toBuffer: (n) => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(n)); return b; },
  fromJSON: (x) => BigInt(x),
  toJSON: (n) => Number(n),
  isValid: (n) => typeof n === 'bigint',
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
});
const typeOpts = () => ({ wrapUnions: true, registry: { long: LongBig } });

// Snappy blocks carry the big-endian CRC32 of the uncompressed bytes.
function snappyLength(buf) {
  let n = 0, shift = 0;
  for (let i = 0; i < buf.length; i++) {
    n += (buf[i] & 0x7f) * 2 ** shift;
    if (!(buf[i] & 0x80)) return n;
    shift += 7;
  }
  throw new Error('bad snappy length');
}
const decCodecs = {
  null: (b, cb) => cb(null, b),
  deflate: zlib.inflateRaw,
  snappy: (b, cb) => {
    try {
      const data = b.subarray(0, b.length - 4);
      const out = Buffer.from(snappyUncompress(data, snappyLength(data)));
      if ((zlib.crc32(out) >>> 0) !== b.readUInt32BE(b.length - 4)) throw new Error('snappy CRC32 mismatch');
      cb(null, out);
    } catch (e) { cb(e); }
  },
  zstandard: (b, cb) => { try { cb(null, Buffer.from(zstdDecompress(b))); } catch (e) { cb(e); } },
};
const encCodecs = {
  null: (b, cb) => cb(null, b),
  deflate: zlib.deflateRaw,
  snappy: (b, cb) => {
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(b) >>> 0);
    cb(null, Buffer.concat([Buffer.from(snappyCompress(b)), crc]));
  },
};

function bigOut(n) {
  const b = BigInt(n);
  return (b >= 1000000000000000n || b <= -1000000000000000n) ? String(b) : Number(b);
}
function numOut(x) {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return x;
}
// JSON text with 16+ digit integers kept exact, as strings.
function parseExact(text) {
  return JSON.parse(text.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"$2"'));
}

// avsc value -> floe's JSON rendering, guided by the avsc type.
function toOurs(t, v) {
  switch (t.typeName) {
    case 'null': return null;
    case 'boolean': case 'int': case 'string': case 'enum': return v;
    case 'long': case 'abstract:long': return bigOut(v);
    case 'float': case 'double': return numOut(v);
    case 'bytes': case 'fixed': return { $bytes: Buffer.from(v).toString('hex') };
    case 'array': return v.map((x) => toOurs(t.itemsType, x));
    case 'map': return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toOurs(t.valuesType, x)]));
    case 'record': case 'error':
      return Object.fromEntries(t.fields.map((f) => [f.name, toOurs(f.type, v[f.name])]));
    case 'union:wrapped': {
      if (v === null) return null;
      const k = Object.keys(v)[0];
      return toOurs(t.types.find((b) => b.branchName === k), v[k]);
    }
    default: throw new Error(`unhandled avsc type ${t.typeName}`);
  }
}

// floe's JSON rendering -> avsc value.
function fromOurs(t, j) {
  switch (t.typeName) {
    case 'null': return null;
    case 'boolean': case 'int': case 'string': case 'enum': return j;
    case 'long': return Number(j); // avsc's own long (object-form longs bypass the registry)
    case 'abstract:long': return BigInt(j);
    case 'float': case 'double':
      return j === 'NaN' ? NaN : j === 'Infinity' ? Infinity : j === '-Infinity' ? -Infinity : j;
    case 'bytes': case 'fixed': return Buffer.from(j.$bytes, 'hex');
    case 'array': return j.map((x) => fromOurs(t.itemsType, x));
    case 'map': return Object.fromEntries(Object.entries(j).map(([k, x]) => [k, fromOurs(t.valuesType, x)]));
    case 'record': case 'error':
      return Object.fromEntries(t.fields.map((f) => [f.name, fromOurs(f.type, j[f.name])]));
    case 'union:wrapped': {
      if (j === null) return null;
      const b = t.types.find((x) => x.typeName !== 'null');
      return { [b.branchName]: fromOurs(b, j) };
    }
    default: throw new Error(`unhandled avsc type ${t.typeName}`);
  }
}

function same(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  const ka = Object.keys(a), kb = Object.keys(b);
  return !Array.isArray(b) && ka.length === kb.length && ka.every((k) => k in b && same(a[k], b[k]));
}

function readAvro(file) {
  return new Promise((resolve, reject) => {
    let schema, type, header;
    const recs = [];
    const dec = new avro.streams.BlockDecoder({
      codecs: decCodecs,
      parseHook: (s) => { schema = s; type = avro.Type.forSchema(s, typeOpts()); return type; },
    });
    dec.on('metadata', (_t, _c, h) => { header = h; });
    dec.on('data', (r) => recs.push(r));
    dec.on('error', reject);
    dec.on('end', () => resolve({ schema, type, header, recs }));
    fs.createReadStream(file).on('error', reject).pipe(dec);
  });
}

async function readMode(dir) {
  const files = fs.readdirSync(dir).filter((f) => f.startsWith('floe_') && f.endsWith('.avro')).sort();
  if (!files.length) console.log('not ok - avsc read: no floe_*.avro files');
  for (const f of files) {
    const name = f.replace(/\.avro$/, '');
    try {
      const want = parseExact(fs.readFileSync(path.join(dir, `${name}.json`), 'utf8'));
      const got = await readAvro(path.join(dir, f));
      const why = [];
      if (!same(got.schema, want.schema)) why.push(`header schema differs: ${JSON.stringify(got.schema)}`);
      for (const [k, v] of Object.entries(want.meta)) {
        const m = got.header.meta[k];
        if (!m || m.toString() !== v) why.push(`meta ${k} = ${m}`);
      }
      const recs = got.recs.map((r) => toOurs(got.type, r));
      if (recs.length !== want.records.length) why.push(`${recs.length} records, want ${want.records.length}`);
      recs.forEach((r, i) => {
        if (why.length < 3 && !same(r, want.records[i]))
          why.push(`record ${i}: ${JSON.stringify(r)} != ${JSON.stringify(want.records[i])}`);
      });
      console.log(why.length ? `not ok - avsc reads ${name}: ${why.join('; ')}` : `ok - avsc reads ${name} (${recs.length} records)`);
    } catch (e) {
      console.log(`not ok - avsc reads ${name}: ${e.message}`);
    }
  }
}

async function writeMode(dir) {
  const cases = JSON.parse(fs.readFileSync(path.join(here, 'avro_cases.json'), 'utf8').replace(
    /([:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"$2"')).cases;
  for (const c of cases) {
    for (const codec of ['null', 'deflate', 'snappy']) {
      const name = `avsc_${c.name}_${codec}`;
      try {
        const type = avro.Type.forSchema(c.schema, typeOpts());
        const meta = Object.fromEntries(Object.entries(c.meta).map(([k, v]) => [k, Buffer.from(v)]));
        // Given the raw schema, avsc writes it verbatim (field ids and all) into
        // the header; values are then written with the BigInt-long type of the
        // same schema.
        const enc = new avro.streams.BlockEncoder(c.schema, { codec, codecs: encCodecs, metadata: meta, blockSize: 100 });
        enc._type = type;
        const out = fs.createWriteStream(path.join(dir, `${name}.avro`));
        const done = new Promise((res, rej) => { out.on('finish', res); out.on('error', rej); enc.on('error', rej); });
        enc.pipe(out);
        for (const r of c.records) enc.write(fromOurs(type, r));
        enc.end();
        await done;
        console.log(`ok - avsc writes ${name}`);
      } catch (e) {
        console.log(`not ok - avsc writes ${name}: ${e.message}`);
      }
    }
  }
}

// The Parsing Canonical Form of every case schema, as avsc computes it.
function canonicalMode() {
  const cases = JSON.parse(fs.readFileSync(path.join(here, 'avro_cases.json'), 'utf8')).cases;
  for (const c of cases) console.log(`canonical ${c.name} ${JSON.stringify(avro.Type.forSchema(c.schema).schema())}`);
}

const [mode, dir] = process.argv.slice(2);
if (mode === 'read') await readMode(dir);
else if (mode === 'write') await writeMode(dir);
else if (mode === 'canonical') canonicalMode();
else { console.error('usage: avro_interop.mjs read|write DIR | canonical'); process.exit(2); }
