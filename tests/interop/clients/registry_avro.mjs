// floe's schema registry and avro table topics through Confluent's own
// JavaScript client (@confluentinc/schemaregistry): schema v1 registered,
// records serialized by its AvroSerializer and produced with kafkajs into a
// topic with table.value.converter=avro; then v2 (a new optional field)
// registered and produced; icebird reads the table and every value matches
// what was serialized; a record whose schema id floe does not know is a
// dead letter.  Needs FLOE_KAFKA, FLOE_HTTP and FLOE_DATA (lib.sh).
import '../fetch_shim.mjs';
import { icebergRead } from 'icebird';
import { Kafka, logLevel } from 'kafkajs';
import {
  AvroDeserializer, AvroSerializer, SchemaRegistryClient, SerdeType,
} from '@confluentinc/schemaregistry';
import { assert, broker, createTopic, eq, finish, sendValues, step, tag, until } from './common.mjs';

const http = process.env.FLOE_HTTP, data = process.env.FLOE_DATA;
const topic = `pay-${tag}`.replace(/[^a-zA-Z0-9-]/g, '-');
const table = topic.replace(/\./g, '_');
const registry = () => new SchemaRegistryClient({ baseURLs: [`http://${http}`] });

const V1 = {
  type: 'record', name: 'Payment', namespace: 'shop', fields: [
    { name: 'id', type: 'long' },
    { name: 'qty', type: 'int' },
    { name: 'amount', type: 'double' },
    { name: 'ok', type: 'boolean' },
    { name: 'who', type: 'string' },
    { name: 'state', type: { type: 'enum', name: 'State', symbols: ['NEW', 'PAID'] } },
    { name: 'at', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'card', type: { type: 'record', name: 'Card', fields: [
      { name: 'brand', type: 'string' }, { name: 'last4', type: 'int' }] } },
    { name: 'memo', type: ['null', 'string'], default: null },
  ],
};
const V2 = { ...V1, fields: [...V1.fields, { name: 'coupon', type: ['null', 'string'], default: null }] };
const N1 = 40, N2 = 30;
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const v1row = (i) => ({
  id: i, qty: i % 7, amount: i * 1.25, ok: i % 2 === 0, who: `user ${i} ✓`,
  state: i % 3 ? 'PAID' : 'NEW', at: T0 + i * 1000, tags: i % 4 ? ['a', `t${i}`] : [],
  card: { brand: i % 2 ? 'visa' : 'amex', last4: 1000 + i }, memo: i % 5 ? null : `memo ${i}`,
});
// (row 0's tags are empty: the very first record of a buffer types its
// columns from the schema, not from its values)
const v2row = (i) => ({ ...v1row(i), coupon: i % 2 ? `C${i}` : null });

const kafka = new Kafka({ clientId: 'floe-registry-avro', brokers: [broker], logLevel: logLevel.NOTHING });
const ids = {};

await step('registry_avro_create_table_topic', 60, async () => {
  await createTopic(kafka, topic, {
    'table.enable': 'true', 'table.value.converter': 'avro', 'table.commit.interval.ms': '500' });
});

async function produce(values) {
  await sendValues(kafka, topic, values);
}

await step('registry_avro_serialize_v1', 120, async () => {
  const client = registry();
  ids.v1 = await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(V1) });
  const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const values = [];
  for (let i = 0; i < N1; i++) values.push(await ser.serialize(topic, v1row(i)));
  eq(values[0].subarray(0, 5), Buffer.from([0, 0, 0, 0, ids.v1]), 'wire header');
  // the deserializer fetches the schema by id from floe and reads it back
  const de = new AvroDeserializer(registry(), SerdeType.VALUE, {});
  const back = await de.deserialize(topic, values[5]);
  eq(back.who, 'user 5 ✓', 'deserialized');
  await produce(values);
});

await step('registry_avro_evolve_v2', 120, async () => {
  const client = registry();
  // an incompatible change is refused (a required field with no default)
  let refused = false;
  try {
    await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(
      { ...V1, fields: [...V1.fields, { name: 'must', type: 'string' }] }) });
  } catch (e) { refused = e.status === 409 || /409|incompatible/i.test(String(e.message)); }
  assert(refused, 'an incompatible v2 was registered');
  ids.v2 = await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(V2) });
  assert(ids.v2 > ids.v1, `v2 id ${ids.v2} after v1 ${ids.v1}`);
  const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const values = [];
  for (let i = N1; i < N1 + N2; i++) values.push(await ser.serialize(topic, v2row(i)));
  // and a record whose schema id floe never gave out: a dead letter
  values.push(Buffer.concat([Buffer.from([0, 0, 0, 0x7f, 0x7f]), values[0].subarray(5)]));
  await produce(values);
});

const want = (r, v2) => ({
  // int stays int (a number), long is long (a bigint)
  id: String(r.id), qty: r.qty, amount: r.amount, ok: r.ok, who: r.who, state: r.state,
  at: new Date(r.at).toISOString(), tags: r.tags, card: { brand: r.card.brand, last4: r.card.last4 },
  memo: r.memo, coupon: v2 ? r.coupon : null,
});
const norm = (v) => {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(norm);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) if (k !== '_kafka') o[k] = norm(v[k]);
    return o;
  }
  return v;
};

await step('registry_avro_icebird_reads_every_value', 180, async () => {
  const loc = `${data}/warehouse/default/${table}`;
  let rows = [];
  await until(async () => {
    try { rows = await icebergRead({ tableUrl: loc }); } catch { rows = []; }
    return rows.length >= N1 + N2;
  }, 120000, `${N1 + N2} rows in ${loc}`);
  eq(rows.length, N1 + N2, 'row count');
  const got = rows.map(norm).sort((a, b) => Number(a.id) - Number(b.id));
  for (let i = 0; i < N1 + N2; i++) {
    const w = i < N1 ? want(v1row(i), false) : want(v2row(i), true);
    eq(got[i], w, `row ${i}`);
  }
});

await step('registry_avro_unknown_id_is_a_dead_letter', 120, async () => {
  const loc = `${data}/warehouse/default/${table}_dlq`;
  let rows = [];
  await until(async () => {
    try { rows = await icebergRead({ tableUrl: loc }); } catch { rows = []; }
    return rows.length >= 1;
  }, 60000, `a row in ${loc}`);
  eq(rows.length, 1, 'dead letters');
  const why = JSON.stringify(norm(rows[0]));
  assert(/schema id 32639/.test(why), `reason: ${why.slice(0, 300)}`);
});

finish();
