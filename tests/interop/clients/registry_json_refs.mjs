// JSON Schemas with references through a schema registry (issue 17):
// money.json and card.json (which itself refers to money.json) are
// registered as their own subjects, and an Order schema whose "$ref"s name
// card.json (the document and a pointer into its definitions) and
// money.json is registered with both as references.  Confluent's
// JavaScript JsonSerializer (@confluentinc/schemaregistry, which resolves
// the references itself and validates every message) and kafkajs produce
// into a json_schema table topic; floe fetches the references (from its
// own registry, or from an external one through schema.registry.url) and
// icebird reads every value back.  The registry is REGISTRY_HTTP when set,
// else FLOE_HTTP; the table is in FLOE_DATA (lib.sh).
import '../fetch_shim.mjs';
import { icebergRead } from 'icebird';
import { Kafka, logLevel } from 'kafkajs';
import { JsonSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import {
  assert, broker, createTopic, eq, finish, normRow, rowsAtLeast, sendValues, step, tag,
} from './common.mjs';

const reg = process.env.REGISTRY_HTTP || process.env.FLOE_HTTP, data = process.env.FLOE_DATA;
const topic = `jsref-${tag}`.replace(/[^a-zA-Z0-9-]/g, '-');
const N = 40;
const draft = 'http://json-schema.org/draft-07/schema#';

const MONEY = {
  $schema: draft, type: 'object',
  properties: { currency: { type: 'string' }, cents: { type: 'integer' } }, required: ['currency'],
};
const CARD = {
  $schema: draft, type: 'object',
  definitions: { Tier: { enum: ['GOLD', 'SILVER', 'BASIC'] } },
  properties: { brand: { type: 'string' }, last4: { type: 'integer' }, limit: { $ref: 'money.json' } },
  required: ['brand'],
};
const ORDER = {
  $schema: draft, title: 'Order', type: 'object',
  properties: {
    id: { type: 'integer' },
    card: { oneOf: [{ type: 'null' }, { $ref: 'card.json' }] },
    price: { $ref: 'money.json' },
    tier: { $ref: 'card.json#/definitions/Tier' },
    note: { type: 'string' },
  },
  required: ['id', 'price'],
};

const row = (i) => ({
  id: 1000000007 * i,
  card: i % 5 === 3 ? null : { brand: i % 2 ? 'visa' : 'amex', last4: 1000 + i,
    ...(i % 3 ? { limit: { currency: 'EUR', cents: i * 100 } } : {}) },
  price: { currency: i % 2 ? 'USD' : 'EUR', cents: i * 7 - 3 },
  tier: ['GOLD', 'SILVER', 'BASIC'][i % 3],
  ...(i % 4 ? { note: `note ${i} ✓` } : {}),
});
const want = (i) => {
  const r = row(i);
  const money = (m) => (m ? { currency: m.currency, cents: String(m.cents) } : null);
  return {
    id: String(r.id),
    card: r.card ? { brand: r.card.brand, last4: String(r.card.last4), limit: money(r.card.limit) } : null,
    price: money(r.price), tier: r.tier, note: r.note ?? null,
  };
};

const kafka = new Kafka({ clientId: 'floe-json-refs', brokers: [broker], logLevel: logLevel.NOTHING });

await step('registry_json_refs_produce', 120, async () => {
  await createTopic(kafka, topic, { 'table.enable': 'true', 'table.value.converter': 'json_schema',
    'table.commit.interval.ms': '500' });
  const client = new SchemaRegistryClient({ baseURLs: [`http://${reg}`] });
  const money = await client.register(`${topic}-money`, { schemaType: 'JSON', schema: JSON.stringify(MONEY) });
  const card = await client.register(`${topic}-card`, { schemaType: 'JSON', schema: JSON.stringify(CARD),
    references: [{ name: 'money.json', subject: `${topic}-money`, version: 1 }] });
  const order = await client.register(`${topic}-value`, { schemaType: 'JSON', schema: JSON.stringify(ORDER),
    references: [{ name: 'card.json', subject: `${topic}-card`, version: 1 },
      { name: 'money.json', subject: `${topic}-money`, version: 1 }] });
  assert(money !== card && card !== order, `ids ${money} ${card} ${order}`);
  const ser = new JsonSerializer(client, SerdeType.VALUE, { useLatestVersion: true, validate: true });
  const values = [];
  for (let i = 0; i < N; i++) values.push(await ser.serialize(topic, row(i)));
  eq(values[0].readInt32BE(1), order, 'schema id on the wire');
  // the serializer resolved the references: a message they refuse is refused
  let invalid = false;
  try { await ser.serialize(topic, { ...row(1), tier: 'PLATINUM' }); } catch { invalid = true; }
  assert(invalid, 'the serializer took a tier card.json does not allow');
  const latest = await client.getLatestSchemaMetadata(`${topic}-value`);
  assert(latest.references?.length === 2, `references: ${JSON.stringify(latest.references)}`);
  await sendValues(kafka, topic, values);
});

await step('registry_json_refs_icebird_reads_every_value', 180, async () => {
  const rows = await rowsAtLeast(icebergRead, `${data}/warehouse/default/${topic}`, N);
  eq(rows.length, N, 'row count');
  const got = rows.map(normRow).sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)));
  for (let i = 0; i < N; i++) eq(got[i], normRow(want(i)), `row ${i}`);
});

finish();
