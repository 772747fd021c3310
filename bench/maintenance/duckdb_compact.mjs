// DuckDB side of bench/maintenance: time COPY (SELECT * FROM
// read_parquet([...])) TO OUT (FORMAT parquet, COMPRESSION zstd) over the
// small files listed in LIST (one path a line) on one thread, once (the
// bench alternates rounds and keeps each side's best).
// Prints "duckdb secs=S bytes=B rows=N cpu=C" (C: CPU seconds of the
// process during the COPY).
//   node duckdb_compact.mjs LIST OUT.parquet   (cwd: tests/interop)
import fs from 'node:fs'
import { createRequire } from 'node:module'

const { DuckDBInstance } = createRequire(`${process.cwd()}/`)('@duckdb/node-api')
const [list, out] = process.argv.slice(2)
const sq = (s) => `'${s.replace(/'/g, "''")}'`
const files = fs.readFileSync(list, 'utf8').split('\n').filter(Boolean)
const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run('SET threads=1')
let best = Infinity, bestCpu = Infinity
for (let i = 0; i < 1; i++) {
  const t0 = process.hrtime.bigint()
  const c0 = process.cpuUsage()
  await con.run(`COPY (SELECT * FROM read_parquet([${files.map(sq).join(',')}])) TO ${sq(out)} (FORMAT parquet, COMPRESSION zstd)`)
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  const c = process.cpuUsage(c0)
  const cpu = (c.user + c.system) / 1e6
  if (s < best) best = s
  if (cpu < bestCpu) bestCpu = cpu
}
const r = await con.runAndReadAll(`SELECT count(*) FROM read_parquet(${sq(out)})`)
console.log(`duckdb secs=${best.toFixed(4)} bytes=${fs.statSync(out).size} rows=${r.getRows()[0][0]} cpu=${bestCpu.toFixed(4)}`)
