// Protobuf table topics through floe's own schema registry (issue 17), with
// Confluent's JavaScript ProtobufSerializer (@confluentinc/schemaregistry,
// which registers a base64 FileDescriptorProto) and kafkajs; message types
// come from protoc's descriptors of tests/interop/protos/shop_v*.proto.
// v1 is produced, v2 (a new field) evolves the table with a column, v3
// (field 2 reused with another type) is refused with 409 and, registered
// under NONE, its records go to the dead-letter table; icebird reads the
// table and every value matches what was serialized; the deserializer reads
// the schema back with ?format=serialized.  Needs FLOE_KAFKA, FLOE_HTTP and
// FLOE_DATA (lib.sh); with REGISTRY_HTTP, that registry instead of floe's own
// (floe then reads it through schema.registry.url).
import '../fetch_shim.mjs';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { icebergRead } from 'icebird';
import { Kafka, logLevel } from 'kafkajs';
import {
  ProtobufDeserializer, ProtobufSerializer, SchemaRegistryClient, SerdeType,
} from '@confluentinc/schemaregistry';
import { assert, broker, eq, finish, sendValues, step, tag, until } from './common.mjs';
import { normRow, protoTypes } from './proto_types.mjs';

const http = process.env.REGISTRY_HTTP || process.env.FLOE_HTTP, data = process.env.FLOE_DATA;
const topic = `pb-${tag}`.replace(/[^a-zA-Z0-9-]/g, '-');
const table = topic.replace(/\./g, '_');
const registry = () => new SchemaRegistryClient({ baseURLs: [`http://${http}`] });

const N1 = 40, N2 = 30, N3 = 3;
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const row = (i, v2) => ({
  id: BigInt(i) * 1000000007n, qty: i % 7, amount: i * 1.25, ratio: i * 0.5, ok: i % 2 === 0,
  who: `user ${i} ✓`, state: i % 3 ? 1 : 0, at: timestampFromMs(T0 + i * 1000),
  tags: i % 4 !== 3 ? ['a', `t${i}`] : [], card: i % 5 === 4 ? undefined : { brand: i % 2 ? 'visa' : 'amex', last4: 1000 + i },
  memo: i % 5 ? undefined : `memo ${i}`, counts: i % 3 === 1 ? {} : { x: BigInt(i), y: -2n },
  blob: new Uint8Array([i, 255, 0]), maybe: i % 2 ? BigInt(-i) : undefined,
  nums: [i, -i, 64], method: i % 4 === 0 ? { case: 'iban', value: `DE${i}` }
    : i % 4 === 1 ? { case: 'voucher', value: 4000000000 + i } : { case: undefined },
  ...(v2 ? { coupon: i % 2 ? `C${i}` : '' } : {}),
});

const kafka = new Kafka({ clientId: 'floe-registry-proto', brokers: [broker], logLevel: logLevel.NOTHING });
const ids = {};

await step('registry_proto_create_table_topic', 60, async () => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ waitForLeaders: true, topics: [{
      topic, numPartitions: 1, configEntries: [
        { name: 'table.enable', value: 'true' },
        { name: 'table.value.converter', value: 'protobuf' },
        { name: 'table.commit.interval.ms', value: '500' }] }] });
  } finally { await admin.disconnect(); }
});

async function produce(values) {
  await sendValues(kafka, topic, values);
}

async function serialize(version, from, to, v2) {
  const reg = protoTypes(`shop_${version}.proto`);
  const Payment = reg.getMessage('shop.Payment');
  const client = registry();
  const ser = new ProtobufSerializer(client, SerdeType.VALUE, { autoRegisterSchemas: true, registry: reg });
  const values = [];
  for (let i = from; i < to; i++) values.push(await ser.serialize(topic, create(Payment, row(i, v2))));
  return { values, client, Payment };
}

await step('registry_proto_serialize_v1', 120, async () => {
  const { values, client } = await serialize('v1', 0, N1, false);
  // magic 0, the id, and the single 0 byte of the first message's indexes
  ids.v1 = values[0].readInt32BE(1);
  eq(values[0].subarray(0, 6), Buffer.from([0, 0, 0, 0, ids.v1, 0]), 'wire header');
  const latest = await client.getLatestSchemaMetadata(`${topic}-value`);
  eq(latest.schemaType, 'PROTOBUF', 'schema type');
  assert(/message Payment \{/.test(latest.schema), `text form: ${latest.schema.slice(0, 200)}`);
  // the deserializer asks for ?format=serialized and decodes with it
  const de = new ProtobufDeserializer(registry(), SerdeType.VALUE, {});
  const back = await de.deserialize(topic, values[5]);
  eq(back.who, 'user 5 ✓', 'deserialized');
  eq(String(back.id), '5000000035', 'deserialized id');
  await produce(values);
});

await step('registry_proto_evolve_v2', 120, async () => {
  const { values } = await serialize('v2', N1, N1 + N2, true);
  ids.v2 = values[0].readInt32BE(1);
  assert(ids.v2 > ids.v1, `v2 id ${ids.v2} after v1 ${ids.v1}`);
  await produce(values);
});

await step('registry_proto_incompatible_v3', 120, async () => {
  let refused = false;
  try { await serialize('v3', 0, 1, false); } catch (e) { refused = /409|incompatible/i.test(String(e.message)) || e.status === 409; }
  assert(refused, 'v3 (field 2 reused as a string) was registered under BACKWARD');
  // under NONE it registers; its records cannot fit the table: dead letters
  const res = await fetch(`http://${http}/config/${topic}-value`, { method: 'PUT',
    headers: { 'content-type': 'application/json' }, body: JSON.stringify({ compatibility: 'NONE' }) });
  eq(res.status, 200, 'config NONE');
  const reg = protoTypes('shop_v3.proto');
  const Payment = reg.getMessage('shop.Payment');
  const ser = new ProtobufSerializer(registry(), SerdeType.VALUE, { autoRegisterSchemas: true, registry: reg });
  const values = [];
  for (let i = 0; i < N3; i++) values.push(await ser.serialize(topic, create(Payment, { id: 9000n + BigInt(i), qty: `many ${i}` })));
  await produce(values);
});

const b64 = (u) => Buffer.from(u).toString('base64');
const want = (i, v2) => {
  const r = row(i, v2);
  return {
    id: String(r.id), qty: String(r.qty), amount: r.amount, ratio: r.ratio, ok: r.ok, who: r.who,
    state: r.state ? 'PAID' : 'NEW', at: new Date(T0 + i * 1000).toISOString(), tags: r.tags,
    card: r.card ? { brand: r.card.brand, last4: String(r.card.last4) } : null,
    memo: r.memo ?? null,
    counts: Object.entries(r.counts).map(([key, value]) => ({ key, value: String(value) })),
    blob: b64(r.blob), maybe: r.maybe !== undefined ? String(r.maybe) : null, nums: r.nums.map(String),
    iban: r.method.case === 'iban' ? r.method.value : null,
    voucher: r.method.case === 'voucher' ? String(r.method.value) : null,
    coupon: v2 ? r.coupon : null,
  };
};

await step('registry_proto_icebird_reads_every_value', 180, async () => {
  const loc = `${data}/warehouse/default/${table}`;
  let rows = [];
  await until(async () => {
    try { rows = await icebergRead({ tableUrl: loc }); } catch { rows = []; }
    return rows.length >= N1 + N2;
  }, 120000, `${N1 + N2} rows in ${loc}`);
  eq(rows.length, N1 + N2, 'row count');
  const got = rows.map(normRow).sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)));
  for (let i = 0; i < N1 + N2; i++) eq(got[i], normRow(want(i, i >= N1)), `row ${i}`);
});

await step('registry_proto_incompatible_records_are_dead_letters', 120, async () => {
  const loc = `${data}/warehouse/default/${table}_dlq`;
  let rows = [];
  await until(async () => {
    try { rows = await icebergRead({ tableUrl: loc }); } catch { rows = []; }
    return rows.length >= N3;
  }, 60000, `${N3} rows in ${loc}`);
  eq(rows.length, N3, 'dead letters');
  const why = JSON.stringify(normRow(rows[0]));
  assert(/qty/.test(why), `reason: ${why.slice(0, 400)}`);
});

finish();
