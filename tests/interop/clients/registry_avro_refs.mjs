// Avro schema references through floe's registry with Confluent's
// JavaScript client (@confluentinc/schemaregistry) and kafkajs.  Two
// phases (REFS_PHASE), around a Python client and a SIGKILL of floe
// (tests/integration/test_registry_avro_refs):
//   produce: Address and Kind registered under subjects of their own, the
//     topic's Customer schema naming them with references; the API's
//     answers (ids, references, referrers, a refused delete, a missing
//     reference); records serialized by AvroSerializer (useLatestVersion,
//     no auto-registration: it resolves the references itself) and
//     produced with kafkajs;
//   verify: after the restart the same answers; icebird reads every row
//     (these and the Python client's) and the values match; the table's
//     columns are required where the Avro types hold no null; v2 makes
//     `name` nullable and adds `tier`: both optional columns.
//   external: a second floe with schema.registry.url pointing at the first
//     (REGISTRY_HTTP) resolves the references over HTTP: records serialized
//     as above, and plain Avro binary (avsc, the referenced types known to
//     it) decoded with the subject's latest (table.value.schema.subject).
// Needs FLOE_KAFKA, FLOE_HTTP, FLOE_DATA (lib.sh) and REFS_TOPIC.
import '../fetch_shim.mjs';
import { readFileSync, readdirSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { icebergRead } from 'icebird';
import { Kafka, logLevel } from 'kafkajs';
import avro from 'avsc';
import { AvroSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { assert, broker, createTopic, eq, finish, sendValues, step, until } from './common.mjs';

const http = process.env.REGISTRY_HTTP || process.env.FLOE_HTTP, data = process.env.FLOE_DATA;
const topic = process.env.REFS_TOPIC, phase = process.env.REFS_PHASE;
const table = topic.replace(/\./g, '_');
const registry = () => new SchemaRegistryClient({ baseURLs: [`http://${http}`] });
const kafka = new Kafka({ clientId: 'floe-avro-refs', brokers: [broker], logLevel: logLevel.NOTHING });

const ADDRESS = { type: 'record', name: 'Address', namespace: 'com.acme', fields: [
  { name: 'street', type: 'string' }, { name: 'city', type: 'string' },
  { name: 'zip', type: ['null', 'string'], default: null }] };
const KIND = { type: 'enum', name: 'Kind', namespace: 'com.acme', symbols: ['RETAIL', 'WHOLESALE'] };
const CUSTOMER = { type: 'record', name: 'Customer', namespace: 'com.acme', fields: [
  { name: 'id', type: 'long' }, { name: 'name', type: 'string' },
  { name: 'home', type: 'Address' }, { name: 'kind', type: 'com.acme.Kind' },
  { name: 'work', type: ['null', 'com.acme.Address'], default: null }] };
const CUSTOMER2 = { ...CUSTOMER, fields: [
  ...CUSTOMER.fields.map((f) => (f.name === 'name' ? { name: 'name', type: ['null', 'string'], default: null } : f)),
  { name: 'tier', type: 'string', default: 'std' }] };
const refs = [
  { name: 'com.acme.Address', subject: `${topic}-address`, version: 1 },
  { name: 'com.acme.Kind', subject: `${topic}-kind`, version: 1 }];
const N1 = 30, N2 = 20, N3 = 10; // N2: the Python client's

const row = (i) => ({
  id: i, name: `cust ${i} ✓`, home: { street: `${i} Main St`, city: i % 2 ? 'Lyon' : 'Oslo', zip: i % 3 ? `Z${i}` : null },
  kind: i % 2 ? 'WHOLESALE' : 'RETAIL',
  work: i % 4 ? null : { street: `${i} Work Rd`, city: 'Bonn', zip: null } });
const row2 = (i) => ({ ...row(i), name: i % 3 ? `cust ${i} ✓` : null, tier: i % 2 ? 'gold' : 'std' });

async function api(method, path, body) {
  const r = await fetch(`http://${http}${path}`, { method,
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

async function produce(values, to = topic) {
  await sendValues(kafka, to, values);
}

const norm = (v) => {
  if (typeof v === 'bigint') return Number(v);
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(norm);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) if (k !== '_kafka') o[k] = norm(v[k]);
    return o;
  }
  return v;
};
const readRows = async (n, loc = `${data}/warehouse/default/${table}`) => {
  let rows = [];
  await until(async () => {
    try { rows = await icebergRead({ tableUrl: loc }); } catch { rows = []; }
    return rows.length >= n;
  }, 120000, `${n} rows in ${loc}`);
  eq(rows.length, n, 'row count');
  return rows.map(norm).sort((a, b) => a.id - b.id);
};

// The checks both phases make of the registry's answers.
async function checkAnswers(ids) {
  const got = await api('GET', `/schemas/ids/${ids.customer}`);
  eq(got.status, 200, 'GET /schemas/ids/N');
  eq(got.body.references, refs, 'references by id');
  assert(!got.body.schema.includes('street'), `the referenced types are not inlined: ${got.body.schema}`);
  const latest = await api('GET', `/subjects/${topic}-value/versions/1`);
  eq(latest.body.references, refs, 'references by version');
  eq((await api('GET', `/subjects/${topic}-address/versions/1/referencedby`)).body, [ids.customer], 'referencedby');
  eq((await api('GET', `/schemas/ids/${ids.kind}/referencedby`)).body, [ids.customer], 'referencedby id');
  const del = await api('DELETE', `/subjects/${topic}-address/versions/1`);
  eq([del.status, del.body.error_code], [422, 42206], 'deleting a referenced version');
  const delsub = await api('DELETE', `/subjects/${topic}-kind`);
  eq([delsub.status, delsub.body.error_code], [422, 42206], 'deleting a referenced subject');
  // re-registration and lookup with the references: the same id
  const again = await registry().register(`${topic}-value`,
    { schemaType: 'AVRO', schema: JSON.stringify(CUSTOMER), references: refs });
  eq(again, ids.customer, 're-registered id');
  const found = await api('POST', `/subjects/${topic}-value`, { schema: JSON.stringify(CUSTOMER), references: refs });
  eq([found.status, found.body.id, found.body.version], [200, ids.customer, 1], 'lookup');
}

if (phase === 'external') {
  await step('avro_refs_external_registry_by_id', 180, async () => {
    await createTopic(kafka, topic, {
      'table.enable': 'true', 'table.value.converter': 'avro', 'table.commit.interval.ms': '500' });
    const ser = new AvroSerializer(registry(), SerdeType.VALUE, { useLatestVersion: true, autoRegisterSchemas: false });
    const values = [];
    for (let i = 0; i < N1; i++) values.push(await ser.serialize(topic, row2(i)));
    await produce(values);
    const got = await readRows(N1);
    for (let i = 0; i < N1; i++) eq(got[i], row2(i), `row ${i}`);
  });
  await step('avro_refs_external_registry_by_subject', 180, async () => {
    const plain = `${topic}-plain`;
    await createTopic(kafka, plain, {
      'table.enable': 'true', 'table.value.converter': 'avro', 'table.commit.interval.ms': '500',
      'table.value.schema.subject': `${topic}-value` });
    const reg = {};
    avro.Type.forSchema(ADDRESS, { registry: reg });
    avro.Type.forSchema(KIND, { registry: reg });
    const type = avro.Type.forSchema(CUSTOMER2, { registry: reg });
    const values = [];
    for (let i = 0; i < N1; i++) values.push(type.toBuffer(row2(i)));
    await produce(values, plain);
    const got = await readRows(N1, `${data}/warehouse/default/${plain}`);
    for (let i = 0; i < N1; i++) eq(got[i], row2(i), `row ${i}`);
  });
} else if (phase === 'produce') {
  await step('avro_refs_create_table_topic', 60, async () => {
    await createTopic(kafka, topic, {
      'table.enable': 'true', 'table.value.converter': 'avro', 'table.commit.interval.ms': '500' });
  });
  const ids = {};
  await step('avro_refs_register', 60, async () => {
    const client = registry();
    // a reference to a subject that does not exist yet: 422
    const early = await api('POST', `/subjects/${topic}-value/versions`, { schema: JSON.stringify(CUSTOMER), references: refs });
    eq([early.status, early.body.error_code], [422, 42201], 'a missing reference');
    ids.address = await client.register(`${topic}-address`, { schemaType: 'AVRO', schema: JSON.stringify(ADDRESS) });
    ids.kind = await client.register(`${topic}-kind`, { schemaType: 'AVRO', schema: JSON.stringify(KIND) });
    ids.customer = await client.register(`${topic}-value`,
      { schemaType: 'AVRO', schema: JSON.stringify(CUSTOMER), references: refs });
    assert(ids.customer > ids.kind && ids.kind > ids.address, `ids ${JSON.stringify(ids)}`);
  });
  await step('avro_refs_api_answers', 60, () => checkAnswers(ids));
  await step('avro_refs_serialize_produce', 120, async () => {
    const ser = new AvroSerializer(registry(), SerdeType.VALUE, { useLatestVersion: true, autoRegisterSchemas: false });
    const values = [];
    for (let i = 0; i < N1; i++) values.push(await ser.serialize(topic, row(i)));
    eq([...values[0].subarray(0, 5)], [0, 0, 0, 0, ids.customer], 'wire header');
    await produce(values);
  });
} else {
  const ids = {};
  await step('avro_refs_restart_keeps_references', 60, async () => {
    ids.customer = (await api('GET', `/subjects/${topic}-value/versions/1`)).body.id;
    ids.kind = (await api('GET', `/subjects/${topic}-kind/versions/1`)).body.id;
    await checkAnswers(ids);
  });
  // the current schema's fields, by dot path: required or not
  const required = () => {
    const dir = `${data}/warehouse/default/${table}/metadata`;
    const last = readdirSync(dir).filter((f) => /^v\d+\.metadata\.json$/.test(f))
      .sort((a, b) => parseInt(a.slice(1), 10) - parseInt(b.slice(1), 10)).pop();
    const meta = JSON.parse(readFileSync(`${dir}/${last}`, 'utf8'));
    const schema = meta.schemas.find((s) => s['schema-id'] === meta['current-schema-id']);
    const out = {};
    const walk = (fields, pre) => {
      for (const f of fields) {
        if (f.name === '_kafka') continue;
        out[pre + f.name] = f.required;
        if (f.type && f.type.type === 'struct') walk(f.type.fields, `${pre}${f.name}.`);
      }
    };
    walk(schema.fields, '');
    return out;
  };
  await step('avro_refs_icebird_reads_every_value', 180, async () => {
    const got = await readRows(N1 + N2);
    for (let i = 0; i < N1 + N2; i++) eq(got[i], row(i), `row ${i}`);
  });
  await step('avro_refs_required_columns', 30, async () => {
    eq(required(), {
      id: true, name: true, home: true, 'home.street': true, 'home.city': true, 'home.zip': false,
      kind: true, work: false, 'work.street': true, 'work.city': true, 'work.zip': false }, 'required');
  });
  await step('avro_refs_v2_nullable_and_added_fields_optional', 180, async () => {
    const client = registry();
    const id2 = await client.register(`${topic}-value`,
      { schemaType: 'AVRO', schema: JSON.stringify(CUSTOMER2), references: refs });
    assert(id2 > ids.customer, `v2 id ${id2}`);
    const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true, autoRegisterSchemas: false });
    const values = [];
    for (let i = N1 + N2; i < N1 + N2 + N3; i++) values.push(await ser.serialize(topic, row2(i)));
    await produce(values);
    const got = await readRows(N1 + N2 + N3);
    for (let i = 0; i < N1 + N2 + N3; i++)
      eq(got[i], i < N1 + N2 ? { ...row(i), tier: null } : row2(i), `row ${i}`);
    const req = required();
    eq([req.name, req.tier, req.id, req['home.street']], [false, false, true, true], 'required after v2');
  });
  await step('avro_refs_duckdb_reads_required_columns', 60, async () => {
    // a required column is written OPTIONAL without a null by a buffer
    // that made it from the Avro schema, REQUIRED by one seeded from the
    // table (after a restart, when the seed comes first): DuckDB reads both
    const dir = `${data}/warehouse/default/${table}/data`;
    const files = readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.parquet')).map((f) => `'${dir}/${f}'`);
    const c = await (await DuckDBInstance.create(':memory:')).connect();
    const q = async (sql) => (await c.runAndReadAll(sql)).getRows().map((r) => r.map((v) => (v === null ? null : String(v))));
    const reps = await q(`SELECT DISTINCT repetition_type FROM parquet_schema([${files}]) WHERE name = 'street'`);
    assert(reps.length && reps.every((r) => ['OPTIONAL', 'REQUIRED'].includes(r[0])), `repetitions ${JSON.stringify(reps)}`);
    const got = await q(`SELECT count(*), count(id), count(home.street), count(name), count(tier) FROM read_parquet([${files}], union_by_name=true)`);
    const nullNames = [...Array(N3).keys()].filter((k) => (N1 + N2 + k) % 3 === 0).length;
    eq(got[0], [N1 + N2 + N3, N1 + N2 + N3, N1 + N2 + N3, N1 + N2 + N3 - nullNames, N3].map(String), 'counts');
  });
}

finish();
