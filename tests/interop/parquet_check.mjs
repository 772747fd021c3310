// Checks Parquet files written by floe's test program with independent
// readers (DuckDB, hyparquet), and writes DuckDB-made files for floe to read.
//   node parquet_check.mjs DIR
// For every DIR/X.parquet (not duck_*) there are X.jsonl (expected rows in
// canonical JSON, see tests/unit/pq_gen.c) and X.meta.json (codec, field ids,
// expected statistics, hyparquet-safe columns).  Prints "ok - ..." or
// "not ok - ...: why" lines.  Then writes DIR/duck_*.parquet with DuckDB and
// DIR/duck_*.jsonl (DuckDB's own rows, canonical JSON) for the reverse check.
import fs from 'node:fs'
import { DuckDBInstance, DuckDBDecimalValue, DuckDBDateValue, DuckDBTimestampValue,
  DuckDBTimestampTZValue, DuckDBTimeValue, DuckDBBlobValue, DuckDBUUIDValue, DuckDBListValue,
  DuckDBStructValue, DuckDBMapValue } from '@duckdb/node-api'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const compareMode = process.argv[2] === '--compare'
const dir = process.argv[compareMode ? 3 : 2]
const LIM = 2n ** 53n
const bigNorm = (b) => (b <= LIM && b >= -LIM ? Number(b) : b.toString())
const hex = (u8) => Array.from(u8, (x) => x.toString(16).padStart(2, '0')).join('')
const numNorm = (x) => (Number.isNaN(x) ? 'NaN' : x === Infinity ? 'Infinity' : x === -Infinity ? '-Infinity' : x)

function norm(v) {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return bigNorm(v)
  if (typeof v === 'number') return numNorm(v)
  if (typeof v === 'boolean' || typeof v === 'string') return v
  if (v instanceof DuckDBDecimalValue) return bigNorm(v.value)
  if (v instanceof DuckDBDateValue) return v.days
  if (v instanceof DuckDBTimestampValue || v instanceof DuckDBTimestampTZValue || v instanceof DuckDBTimeValue) return bigNorm(v.micros)
  if (v instanceof DuckDBBlobValue) return hex(v.bytes)
  if (v instanceof DuckDBUUIDValue) return v.toString()
  if (v instanceof DuckDBListValue) return v.items.map(norm)
  if (v instanceof DuckDBMapValue) return v.entries.map((e) => [norm(e.key), norm(e.value)])
  if (v instanceof DuckDBStructValue) {
    const o = {}
    for (const [k, x] of Object.entries(v.entries)) o[k] = norm(x)
    return o
  }
  if (v instanceof Uint8Array) return hex(v)
  if (Array.isArray(v)) return v.map(norm)
  if (typeof v === 'object') {
    const o = {}
    for (const [k, x] of Object.entries(v)) o[k] = norm(x)
    return o
  }
  return String(v)
}

let failed = 0
const ok = (name) => console.log(`ok - ${name}`)
const bad = (name, why) => { failed++; console.log(`not ok - ${name}: ${why}`) }
const canon = (line) => JSON.stringify(JSON.parse(line))
const sq = (s) => `'${s.replace(/'/g, "''")}'`

function compareRows(name, got, want) {
  if (got.length !== want.length) return bad(name, `${got.length} rows, expected ${want.length}`)
  for (let i = 0; i < want.length; i++) {
    if (got[i] !== want[i]) return bad(name, `row ${i}: got ${got[i].slice(0, 300)} expected ${want[i].slice(0, 300)}`)
  }
  ok(name)
}

if (compareMode) {
  // floe's reader decoded DIR/duck_X.parquet into DIR/duck_X.floe.jsonl
  for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('duck_') && f.endsWith('.floe.jsonl')).sort()) {
    const base = f.slice(0, -'.floe.jsonl'.length)
    const got = fs.readFileSync(`${dir}/${f}`, 'utf8').split('\n').filter(Boolean).map(canon)
    const want = fs.readFileSync(`${dir}/${base}.jsonl`, 'utf8').split('\n').filter(Boolean).map(canon)
    compareRows(`floe_reads_${base}`, got, want)
  }
  process.exit(failed ? 1 : 0)
}

const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run('SET threads=1')

for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.parquet') && !f.startsWith('duck_')).sort()) {
  const base = f.slice(0, -8)
  const path = `${dir}/${f}`
  const want = fs.readFileSync(`${dir}/${base}.jsonl`, 'utf8').split('\n').filter(Boolean).map(canon)
  const meta = JSON.parse(fs.readFileSync(`${dir}/${base}.meta.json`, 'utf8'))
  try {
    const r = await con.runAndReadAll(`SELECT * FROM read_parquet(${sq(path)})`)
    const got = r.getRowObjects().map((row) => JSON.stringify(norm(row)))
    compareRows(`duckdb_reads_${base}`, got, want)

    const sch = (await con.runAndReadAll(`SELECT name, field_id FROM parquet_schema(${sq(path)})`)).getRows()
    const ids = sch.slice(1).map(([n, id]) => [n, id === null ? null : Number(id)])
    if (JSON.stringify(ids) === JSON.stringify(meta.ids)) ok(`duckdb_field_ids_${base}`)
    else bad(`duckdb_field_ids_${base}`, `${JSON.stringify(ids).slice(0, 200)} vs ${JSON.stringify(meta.ids).slice(0, 200)}`)

    const md = (await con.runAndReadAll(
      `SELECT path_in_schema, compression, stats_min_value, stats_max_value, stats_null_count, row_group_id
       FROM parquet_metadata(${sq(path)})`)).getRowObjects()
    const codecs = new Set(md.map((m) => String(m.compression)))
    if (codecs.size === 1 && codecs.has(meta.codec)) ok(`duckdb_codec_${base}`)
    else bad(`duckdb_codec_${base}`, `${[...codecs]} vs ${meta.codec}`)
    let statsOk = true, why = ''
    for (const s of meta.stats || []) {
      const rows = md.filter((m) => String(m.path_in_schema) === s.path)
      if (!rows.length) { statsOk = false; why = `no column ${s.path}`; break }
      const nulls = rows.reduce((a, m) => a + Number(m.stats_null_count), 0)
      const eq = (a, b) => (s.num ? Number(a) === Number(b) : String(a) === String(b))
      const mins = rows.map((m) => m.stats_min_value), maxs = rows.map((m) => m.stats_max_value)
      const cmp = (a, b) => (s.num ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0)
      const mn = mins.reduce((a, b) => (a === null ? b : b === null ? a : cmp(a, b) <= 0 ? a : b), null)
      const mx = maxs.reduce((a, b) => (a === null ? b : b === null ? a : cmp(a, b) >= 0 ? a : b), null)
      if (nulls !== s.nulls || !eq(mn, s.min) || !eq(mx, s.max)) {
        statsOk = false
        why = `${s.path}: min ${mn} max ${mx} nulls ${nulls}, expected ${s.min} ${s.max} ${s.nulls}`
        break
      }
    }
    if (statsOk) ok(`duckdb_statistics_${base}`)
    else bad(`duckdb_statistics_${base}`, why)

    const buf = fs.readFileSync(path)
    const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
    const parsers = {
      timestampFromMilliseconds: (x) => x, timestampFromMicroseconds: (x) => x,
      timestampFromNanoseconds: (x) => x, dateFromDays: (x) => x,
    }
    const all = await parquetReadObjects({ file, compressors, parsers, utf8: false })
    if (all.length === want.length) ok(`hyparquet_reads_all_${base}`)
    else bad(`hyparquet_reads_all_${base}`, `${all.length} rows, expected ${want.length}`)
    if (meta.hyparquet_cols.length) {
      const cols = meta.hyparquet_cols
      const hy = all.map((row) => { const o = {}; for (const c of cols) o[c] = norm(row[c]); return JSON.stringify(o) })
      const exp = want.map((l) => { const j = JSON.parse(l); const o = {}; for (const c of cols) o[c] = j[c]; return JSON.stringify(o) })
      compareRows(`hyparquet_values_${base}`, hy, exp)
    }
  } catch (e) {
    bad(`read_${base}`, String(e.message || e).split('\n')[0])
  }
}

// DuckDB-written files for floe's reader: every type, nesting, codec, both page versions.
await con.run(`CREATE TABLE t AS SELECT
  i::INTEGER AS id,
  CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 2654435761) % 1000003 - 500000 END::BIGINT AS i64,
  (i % 5 = 0) AS flag,
  (i % 100)::TINYINT AS tiny,
  (i * 3)::SMALLINT AS small,
  (i * 0.5)::FLOAT AS f32,
  CASE WHEN i % 11 = 0 THEN NULL ELSE i * 1.25 - 77.125 END::DOUBLE AS f64,
  CASE WHEN i % 13 = 0 THEN NULL ELSE 'name-' || (i % 37) END AS str,
  repeat('x', i % 17) || i::VARCHAR AS longish,
  encode('b' || (i % 9)::VARCHAR) AS bin,
  md5(i::VARCHAR)::UUID AS u,
  (i * 12345.678)::DECIMAL(18,3) AS d18,
  ((i % 600) * 1.5)::DECIMAL(4,1) AS d4,
  (i::DECIMAL(38,5) * 98765432109876.54321 - 1e15)::DECIMAL(38,5) AS d38,
  DATE '2020-01-01' + (i % 1000)::INTEGER AS dt,
  TIMESTAMP '2024-03-01 12:00:00' + to_microseconds(i * 1234567) AS ts,
  (TIMESTAMP '2024-03-01 12:00:00' + to_microseconds(i * 7654321))::TIMESTAMPTZ AS tstz,
  TIME '01:02:03' + to_microseconds(i * 1000) AS tm,
  {'a': i, 'b': CASE WHEN i % 3 = 0 THEN NULL ELSE 's' || i::VARCHAR END} AS st,
  CASE WHEN i % 9 = 0 THEN NULL ELSE [j FOR j IN range(i % 4)] END::BIGINT[] AS lst,
  [ {'x': i, 'y': ['p', NULL, 'q'][:(i % 3)]} ] AS lst_st,
  CASE WHEN i % 10 = 0 THEN NULL ELSE MAP {'k1': i, 'k2': NULL} END AS mp
  FROM range(3000) r(i)`)
const variants = [
  ['uncompressed', ''], ['snappy', ''], ['gzip', ''], ['zstd', ''], ['lz4_raw', ''],
  ['zstd_v2', ", PARQUET_VERSION 'V2'"], ['snappy_small_rg', ', ROW_GROUP_SIZE 500'],
]
const rows = (await con.runAndReadAll('SELECT * FROM t ORDER BY id')).getRowObjects().map((r) => JSON.stringify(norm(r)))
for (const [name, extra] of variants) {
  const codec = name.split('_')[0] === 'lz4' ? 'lz4_raw' : name.split('_')[0]
  const out = `${dir}/duck_${name}.parquet`
  try {
    await con.run(`COPY (SELECT * FROM t ORDER BY id) TO ${sq(out)} (FORMAT parquet, COMPRESSION ${codec}${extra})`)
    fs.writeFileSync(`${dir}/duck_${name}.jsonl`, rows.join('\n') + '\n')
    ok(`duckdb_writes_${name}`)
  } catch (e) {
    bad(`duckdb_writes_${name}`, String(e.message || e).split('\n')[0])
  }
}
process.exit(failed ? 1 : 0)
