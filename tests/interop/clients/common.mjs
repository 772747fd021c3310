// Helpers shared by the node client scripts: TAP-like result lines and
// bounded steps.  The broker address comes from FLOE_KAFKA (set by lib.sh).
export const broker = process.env.FLOE_KAFKA;
if (!broker) { console.log('not ok - env: FLOE_KAFKA is not set'); process.exit(1); }
export const tag = `${process.pid}-${Date.now()}`;
let failed = 0;

// A throw outside a step (top-level await included) is a failure with its
// reason, not a stack trace that a reader of the log has to find.
const script = (process.argv[1] || 'node').split('/').pop().replace(/\.mjs$/, '');
process.on('uncaughtException', (e) => {
  console.log(`not ok - ${script}: uncaught ${String(e && e.stack || e).split('\n').slice(0, 3).join(' | ')}`);
  process.exit(1);
});

// Run one named step with a time bound; prints ok / not ok.  Later steps
// still run (each states what it needs), so one report shows every failure.
export async function step(name, seconds, fn) {
  let timer;
  try {
    const r = await Promise.race([
      fn(),
      new Promise((_, rej) => { timer = setTimeout(() => rej(new Error(`timed out after ${seconds}s`)), seconds * 1000); }),
    ]);
    console.log(`ok - ${name}`);
    return r === undefined ? true : r;
  } catch (e) {
    failed++;
    console.log(`not ok - ${name}: ${String(e && e.stack || e).split('\n').slice(0, 3).join(' | ')}`);
    return undefined;
  } finally { clearTimeout(timer); }
}

export function assert(cond, msg) { if (!cond) throw new Error(msg); }
// Deep equality by canonical JSON (object keys sorted).
const canon = (v) => JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x)
  ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x));
export function eq(got, want, what) {
  const g = canon(got), w = canon(want);
  if (g !== w) throw new Error(`${what}: got ${g.slice(0, 300)}, want ${w.slice(0, 300)}`);
}
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Poll until pred() is true or the deadline passes.
export async function until(pred, ms, what) {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

// The rows of the Iceberg table at loc once it holds at least n, read with
// read (icebird's icebergRead, passed in so that clients without icebird
// need not load it); a table not there yet reads as none.
export async function rowsAtLeast(read, loc, n, ms = 120000) {
  let rows = [];
  await until(async () => {
    try { rows = await read({ tableUrl: loc }); } catch { rows = []; }
    return rows.length >= n;
  }, ms, `${n} rows in ${loc}`);
  return rows;
}

// A row as tests compare it: bigints as text, dates as ISO text, keys
// sorted, `_kafka` left out; an empty list reads as null (before its
// column exists, JSON inference gives it none).
export const normRow = (v) => {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.length ? v.map(normRow) : null;
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) if (k !== '_kafka') o[k] = normRow(v[k]);
    return o;
  }
  return v;
};

// Create a one-partition topic with these configs ({name: value}).
export async function createTopic(kafka, topic, configs) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ waitForLeaders: true, topics: [{
      topic, numPartitions: 1,
      configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }] });
  } finally { await admin.disconnect(); }
}

// values (serialized) to topic through kafka's producer, keyed k0, k1...,
// all acknowledged by every replica.
export async function sendValues(kafka, topic, values) {
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: values.map((value, i) => ({ key: `k${i}`, value })) });
  } finally { await producer.disconnect(); }
}

export function finish() { process.exit(failed ? 1 : 0); }

// The floe.offsets (partition -> next offset) of a table's metadata md:
// of the newest snapshot in the current one's ancestry that has them (an
// engine's commits on top of floe's have none); null when none has.
export function floeOffsets(md) {
  const byId = new Map((md.snapshots ?? []).map((s) => [s['snapshot-id'], s]));
  for (let s = byId.get(md['current-snapshot-id']); s; s = byId.get(s['parent-snapshot-id']))
    if (s.summary['floe.offsets']) return JSON.parse(s.summary['floe.offsets']);
  return null;
}
