// Protobuf schemas with references (issue 17): Confluent's JavaScript
// ProtobufSerializer registers tests/interop/protos/shop_common.proto as
// its own subject and shop_order.proto with a reference to it; Order is the
// file's second message, so records carry message indexes [1].  floe
// resolves the reference (from its own registry, or from an external one
// through schema.registry.url) and icebird reads every value back.  The
// registry is REGISTRY_HTTP when set, else FLOE_HTTP; the table is in
// FLOE_DATA (lib.sh).
import '../fetch_shim.mjs';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { icebergRead } from 'icebird';
import { Kafka, logLevel } from 'kafkajs';
import { ProtobufSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { assert, broker, createTopic, eq, finish, rowsAtLeast, sendValues, step, tag } from './common.mjs';
import { normRow, protoTypes } from './proto_types.mjs';

const reg = process.env.REGISTRY_HTTP || process.env.FLOE_HTTP, data = process.env.FLOE_DATA;
const topic = `pbref-${tag}`.replace(/[^a-zA-Z0-9-]/g, '-');
const N = 50, T0 = Date.UTC(2026, 4, 6, 7, 8, 9, 100);

const money = (i, k) => ({ currency: k % 2 ? 'EUR' : 'USD', units: BigInt(i * 100 + k), nanos: -k * 5 });
const row = (i) => ({
  id: `o-${i}`, total: i % 6 === 5 ? undefined : money(i, 0),
  lines: Array.from({ length: i % 3 }, (_, k) => money(i, k + 1)), channel: i % 3,
  at: timestampFromMs(T0 + i * 60000), attrs: i % 2 ? { gift: 'yes', note: `n${i}` } : {},
  codes: i % 4 ? [BigInt(i), 18446744073709551615n] : [], big: BigInt(i) << 40n,
});
const want = (i) => {
  const r = row(i);
  const m = (x) => ({ currency: x.currency, units: String(x.units), nanos: String(x.nanos) });
  // empty lists read as null before their column exists, as for JSON
  const list = (a) => (a.length ? a : null);
  return {
    id: r.id, total: r.total ? m(r.total) : null, lines: list(r.lines.map(m)),
    channel: ['WEB', 'STORE', 'APP'][r.channel], at: new Date(T0 + i * 60000).toISOString(),
    attrs: list(Object.entries(r.attrs).map(([key, value]) => ({ key, value }))),
    codes: list(r.codes.map((c) => String(BigInt.asIntN(64, c)))), big: String(r.big),
  };
};

const kafka = new Kafka({ clientId: 'floe-proto-refs', brokers: [broker], logLevel: logLevel.NOTHING });

await step('registry_proto_refs_produce', 120, async () => {
  await createTopic(kafka, topic, { 'table.enable': 'true', 'table.value.converter': 'protobuf',
    'table.commit.interval.ms': '500' });
  const types = protoTypes('shop_order.proto');
  const Order = types.getMessage('shop.Order');
  const client = new SchemaRegistryClient({ baseURLs: [`http://${reg}`] });
  const ser = new ProtobufSerializer(client, SerdeType.VALUE, { autoRegisterSchemas: true, registry: types });
  const values = [];
  for (let i = 0; i < N; i++) values.push(await ser.serialize(topic, create(Order, row(i))));
  // magic, id, then message indexes [1]: count 1, index 1 (zigzag)
  eq([...values[0].subarray(5, 7)], [2, 2], 'message indexes');
  const latest = await client.getLatestSchemaMetadata(`${topic}-value`);
  eq(latest.schemaType, 'PROTOBUF', 'schema type');
  assert(latest.references?.length === 1 && latest.references[0].name === 'shop_common.proto',
    `references: ${JSON.stringify(latest.references)}`);
  await sendValues(kafka, topic, values);
});

await step('registry_proto_refs_icebird_reads_every_value', 180, async () => {
  const rows = await rowsAtLeast(icebergRead, `${data}/warehouse/default/${topic}`, N);
  eq(rows.length, N, 'row count');
  const got = rows.map(normRow).sort((a, b) => Number(a.id.slice(2)) - Number(b.id.slice(2)));
  for (let i = 0; i < N; i++) eq(got[i], normRow(want(i)), `row ${i}`);
});

finish();
