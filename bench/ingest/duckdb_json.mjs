// DuckDB side of bench/ingest: time COPY (SELECT * FROM read_json_auto(F))
// TO OUT (FORMAT parquet, COMPRESSION zstd) on one thread, best of two.
// Prints "duckdb secs=S bytes=B rows=N cpu=C" (C: CPU seconds of the
// process during the best COPY, a figure that load on the machine bends less).
//   node duckdb_json.mjs EVENTS.jsonl OUT.parquet   (cwd: tests/interop)
import fs from 'node:fs'
import { createRequire } from 'node:module'

const { DuckDBInstance } = createRequire(`${process.cwd()}/`)('@duckdb/node-api')
const [src, out] = process.argv.slice(2)
const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run('SET threads=1')
let best = Infinity, bestCpu = Infinity
for (let i = 0; i < 2; i++) {
  const t0 = process.hrtime.bigint()
  const c0 = process.cpuUsage()
  await con.run(`COPY (SELECT * FROM read_json_auto('${src}')) TO '${out}' (FORMAT parquet, COMPRESSION zstd)`)
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  const c = process.cpuUsage(c0)
  const cpu = (c.user + c.system) / 1e6 // the whole process: DuckDB's thread and node's
  if (s < best) best = s
  if (cpu < bestCpu) bestCpu = cpu
}
const r = await con.runAndReadAll(`SELECT count(*) FROM read_parquet('${out}')`)
console.log(`duckdb secs=${best.toFixed(4)} bytes=${fs.statSync(out).size} rows=${r.getRows()[0][0]} cpu=${bestCpu.toFixed(4)}`)
