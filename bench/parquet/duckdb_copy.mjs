// DuckDB side of bench/parquet: load the source rows into an in-memory
// table (untimed), then time COPY ... TO (FORMAT parquet, COMPRESSION zstd)
// on one thread, best of three (wall and process CPU time), at DuckDB's
// default zstd level and at level 1.
// Prints "duckdb secs=S cpu=C bytes=B" and "duckdb_level1 secs=S cpu=C bytes=B".
//   node duckdb_copy.mjs SOURCE.parquet OUT.parquet   (cwd: tests/interop)
import fs from 'node:fs'
import { createRequire } from 'node:module'

// resolve @duckdb/node-api from the cwd (tests/interop), not from this file
const { DuckDBInstance } = createRequire(`${process.cwd()}/`)('@duckdb/node-api')

const [src, out] = process.argv.slice(2)
const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run('SET threads=1')
await con.run(`CREATE TABLE events AS SELECT * FROM read_parquet('${src}')`)
// DuckDB's default zstd level (3), then level 1 (floe's default) for an
// equal-level comparison.
for (const [tag, opt] of [['duckdb', ''], ['duckdb_level1', ', COMPRESSION_LEVEL 1']]) {
  let best = Infinity, bestCpu = Infinity
  for (let i = 0; i < 3; i++) {
    const c0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    await con.run(`COPY events TO '${out}' (FORMAT parquet, COMPRESSION zstd${opt})`)
    const s = Number(process.hrtime.bigint() - t0) / 1e9
    const c = process.cpuUsage(c0)
    const cpu = (c.user + c.system) / 1e6
    if (s < best) best = s
    if (cpu < bestCpu) bestCpu = cpu
  }
  console.log(`${tag} secs=${best.toFixed(4)} cpu=${bestCpu.toFixed(4)} bytes=${fs.statSync(out).size}`)
}
