// Read an Iceberg table with icebird (an independent reader) and print how
// many rows it returned and how long the read took in ms, for benchmarks:
// "rows=N ms=T".  Usage: node icebird_count.mjs TABLE_LOCATION
import './fetch_shim.mjs';
import { icebergRead } from 'icebird';

const t0 = performance.now();
const rows = await icebergRead({ tableUrl: process.argv[2] });
const ms = performance.now() - t0;
console.log(`rows=${rows.length} ms=${ms.toFixed(1)}`);
