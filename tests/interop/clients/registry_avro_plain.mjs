// Producers that send no schema id: values and keys are plain Avro binary
// written by avsc (no magic byte, no id), produced with kafkajs into a
// topic with table.value.schema.subject / table.key.schema.subject; floe
// decodes them with the subjects' latest schemas from its registry.
// icebird reads every value; v2 registered later (a new optional field)
// decodes the records after it and adds the column; a value that does not
// decode is a dead letter.  Needs FLOE_KAFKA, FLOE_HTTP and FLOE_DATA.
import '../fetch_shim.mjs';
import avro from 'avsc';
import { icebergRead } from 'icebird';
import { Kafka, logLevel } from 'kafkajs';
import { assert, broker, createTopic, eq, finish, step, tag, until } from './common.mjs';

const http = process.env.FLOE_HTTP, data = process.env.FLOE_DATA;
const topic = `plain-${tag}`.replace(/[^a-zA-Z0-9-]/g, '-');
const vsubject = `orders-${tag}`, ksubject = `order-keys-${tag}`;
const kafka = new Kafka({ clientId: 'floe-avro-plain', brokers: [broker], logLevel: logLevel.NOTHING });

const KEY = { type: 'record', name: 'OrderKey', fields: [{ name: 'shop', type: 'string' }, { name: 'n', type: 'int' }] };
const V1 = { type: 'record', name: 'Order', namespace: 'plain', fields: [
  { name: 'id', type: 'long' }, { name: 'item', type: 'string' }, { name: 'price', type: 'double' },
  { name: 'note', type: ['null', 'string'], default: null }] };
const V2 = { ...V1, fields: [...V1.fields, { name: 'coupon', type: ['null', 'string'], default: null }] };
const N1 = 25, N2 = 15;
const v1row = (i) => ({ id: i, item: `item ${i} ✓`, price: i * 0.5, note: i % 3 ? null : `n${i}` });
const v2row = (i) => ({ ...v1row(i), coupon: i % 2 ? `C${i}` : null });
const keyOf = (i) => ({ shop: i % 2 ? 'east' : 'west', n: i });

async function register(subject, schema) {
  const r = await fetch(`http://${http}/subjects/${subject}/versions`, { method: 'POST',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schema: JSON.stringify(schema) }) });
  const body = await r.json();
  eq(r.status, 200, `register ${subject}: ${JSON.stringify(body)}`);
  return body.id;
}

async function produce(messages) {
  const producer = kafka.producer();
  await producer.connect();
  try { await producer.send({ topic, acks: -1, messages }); } finally { await producer.disconnect(); }
}

const norm = (v) => {
  if (typeof v === 'bigint') return Number(v);
  if (v === undefined) return null;
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = norm(v[k]);
    return o;
  }
  return v;
};
const loc = `${data}/warehouse/default/${topic}`;
async function rowsAtLeast(where, n) {
  let rows = [];
  await until(async () => {
    try { rows = await icebergRead({ tableUrl: where }); } catch { rows = []; }
    return rows.length >= n;
  }, 120000, `${n} rows in ${where}`);
  return rows.map(norm);
}

const keyType = avro.Type.forSchema(KEY);
const t1 = avro.Type.forSchema(V1), t2 = avro.Type.forSchema(V2);
const msg = (type, row, i) => ({ key: keyType.toBuffer(keyOf(i)), value: type.toBuffer(row) });

await step('avro_plain_register_and_create', 60, async () => {
  await register(ksubject, KEY);
  await register(vsubject, V1);
  await createTopic(kafka, topic, {
    'table.enable': 'true', 'table.value.converter': 'avro', 'table.key.converter': 'avro',
    'table.value.schema.subject': vsubject, 'table.key.schema.subject': ksubject,
    'table.commit.interval.ms': '500' });
});

await step('avro_plain_v1_rows', 180, async () => {
  const msgs = [];
  for (let i = 0; i < N1; i++) msgs.push(msg(t1, v1row(i), i));
  assert(msgs[0].value[0] !== 0 || msgs[0].value.length > 5, 'plain binary');
  await produce(msgs);
  const rows = (await rowsAtLeast(loc, N1)).sort((a, b) => a.id - b.id);
  eq(rows.length, N1, 'rows');
  for (let i = 0; i < N1; i++) {
    const { _kafka, ...cols } = rows[i];
    eq(cols, v1row(i), `row ${i}`);
    eq(JSON.parse(_kafka.key), keyOf(i), `key of row ${i}`);
  }
});

await step('avro_plain_v2_evolves_the_table', 180, async () => {
  await register(vsubject, V2);
  const msgs = [];
  for (let i = N1; i < N1 + N2; i++) msgs.push(msg(t2, v2row(i), i));
  msgs.push({ key: keyType.toBuffer(keyOf(999)), value: Buffer.from([0xff, 0xff, 0xff]) });
  await produce(msgs);
  const rows = (await rowsAtLeast(loc, N1 + N2)).sort((a, b) => a.id - b.id);
  eq(rows.length, N1 + N2, 'rows');
  for (let i = 0; i < N1 + N2; i++) {
    const { _kafka, ...cols } = rows[i];
    eq(cols, i < N1 ? { ...v1row(i), coupon: null } : v2row(i), `row ${i}`);
  }
  const dlq = await rowsAtLeast(`${loc}_dlq`, 1);
  eq(dlq.length, 1, 'dead letters');
});

finish();
