// JSON Schema table topics through floe's own schema registry (issue 17),
// with Confluent's JavaScript JsonSerializer (@confluentinc/schemaregistry,
// which fetches the schema back from floe and validates every message with
// it) and kafkajs.  v1 (a closed content model) is produced into a topic
// with table.value.converter=json_schema; v2 adds an optional property and
// evolves the table with a column; v3 (a property's type changed) is
// refused with 409; v4 (integer -> number, which Confluent's rules allow)
// widens the committed long column to double (floe replaces the field and
// rewrites its files); a record that does not match its schema is a dead
// letter with the reason.  icebird reads the table and every value matches
// what was serialized.  Needs FLOE_KAFKA, FLOE_HTTP and FLOE_DATA (lib.sh).
import '../fetch_shim.mjs';
import { icebergRead } from 'icebird';
import { Kafka, logLevel } from 'kafkajs';
import {
  JsonDeserializer, JsonSerializer, SchemaRegistryClient, SerdeType,
} from '@confluentinc/schemaregistry';
import {
  assert, broker, createTopic, eq, finish, normRow, rowsAtLeast, sendValues, step, tag, until,
} from './common.mjs';

const http = process.env.FLOE_HTTP, data = process.env.FLOE_DATA;
const topic = `js-${tag}`.replace(/[^a-zA-Z0-9-]/g, '-');
const table = topic.replace(/\./g, '_');
const registry = () => new SchemaRegistryClient({ baseURLs: [`http://${http}`] });

const V1 = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Payment', type: 'object', additionalProperties: false,
  definitions: {
    Card: { type: 'object', properties: { brand: { type: 'string' }, last4: { type: 'integer' } },
      required: ['brand'] },
  },
  properties: {
    id: { type: 'integer' },
    qty: { type: 'integer', minimum: 0 },
    amount: { type: 'number' },
    ok: { type: 'boolean' },
    who: { type: 'string' },
    state: { enum: ['NEW', 'PAID'] },
    at: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    tags: { type: 'array', items: { type: 'string' } },
    card: { oneOf: [{ type: 'null' }, { $ref: '#/definitions/Card' }] },
    memo: { type: ['string', 'null'] },
    counts: { type: 'object', additionalProperties: { type: 'integer' } },
  },
  required: ['id', 'who', 'amount'],
};
const V2 = { ...V1, properties: { ...V1.properties, coupon: { type: 'string' } } };
const V3 = { ...V1, properties: { ...V1.properties, qty: { type: 'string' } } };
const V4 = { ...V2, properties: { ...V2.properties, qty: { type: 'number', minimum: 0 } } };
const N1 = 40, N2 = 30, N4 = 5;
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const v1row = (i) => ({
  id: 1000000007 * i, qty: i % 7, amount: i * 1.25, ok: i % 2 === 0, who: `user ${i} ✓`,
  state: i % 3 ? 'PAID' : 'NEW', at: new Date(T0 + i * 1000).toISOString(),
  day: new Date(T0 + i * 86400000).toISOString().slice(0, 10),
  tags: i % 4 ? ['a', `t${i}`] : [], card: i % 5 === 4 ? null : { brand: i % 2 ? 'visa' : 'amex', last4: 1000 + i },
  ...(i % 5 ? {} : { memo: `memo ${i}` }), counts: i % 3 === 1 ? {} : { x: i, y: -2 },
});
const v2row = (i) => ({ ...v1row(i), ...(i % 2 ? { coupon: `C${i}` } : {}) });
const v4row = (i) => ({ ...v2row(i), qty: i + 0.5 });
const rowOf = (i) => (i < N1 ? v1row(i) : i < N1 + N2 ? v2row(i) : v4row(i));

const kafka = new Kafka({ clientId: 'floe-registry-json', brokers: [broker], logLevel: logLevel.NOTHING });
const ids = {};

await step('registry_json_create_table_topic', 60, async () => {
  await createTopic(kafka, topic, {
    'table.enable': 'true', 'table.value.converter': 'json_schema', 'table.commit.interval.ms': '500' });
});

async function produce(values) {
  await sendValues(kafka, topic, values);
}

async function serialize(rows) {
  // (the options go to ajv, which knows no formats of its own)
  const ser = new JsonSerializer(registry(), SerdeType.VALUE, { useLatestVersion: true, validate: true,
    formats: { 'date-time': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/, date: /^\d{4}-\d\d-\d\d$/ } });
  const values = [];
  for (const r of rows) values.push(await ser.serialize(topic, r));
  return values;
}

await step('registry_json_serialize_v1', 120, async () => {
  const client = registry();
  ids.v1 = await client.register(`${topic}-value`, { schemaType: 'JSON', schema: JSON.stringify(V1) });
  // the same schema spelled otherwise is the same id
  const again = await client.register(`${topic}-value`, { schemaType: 'JSON', schema: JSON.stringify(V1, null, 2) });
  eq(again, ids.v1, 're-registered id');
  const values = await serialize(Array.from({ length: N1 }, (_, i) => v1row(i)));
  eq(values[0].subarray(0, 5), Buffer.from([0, 0, 0, 0, ids.v1]), 'wire header');
  // the serializer validates against floe's copy: a bad message is refused
  let invalid = false;
  try { await serialize([{ ...v1row(1), qty: 'many' }]); } catch { invalid = true; }
  assert(invalid, 'the serializer took a message its schema refuses');
  const de = new JsonDeserializer(registry(), SerdeType.VALUE, {});
  const back = await de.deserialize(topic, values[5]);
  eq(back.who, 'user 5 ✓', 'deserialized');
  const latest = await client.getLatestSchemaMetadata(`${topic}-value`);
  eq(latest.schemaType, 'JSON', 'schema type');
  await produce(values);
});

await step('registry_json_evolve_v2', 120, async () => {
  const client = registry();
  ids.v2 = await client.register(`${topic}-value`, { schemaType: 'JSON', schema: JSON.stringify(V2) });
  assert(ids.v2 > ids.v1, `v2 id ${ids.v2} after v1 ${ids.v1}`);
  const values = await serialize(Array.from({ length: N2 }, (_, i) => v2row(N1 + i)));
  eq(values[0].readInt32BE(1), ids.v2, 'v2 id on the wire');
  // a record that does not match its schema (v2's id): a dead letter
  values.push(Buffer.concat([values[0].subarray(0, 5), Buffer.from(JSON.stringify({ ...v2row(1), id: 'one' }))]));
  await produce(values);
});

await step('registry_json_incompatible_v3', 60, async () => {
  let status = 0, message = '';
  try {
    await registry().register(`${topic}-value`, { schemaType: 'JSON', schema: JSON.stringify(V3) });
  } catch (e) { status = e.status; message = String(e.message); }
  assert(status === 409 || /409|incompatible/i.test(message), `v3 answered ${status}: ${message}`);
  const res = await fetch(`http://${http}/compatibility/subjects/${topic}-value/versions/latest?verbose=true`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schemaType: 'JSON', schema: JSON.stringify(V3) }) });
  const body = await res.json();
  eq(body.is_compatible, false, 'verdict');
  assert(/qty/.test(JSON.stringify(body.messages)), `reasons: ${JSON.stringify(body).slice(0, 300)}`);
});

await step('registry_json_widen_v4', 120, async () => {
  // the table must hold the long column before v4 arrives
  await until(async () => {
    try { return (await icebergRead({ tableUrl: `${data}/warehouse/default/${table}` })).length >= N1 + N2; } catch { return false; }
  }, 120000, `${N1 + N2} rows before v4`);
  ids.v4 = await registry().register(`${topic}-value`, { schemaType: 'JSON', schema: JSON.stringify(V4) });
  assert(ids.v4 > ids.v2, `v4 id ${ids.v4} after v2 ${ids.v2}`);
  await produce(await serialize(Array.from({ length: N4 }, (_, i) => v4row(N1 + N2 + i))));
});

const want = (r, v2) => ({
  id: String(r.id), qty: r.qty, amount: r.amount, ok: r.ok, who: r.who, state: r.state,
  at: r.at, day: r.day, tags: r.tags.length ? r.tags : null,
  card: r.card ? { brand: r.card.brand, last4: String(r.card.last4) } : null,
  memo: r.memo ?? null,
  counts: Object.fromEntries(Object.entries(r.counts).map(([k, v]) => [k, String(v)])),
  coupon: v2 ? r.coupon ?? null : null,
});
const day = (v) => (typeof v === 'string' && v.length > 10 ? v.slice(0, 10) : v);

await step('registry_json_icebird_reads_every_value', 180, async () => {
  const rows = await rowsAtLeast(icebergRead, `${data}/warehouse/default/${table}`, N1 + N2 + N4);
  eq(rows.length, N1 + N2 + N4, 'row count');
  const got = rows.map(normRow).map((r) => ({ ...r, day: day(r.day) }))
    .sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)));
  for (let i = 0; i < N1 + N2 + N4; i++) eq(got[i], normRow(want(rowOf(i), i >= N1)), `row ${i}`);
});

await step('registry_json_mismatch_is_a_dead_letter', 120, async () => {
  const rows = await rowsAtLeast(icebergRead, `${data}/warehouse/default/${table}_dlq`, 1, 60000);
  eq(rows.length, 1, 'dead letters');
  const why = JSON.stringify(normRow(rows[0]));
  assert(/'id' is not a number/.test(why), `reason: ${why.slice(0, 300)}`);
});

finish();
