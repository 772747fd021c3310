// Every Avro type into its Iceberg type, through an external schema
// registry: floe A is the registry (its Confluent API), floe B the broker
// whose server config points schema.registry.url at A and serves no
// registry itself.  Confluent's AvroSerializer (@confluentinc/schemaregistry,
// avsc inside: logical types travel as their underlying values) registers
// at A; kafkajs produces to B.  DuckDB reads B's Parquet files and checks
// the Iceberg spec's Parquet types (date, time and timestamps in micros,
// adjusted to UTC only for timestamptz, decimal as fixed of the fewest
// bytes, uuid as fixed[16], fixed, binary, float) and every value back
// exactly; icebird reads the table.  Then v2 promotes int -> long, float
// -> double, a decimal's precision and adds a field, all in place, and v3
// (with compatibility NONE) turns an int into a string: a dead letter with
// the reason.  Last, a json_schema table topic on B types its columns from
// a JSON schema B fetches from A.  Needs FLOE_KAFKA, FLOE_HTTP, FLOE_DATA
// of B, REGISTRY_HTTP of A.
import '../fetch_shim.mjs';
import { readdirSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { icebergRead } from 'icebird';
import { Kafka, logLevel } from 'kafkajs';
import {
  AvroSerializer, JsonSerializer, SchemaRegistryClient, SerdeType,
} from '@confluentinc/schemaregistry';
import { assert, broker, createTopic, eq, finish, step, tag, until } from './common.mjs';

const http = process.env.FLOE_HTTP, data = process.env.FLOE_DATA, reg = process.env.REGISTRY_HTTP;
const topic = process.env.AVRO_TYPES_TOPIC || `typed-${tag}`.replace(/[^a-zA-Z0-9-]/g, '-');
const table = topic;
const registry = () => new SchemaRegistryClient({ baseURLs: [`http://${reg}`] });
const kafka = new Kafka({ clientId: 'floe-avro-types', brokers: [broker], logLevel: logLevel.NOTHING });

const dec = (precision, scale, fixed) => (fixed
  ? { type: 'fixed', name: fixed, size: 16, logicalType: 'decimal', precision, scale }
  : { type: 'bytes', logicalType: 'decimal', precision, scale });
const T1 = {
  type: 'record', name: 'Typed', namespace: 't', fields: [
    { name: 'id', type: 'long' },
    { name: 'n', type: 'int' },
    { name: 'f', type: 'float' },
    { name: 'price', type: dec(9, 2) },
    { name: 'big', type: dec(38, 4, 'Big') },
    { name: 'day', type: { type: 'int', logicalType: 'date' } },
    { name: 'tm', type: { type: 'int', logicalType: 'time-millis' } },
    { name: 'tu', type: { type: 'long', logicalType: 'time-micros' } },
    { name: 'ts', type: { type: 'long', logicalType: 'timestamp-micros' } },
    { name: 'tsm', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'lts', type: { type: 'long', logicalType: 'local-timestamp-micros' } },
    { name: 'uid', type: { type: 'string', logicalType: 'uuid' } },
    { name: 'fuid', type: { type: 'fixed', name: 'U16', size: 16, logicalType: 'uuid' } },
    { name: 'raw', type: 'bytes' },
    { name: 'fx', type: { type: 'fixed', name: 'F3', size: 3 } },
    { name: 'attrs', type: { type: 'map', values: 'long' } },
    { name: 'choice', type: ['null', 'int', 'string'] },
    { name: 'color', type: { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN'] } },
    { name: 'opt', type: ['null', { type: 'int', logicalType: 'date' }], default: null },
  ],
};
// v2: n int -> long, f float -> double, price decimal(9,2) -> (12,2), a new field
const T2 = {
  ...T1, fields: [
    ...T1.fields.map((f) => (f.name === 'n' ? { ...f, type: 'long' }
      : f.name === 'f' ? { ...f, type: 'double' } : f.name === 'price' ? { ...f, type: dec(12, 2) } : f)),
    { name: 'note', type: ['null', 'string'], default: null }],
};
// v3: n becomes a string: no Iceberg promotion
const T3 = { ...T1, fields: T1.fields.map((f) => (f.name === 'n' ? { ...f, type: 'string' } : f)) };

// two's complement big-endian bytes of a bigint: minimal, or `size` long
function twos(v, size) {
  const out = [];
  let x = v;
  for (;;) {
    out.unshift(Number(BigInt.asUintN(8, x)));
    x >>= 8n;
    if (size ? out.length === size : (x === 0n && !(out[0] & 0x80)) || (x === -1n && out[0] & 0x80)) break;
  }
  return Buffer.from(out);
}
const hex = (b) => Buffer.from(b).toString('hex').toUpperCase();
const uuidText = (i) => `${(0x1a2b3c00 + i).toString(16)}-0000-4000-8000-${String(i).padStart(12, '0')}`;
const N1 = 24, N2 = 8;
const DAY0 = 20000, TS0 = 1767322245678901n;
const row = (i, v2) => ({
  id: i, n: v2 ? 2 ** 40 + i : i - 12, f: v2 ? 0.1 + i : i + 0.5,
  price: twos(BigInt(i * 12345 - 150000)),
  big: twos(10n ** 37n * (i % 2 ? -1n : 1n) + BigInt(i), 16),
  day: DAY0 + i, tm: 3723004 + i, tu: 86399999999 - i, ts: Number(TS0 + BigInt(i)),
  tsm: 1767322245678 + i, lts: Number(TS0 - BigInt(i)),
  uid: uuidText(i), fuid: Buffer.from(uuidText(i + 100).replace(/-/g, ''), 'hex'),
  raw: Buffer.from([0, 255, i]), fx: Buffer.from([i, 0, 0xfe]),
  attrs: i % 3 ? { a: i, b: -i } : {}, choice: i % 3 === 0 ? null : i % 3 === 1 ? i : `s${i}`,
  color: i % 2 ? 'GREEN' : 'RED', opt: i % 2 ? null : DAY0 - i,
  ...(v2 ? { note: i % 2 ? `n${i}` : null } : {}),
});

// what DuckDB prints for row i (values as text, UTC)
const isoDay = (d) => new Date(d * 86400000).toISOString().slice(0, 10);
const clock = (us) => {
  const t = BigInt(us), s = t / 1000000n, f = t % 1000000n;
  const p = (x) => String(x).padStart(2, '0');
  // (DuckDB prints the fraction without its trailing zeros)
  const frac = f === 0n ? '' : `.${String(f).padStart(6, '0').replace(/0+$/, '')}`;
  return `${p(s / 3600n)}:${p((s / 60n) % 60n)}:${p(s % 60n)}${frac}`;
};
const stamp = (us) => `${isoDay(Number(BigInt(us) / 86400000000n))} ${clock(BigInt(us) % 86400000000n)}`;
const decText = (b, scale) => {
  const v = BigInt.asIntN(b.length * 8, BigInt(`0x${hex(b) || '00'}`));
  const neg = v < 0n, a = (neg ? -v : v).toString().padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${a.slice(0, a.length - scale)}.${a.slice(a.length - scale)}`;
};
const want = (i, v2) => {
  const r = row(i, v2);
  return [String(r.id), String(r.n), v2 ? String(r.f) : String(r.f), decText(r.price, 2),
    decText(r.big, 4), isoDay(r.day), clock(r.tm * 1000), clock(r.tu), `${stamp(r.ts)}+00`,
    `${stamp(BigInt(r.tsm) * 1000n)}+00`, stamp(r.lts), r.uid, uuidText(i + 100), hex(r.raw), hex(r.fx),
    JSON.stringify(r.attrs), // a map (DuckDB writes it as an object)
    r.choice === null ? 'NULL' : typeof r.choice === 'number' ? `{'int': ${r.choice}, 'string': NULL}`
      : `{'int': NULL, 'string': '${r.choice}'}`,
    r.color, r.opt === null ? 'NULL' : isoDay(r.opt), v2 ? (r.note ?? 'NULL') : 'NULL'];
};

async function produce(values, to = topic) {
  const p = kafka.producer();
  await p.connect();
  try {
    await p.send({ topic: to, acks: -1, messages: values.map((value) => ({ value })) });
  } finally { await p.disconnect(); }
}

const ids = {};
await step('avro_types_create_table_topic', 60, async () => {
  // partitioned by the new kinds too: a date's month, a uuid's bucket
  await createTopic(kafka, topic, {
    'table.enable': 'true', 'table.value.converter': 'avro', 'table.commit.interval.ms': '500',
    'table.partition.by': 'month(day), bucket(uid, 4)' });
});

await step('avro_types_broker_serves_no_registry', 30, async () => {
  const r = await fetch(`http://${http}/subjects`);
  eq(r.status, 404, 'GET /subjects on the broker with an external registry');
});

await step('avro_types_serialize_v1_at_external_registry', 120, async () => {
  const client = registry();
  ids.v1 = await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(T1) });
  const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const values = [];
  for (let i = 0; i < N1; i++) values.push(await ser.serialize(topic, row(i, false)));
  await produce(values);
});

const files = () => {
  const dir = `${data}/warehouse/default/${table}/data`;
  try { return readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.parquet')).map((f) => `${dir}/${f}`); } catch { return []; }
};
const duck = async (sql) => {
  const c = await (await DuckDBInstance.create(':memory:')).connect();
  await c.run("SET TimeZone = 'UTC'");
  return (await c.runAndReadAll(sql)).getRows().map((r) => r.map((v) => (v === null ? 'NULL' : String(v))));
};
const NAMES = ['id', 'n', 'f', 'price', 'big', 'day', 'tm', 'tu', 'ts', 'tsm', 'lts', 'uid', 'fuid',
  'raw', 'fx', 'attrs', 'choice', 'color', 'opt', 'note'];
const COLS = "id, n, f, price, big, day, tm, tu, ts, tsm, lts, uid, fuid, hex(raw), hex(fx), "
  + "to_json(attrs), choice, color, opt";

await step('avro_types_parquet_types_as_the_iceberg_spec_says', 120, async () => {
  await until(async () => files().length > 0, 60000, 'a data file');
  const rows = await duck(`SELECT name, type, logical_type, type_length, precision, scale FROM parquet_schema('${files()[0]}')`);
  const by = Object.fromEntries(rows.map((r) => [r[0], r.slice(1)]));
  const has = (col, type, logical, len) => {
    const got = by[col];
    assert(got, `no column ${col}: ${JSON.stringify(rows)}`);
    assert(got[0] === type, `${col}: physical ${got[0]}, want ${type}`);
    if (logical) assert(got[1].includes(logical), `${col}: logical ${got[1]}, want ${logical}`);
    if (len) assert(got[2] === String(len), `${col}: length ${got[2]}, want ${len}`);
  };
  has('n', 'INT32'); has('f', 'FLOAT'); has('id', 'INT64');
  has('price', 'FIXED_LEN_BYTE_ARRAY', 'DecimalType(scale=2, precision=9)', 4);
  has('big', 'FIXED_LEN_BYTE_ARRAY', 'DecimalType(scale=4, precision=38)', 16);
  has('day', 'INT32', 'DateType');
  has('tm', 'INT64', 'TimeType(isAdjustedToUTC=0, unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds(), NANOS=<null>)');
  has('ts', 'INT64', 'TimestampType(isAdjustedToUTC=1, unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds()');
  has('tsm', 'INT64', 'TimestampType(isAdjustedToUTC=1, unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds()');
  has('lts', 'INT64', 'TimestampType(isAdjustedToUTC=0, unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds()');
  has('uid', 'FIXED_LEN_BYTE_ARRAY', 'UUIDType', 16);
  has('fuid', 'FIXED_LEN_BYTE_ARRAY', 'UUIDType', 16);
  has('raw', 'BYTE_ARRAY');
  has('fx', 'FIXED_LEN_BYTE_ARRAY', null, 3);
  has('color', 'BYTE_ARRAY', 'StringType');
});

await step('avro_types_duckdb_reads_every_value_v1', 120, async () => {
  let rows = [];
  await until(async () => { rows = files().length ? await duck(`SELECT ${COLS}, NULL FROM read_parquet([${files().map((f) => `'${f}'`)}], union_by_name=true) ORDER BY id`) : []; return rows.length >= N1; }, 60000, `${N1} rows`);
  eq(rows.length, N1, 'rows');
  for (let i = 0; i < N1; i++) want(i, false).forEach((w, j) => eq(rows[i][j], w, `row ${i} ${NAMES[j]}`));
});

await step('avro_types_icebird_reads_the_table', 120, async () => {
  const rows = (await icebergRead({ tableUrl: `${data}/warehouse/default/${table}` }))
    .sort((a, b) => Number(a.id) - Number(b.id));
  eq(rows.length, N1, 'rows');
  for (let i = 0; i < N1; i++) {
    const r = row(i, false), g = rows[i];
    eq([g.n, g.f, g.color, g.day instanceof Date ? g.day.toISOString().slice(0, 10) : g.day],
      [r.n, r.f, r.color, isoDay(r.day)], `row ${i} (int, float, enum, date)`);
    eq(g.ts instanceof Date ? g.ts.getTime() : Number(g.ts) / 1000, Math.floor(r.ts / 1000), `row ${i} ts`);
  }
});

await step('avro_types_v2_promotes_in_place', 180, async () => {
  const client = registry();
  ids.v2 = await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(T2) });
  assert(ids.v2 > ids.v1, `v2 id ${ids.v2}`);
  const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const values = [];
  for (let i = N1; i < N1 + N2; i++) values.push(await ser.serialize(topic, row(i, true)));
  await produce(values);
  const meta = `${data}/warehouse/default/${table}/metadata`;
  let schema, first;
  await until(async () => {
    const hint = (await (await fetch(`file://${meta}/version-hint.text`)).text()).trim();
    const md = await (await fetch(`file://${meta}/v${hint}.metadata.json`)).json();
    schema = md.schemas.find((s) => s['schema-id'] === md['current-schema-id']);
    first = md.schemas.find((s) => s.fields.some((x) => x.name === 'price'));
    return schema.fields.some((f) => f.name === 'note') && md['current-snapshot-id']
      && (await duck(`SELECT count(*) FROM read_parquet([${files().map((f) => `'${f}'`)}], union_by_name=true)`))[0][0] === String(N1 + N2);
  }, 90000, 'v2 committed');
  const f = Object.fromEntries(schema.fields.map((x) => [x.name, x]));
  eq([f.n.type, f.f.type, f.price.type, f.note.type], ['long', 'double', 'decimal(12, 2)', 'string'], 'promoted types');
  const f1 = Object.fromEntries(first.fields.map((x) => [x.name, x]));
  eq([f1.n.type, f1.f.type, f1.price.type], ['int', 'float', 'decimal(9, 2)'], 'v1 types');
  eq([f.id.id, f.n.id, f.f.id, f.price.id], [f1.id.id, f1.n.id, f1.f.id, f1.price.id], 'field ids kept');
  const rows = await duck(`SELECT ${COLS}, note FROM read_parquet([${files().map((x) => `'${x}'`)}], union_by_name=true) WHERE id >= ${N1} ORDER BY id`);
  for (let i = 0; i < N2; i++) want(N1 + i, true).forEach((w, j) => eq(rows[i][j], w, `row ${N1 + i} ${NAMES[j]}`));
});

await step('avro_types_v3_int_to_string_is_a_dead_letter', 180, async () => {
  const client = registry();
  const r = await fetch(`http://${reg}/config/${topic}-value`, {
    method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ compatibility: 'NONE' }) });
  assert(r.ok, `PUT /config: ${r.status}`);
  ids.v3 = await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(T3) });
  const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  await produce([await ser.serialize(topic, { ...row(99, false), n: 'not a number' })]);
  let rows = [];
  const loc = `${data}/warehouse/default/${table}_dlq`;
  await until(async () => {
    try { rows = await icebergRead({ tableUrl: loc }); } catch { rows = []; }
    return rows.length >= 1;
  }, 90000, `a row in ${loc}`);
  const why = `${rows[0].stage} ${rows[0].reason}`;
  assert(/^schema .*field 'n' is long in the table but string in the schema/.test(why), `reason: ${why}`);
});

await step('json_schema_types_from_the_external_registry', 180, async () => {
  const jt = `${topic}-json`;
  await createTopic(kafka, jt, {
    'table.enable': 'true', 'table.value.converter': 'json_schema', 'table.commit.interval.ms': '500' });
  const schema = { type: 'object', additionalProperties: false, required: ['id'], properties: {
    id: { type: 'integer' }, x: { type: 'number' }, day: { type: 'string', format: 'date' } } };
  const client = registry();
  await client.register(`${jt}-value`, { schemaType: 'JSON', schema: JSON.stringify(schema) });
  const ser = new JsonSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  // 1 and 2 are integers in the JSON text, typed double by the schema
  await produce(await Promise.all([1, 2].map((i) => ser.serialize(jt, { id: i, x: i, day: `2026-03-0${i}` }))), jt);
  let rows = [];
  const loc = `${data}/warehouse/default/${jt}`;
  await until(async () => {
    try { rows = await icebergRead({ tableUrl: loc }); } catch { rows = []; }
    return rows.length >= 2;
  }, 90000, `2 rows in ${loc}`);
  rows.sort((a, b) => Number(a.id) - Number(b.id));
  eq([typeof rows[0].id, typeof rows[0].x, rows[1].x], ['bigint', 'number', 2], 'typed by the schema');
  const day = rows[1].day instanceof Date ? rows[1].day.toISOString().slice(0, 10) : String(rows[1].day);
  eq(day, '2026-03-02', 'a date');
});

finish();
