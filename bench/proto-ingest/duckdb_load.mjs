// DuckDB side of bench/proto-ingest: time CREATE TABLE AS SELECT * FROM
// read_json_auto(F) (the rows into DuckDB's own columns) on one thread,
// best of three.  Prints "duckdb secs=S bytes=B rows=N cpu=C" (C: CPU
// seconds of the process during the best load).
//   node ../../bench/proto-ingest/duckdb_load.mjs EVENTS.jsonl   (cwd: tests/interop)
import fs from 'node:fs'
import { createRequire } from 'node:module'

const { DuckDBInstance } = createRequire(`${process.cwd()}/`)('@duckdb/node-api')
const [src] = process.argv.slice(2)
const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run('SET threads=1')
let best = Infinity, bestCpu = Infinity, rows = 0
for (let i = 0; i < 3; i++) {
  await con.run('DROP TABLE IF EXISTS t')
  const t0 = process.hrtime.bigint()
  const c0 = process.cpuUsage()
  await con.run(`CREATE TABLE t AS SELECT * FROM read_json_auto('${src}')`)
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  const c = process.cpuUsage(c0)
  const cpu = (c.user + c.system) / 1e6
  if (s < best) best = s
  if (cpu < bestCpu) bestCpu = cpu
}
const r = await con.runAndReadAll('SELECT count(*) FROM t')
rows = r.getRows()[0][0]
console.log(`duckdb secs=${best.toFixed(4)} bytes=${fs.statSync(src).size} rows=${rows} cpu=${bestCpu.toFixed(4)}`)
