// Rows of Parquet files as two independent readers return them, for the
// rewriter's interop test (tests/unit/test_iceberg_rewrite.c).
//   node rewrite_rows.mjs FILE...
// Prints, for the files read one after another: "duck <row>" per row as
// DuckDB reads it, "hyp <row>" per row as hyparquet reads it (canonical
// JSON: bigints as strings, NaN as "NaN", -0 as "-0", bytes as hex), then
// "ids <json>": [name, field_id] of every schema node of the first file
// (DuckDB's parquet_schema()).
import fs from 'node:fs'
import { DuckDBInstance } from '@duckdb/node-api'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const files = process.argv.slice(2)
const sq = (s) => `'${s.replace(/'/g, "''")}'`
function norm(v) {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return v.toString()
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN'
    if (Object.is(v, -0)) return '-0'
    return v
  }
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex')
  if (v instanceof Date) return v.toISOString()
  if (Array.isArray(v)) return v.map(norm)
  if (typeof v === 'object') {
    if (typeof v.toJSON === 'function' && !(v.constructor === Object)) return String(v)
    const o = {}
    for (const [k, x] of Object.entries(v)) o[k] = norm(x)
    return o
  }
  return v
}
const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run('SET threads=1')
for (const f of files) {
  const r = await con.runAndReadAll(`SELECT * FROM read_parquet(${sq(f)})`)
  for (const row of r.getRowObjectsJS()) console.log('duck ' + JSON.stringify(norm(row)))
}
for (const f of files) {
  const buf = fs.readFileSync(f)
  const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
  const rows = await parquetReadObjects({ file, compressors, utf8: false })
  for (const row of rows) console.log('hyp ' + JSON.stringify(norm(row)))
}
const ids = (await con.runAndReadAll(`SELECT name, field_id FROM parquet_schema(${sq(files[0])})`)).getRows()
console.log('ids ' + JSON.stringify(ids.map(([n, id]) => [n, id === null ? null : Number(id)])))
