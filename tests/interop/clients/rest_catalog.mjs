// iceberg-js 1.0 (an Iceberg REST catalog client written independently of
// floe) against floe's REST catalog under /v1/: config, namespace and table
// CRUD, paging, conditional loads (ETag, 304), commits whose requirements
// pass and fail (409, nothing changed), staged create, rename, register,
// drop; then a table topic's table loaded while floe commits to it, with an
// engine-like writer committing set-properties through the catalog at the
// same time.  Every answer's shape is checked against the fields and types
// the REST spec's schemas name.  iceberg-js has no call for metrics reports
// and multi-table transactions: those two go through plain fetch().
import fs from 'node:fs';
import crypto from 'node:crypto';
import { IcebergRestCatalog } from 'iceberg-js';
import { Kafka, logLevel } from 'kafkajs';
import { step, assert, eq, sleep, until, finish, broker, tag } from './common.mjs';
import { shape } from './rest_shapes.mjs';

const http = process.env.FLOE_HTTP;
assert(http, 'FLOE_HTTP is not set');
const base = `http://${http}`;
// one client with a warehouse (its paths carry the prefix /config names),
// one without (plain /v1/...)
const cat = new IcebergRestCatalog({ baseUrl: base, warehouse: 'floe' });
const plain = new IcebergRestCatalog({ baseUrl: base });

// ---- shapes (the spec's required fields and their types) ----
const isNs = (a) => Array.isArray(a) && a.length > 0 && a.every((x) => typeof x === 'string');
function errorShape(e, status, type) {
  assert(e && e.status === status, `want HTTP ${status}, got ${e && (e.status ?? e)}: ${e && e.message}`);
  shape(e.details, { error: 'object' }, 'IcebergErrorResponse');
  shape(e.details.error, { message: 'string', type: 'string', code: 'number' }, 'ErrorModel');
  eq(e.details.error.code, status, 'error.code');
  if (type) eq(e.details.error.type, type, 'error.type');
}
async function fails(p) {
  try { await p; } catch (e) { return e; }
  throw new Error('the call succeeded; it should have failed');
}
function loadResultShape(r, staged) {
  shape(r, { metadata: 'object', config: 'object|absent', 'metadata-location': staged ? 'absent|null' : 'string' },
    'LoadTableResult');
  shape(r.metadata, {
    'format-version': 'number', 'table-uuid': 'string', location: 'string', 'last-updated-ms': 'number',
    'last-column-id': 'number', schemas: 'array', 'current-schema-id': 'number', 'partition-specs': 'array',
    'default-spec-id': 'number', 'sort-orders': 'array', 'default-sort-order-id': 'number',
    properties: 'object|absent', snapshots: 'array|absent',
  }, 'TableMetadata');
  for (const s of r.metadata.snapshots ?? [])
    shape(s, { 'snapshot-id': 'number', 'timestamp-ms': 'number', 'manifest-list': 'string', summary: 'object' }, 'Snapshot');
}
function commitResultShape(r) {
  shape(r, { 'metadata-location': 'string', metadata: 'object' }, 'CommitTableResponse');
}
// plain fetch for what iceberg-js has no call for; checks Content-Type
async function rest(method, path, body) {
  const res = await fetch(`${base}/v1/${path}`, {
    method, headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (text) assert((res.headers.get('content-type') || '').startsWith('application/json'),
    `${method} ${path}: Content-Type ${res.headers.get('content-type')}`);
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const schema = {
  type: 'struct', 'schema-id': 0,
  fields: [
    { id: 1, name: 'id', type: 'long', required: true },
    { id: 2, name: 'name', type: 'string', required: false },
  ],
};
const spec = { 'spec-id': 0, fields: [] };
const ns1 = `rest_a_${process.pid}`, ns2 = `rest_b_${process.pid}`;

await step('rest_config', 30, async () => {
  const c = await cat.loadConfig();
  shape(c, { defaults: 'object', overrides: 'object', endpoints: 'array' }, 'CatalogConfig');
  eq(c.overrides.prefix, 'floe', 'overrides.prefix for warehouse=floe');
  for (const e of c.endpoints) assert(/^(GET|HEAD|POST|DELETE) \/v1\/\{prefix\}\/\S+$/.test(e), `endpoint ${e}`);
  for (const e of ['HEAD /v1/{prefix}/namespaces/{namespace}', 'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
    'POST /v1/{prefix}/transactions/commit', 'POST /v1/{prefix}/tables/rename'])
    assert(c.endpoints.includes(e), `endpoints lacks ${e}`);
  const r = await rest('GET', 'config');
  eq(r.status, 200, 'GET /v1/config');
  assert(!('prefix' in r.body.overrides), 'no warehouse named: no prefix');
});

await step('rest_namespaces', 60, async () => {
  const created = await cat.createNamespace({ namespace: [ns1] }, { properties: { owner: 'a', gone: 'x' } });
  shape(created, { namespace: 'array', properties: 'object' }, 'CreateNamespaceResponse');
  eq(created.namespace, [ns1], 'created namespace');
  errorShape(await fails(cat.createNamespace({ namespace: [ns1] })), 409, 'AlreadyExistsException');
  await plain.createNamespace({ namespace: [ns2] });
  assert(await cat.namespaceExists({ namespace: [ns1] }), 'namespaceExists');
  assert(!(await cat.namespaceExists({ namespace: ['no_such_ns'] })), 'namespaceExists of a missing one');
  const head = await fetch(`${base}/v1/namespaces/${ns1}`, { method: 'HEAD' });
  eq(head.status, 204, 'HEAD namespace status');
  eq((await cat.loadNamespaceMetadata({ namespace: [ns1] })).properties, { owner: 'a', gone: 'x' }, 'properties');
  const got = await rest('GET', `namespaces/${ns1}`);
  shape(got.body, { namespace: 'array', properties: 'object' }, 'GetNamespaceResponse');
  errorShape(await fails(cat.loadNamespaceMetadata({ namespace: ['no_such_ns'] })), 404, 'NoSuchNamespaceException');
  const up = await cat.updateNamespaceProperties({ namespace: [ns1] }, { removals: ['gone', 'never'], updates: { tier: 'gold' } });
  shape(up, { updated: 'array', removed: 'array', missing: 'array|null' }, 'UpdateNamespacePropertiesResponse');
  eq(up, { updated: ['tier'], removed: ['gone'], missing: ['never'] }, 'properties answer');
  eq((await cat.loadNamespaceMetadata({ namespace: [ns1] })).properties, { owner: 'a', tier: 'gold' }, 'properties after');
  const both = await rest('POST', `namespaces/${ns1}/properties`, { removals: ['x'], updates: { x: '1' } });
  eq(both.status, 422, 'a key both updated and removed');
  errorShape(await fails(cat.createNamespace({ namespace: ['lvl1', 'lvl2'] })), 404, 'NoSuchNamespaceException');
  const deep = await rest('GET', `namespaces/${ns1}%1Fchild`);
  eq(deep.status, 404, 'a missing multi-level namespace in the path');
  errorShape(await fails(cat.createNamespace({ namespace: [ns1, ''] })), 400, 'BadRequestException');
});

await step('rest_namespace_paging', 60, async () => {
  const mine = [0, 1, 2, 3, 4].map((i) => `rest_p${i}_${process.pid}`);
  for (const n of mine) await cat.createNamespace({ namespace: [n] });
  const all = await cat.listNamespaces();
  assert(all.nextPageToken === undefined, 'no pageToken: everything, no next token');
  const raw = await rest('GET', 'namespaces');
  shape(raw.body, { namespaces: 'array', 'next-page-token': 'null|absent' }, 'ListNamespacesResponse');
  assert(raw.body.namespaces.every(isNs), 'namespaces are arrays of strings');
  const names = all.namespaces.map((n) => n.namespace[0]);
  for (const n of [...mine, ns1, ns2]) assert(names.includes(n), `list lacks ${n}`);
  const sized = await rest('GET', 'namespaces?pageSize=2');
  eq(sized.body.namespaces.length, names.length, 'pageSize without pageToken: everything');
  const paged = [];
  let token = '', pages = 0;
  do {
    const p = await cat.listNamespaces({ pageSize: 2, pageToken: token });
    assert(p.namespaces.length <= 2, `page of ${p.namespaces.length}`);
    paged.push(...p.namespaces.map((n) => n.namespace[0]));
    token = p.nextPageToken;
    pages++;
  } while (token !== undefined && pages < 100);
  eq(paged, names, 'pages put together');
  assert(pages >= Math.ceil(names.length / 2), `${pages} pages for ${names.length}`);
  const kids = await cat.listNamespaces({ parent: { namespace: [ns1] } });
  eq(kids.namespaces, [], 'children of a one-level namespace');
  errorShape(await fails(cat.listNamespaces({ parent: { namespace: ['no_such_ns'] } })), 404, 'NoSuchNamespaceException');
  for (const n of mine) await cat.dropNamespace({ namespace: [n] });
  assert(!(await cat.namespaceExists({ namespace: [mine[0]] })), 'dropped namespace');
  errorShape(await fails(cat.dropNamespace({ namespace: [mine[0]] })), 404, 'NoSuchNamespaceException');
});

let orders; // LoadTableResult of ns1.orders
await step('rest_tables', 90, async () => {
  orders = await cat.createTableResult({ namespace: [ns1] }, {
    name: 'orders', schema, 'partition-spec': spec, properties: { owner: 'shop' },
  });
  loadResultShape(orders);
  assert(orders.etag, 'create answers an ETag');
  eq(orders.metadata.properties.owner, 'shop', 'created properties');
  errorShape(await fails(cat.createTable({ namespace: [ns1] }, { name: 'orders', schema })), 409, 'AlreadyExistsException');
  errorShape(await fails(cat.createTable({ namespace: ['no_such_ns'] }, { name: 'x', schema })), 404, 'NoSuchNamespaceException');
  for (const t of ['t1', 't2', 't3']) await cat.createTable({ namespace: [ns1] }, { name: t, schema });
  const all = await cat.listTables({ namespace: [ns1] });
  eq(all.identifiers.map((i) => i.name), ['orders', 't1', 't2', 't3'], 'tables');
  for (const i of all.identifiers) { shape(i, { namespace: 'array', name: 'string' }, 'TableIdentifier'); eq(i.namespace, [ns1], 'identifier namespace'); }
  const raw = await rest('GET', `namespaces/${ns1}/tables`);
  shape(raw.body, { identifiers: 'array', 'next-page-token': 'null|absent' }, 'ListTablesResponse');
  const paged = [];
  let token = '';
  do {
    const p = await cat.listTables({ namespace: [ns1] }, { pageSize: 3, pageToken: token });
    paged.push(...p.identifiers.map((i) => i.name));
    token = p.nextPageToken;
  } while (token !== undefined);
  eq(paged, ['orders', 't1', 't2', 't3'], 'table pages put together');
  assert(await cat.tableExists({ namespace: [ns1], name: 'orders' }), 'tableExists');
  assert(!(await cat.tableExists({ namespace: [ns1], name: 'nope' })), 'tableExists of a missing one');
  errorShape(await fails(cat.loadTable({ namespace: [ns1], name: 'nope' })), 404, 'NoSuchTableException');
  errorShape(await fails(cat.listTables({ namespace: ['no_such_ns'] })), 404, 'NoSuchNamespaceException');
  const again = await cat.loadTableResult({ namespace: [ns1], name: 'orders' });
  loadResultShape(again);
  eq(again.etag, orders.etag, 'ETag stable while the metadata is');
  eq(await cat.loadTableResult({ namespace: [ns1], name: 'orders' }, { ifNoneMatch: orders.etag }), null, 'If-None-Match: 304');
  const refs = await cat.loadTableResult({ namespace: [ns1], name: 'orders' }, { snapshots: 'refs' });
  loadResultShape(refs);
  eq((await rest('GET', `namespaces/${ns1}/tables/orders?snapshots=some`)).status, 400, 'snapshots=some');
});

await step('rest_commits', 90, async () => {
  const id = { namespace: [ns1], name: 'orders' };
  const uuid = orders.metadata['table-uuid'];
  const ok = await cat.commitTable(id, {
    requirements: [{ type: 'assert-table-uuid', uuid }, { type: 'assert-current-schema-id', 'current-schema-id': 0 }],
    updates: [{ action: 'set-properties', updates: { stage: 'one' } }],
  });
  commitResultShape(ok);
  eq(ok.metadata.properties, { owner: 'shop', stage: 'one' }, 'commits merge properties');
  const after = await cat.loadTableResult(id, { ifNoneMatch: orders.etag });
  assert(after !== null, 'the old ETag no longer matches after a commit');
  assert(after.etag !== orders.etag, 'a commit changes the ETag');
  const failed = await fails(cat.commitTable(id, {
    requirements: [{ type: 'assert-table-uuid', uuid: '00000000-0000-4000-8000-000000000000' }],
    updates: [{ action: 'set-properties', updates: { stage: 'two' } }],
  }));
  errorShape(failed, 409, 'CommitFailedException');
  const failed2 = await fails(cat.commitTable(id, {
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 7 }],
    updates: [{ action: 'remove-properties', removals: ['owner'] }],
  }));
  errorShape(failed2, 409, 'CommitFailedException');
  eq(await cat.loadTableResult(id, { ifNoneMatch: after.etag }), null, 'a failed commit changes nothing (304)');
  errorShape(await fails(cat.commitTable(id, { requirements: [{ type: 'assert-nothing' }], updates: [] })), 400, 'BadRequestException');
  errorShape(await fails(cat.commitTable(id, { requirements: [], updates: [{ action: 'do-magic' }] })), 400, 'BadRequestException');
  errorShape(await fails(cat.commitTable({ namespace: [ns1], name: 'nope' }, { requirements: [], updates: [] })), 404, 'NoSuchTableException');
  const rm = await cat.commitTable(id, { requirements: [], updates: [{ action: 'remove-properties', removals: ['stage'] }] });
  eq(rm.metadata.properties, { owner: 'shop' }, 'remove-properties');
});

await step('rest_stage_create', 60, async () => {
  const staged = await cat.createTableResult({ namespace: [ns1] }, { name: 'staged', schema, 'stage-create': true });
  loadResultShape(staged, true);
  assert(!(await cat.tableExists({ namespace: [ns1], name: 'staged' })), 'a staged table does not exist yet');
  const md = staged.metadata;
  const updates = [
    { action: 'assign-uuid', uuid: md['table-uuid'] },
    { action: 'upgrade-format-version', 'format-version': 2 },
    { action: 'add-schema', schema: md.schemas[0], 'last-column-id': md['last-column-id'] },
    { action: 'set-current-schema', 'schema-id': -1 },
    { action: 'add-spec', spec: md['partition-specs'][0] },
    { action: 'set-default-spec', 'spec-id': -1 },
    { action: 'add-sort-order', 'sort-order': md['sort-orders'][0] },
    { action: 'set-default-sort-order', 'sort-order-id': -1 },
    { action: 'set-location', location: md.location },
    { action: 'set-properties', updates: { created: 'staged' } },
  ];
  const c = await cat.commitTable({ namespace: [ns1], name: 'staged' }, { requirements: [{ type: 'assert-create' }], updates });
  commitResultShape(c);
  eq(c.metadata['table-uuid'], md['table-uuid'], 'the staged uuid');
  eq(c.metadata.properties.created, 'staged', 'staged properties');
  assert(await cat.tableExists({ namespace: [ns1], name: 'staged' }), 'the staged table exists after its commit');
  errorShape(await fails(cat.commitTable({ namespace: [ns1], name: 'staged' }, { requirements: [{ type: 'assert-create' }], updates })),
    409, 'CommitFailedException');
});

await step('rest_rename_register_metrics', 60, async () => {
  await cat.renameTable({ source: { namespace: [ns1], name: 't2' }, destination: { namespace: [ns2], name: 't2b' } });
  assert(!(await cat.tableExists({ namespace: [ns1], name: 't2' })), 'old name gone');
  loadResultShape(await cat.loadTableResult({ namespace: [ns2], name: 't2b' }));
  errorShape(await fails(cat.renameTable({ source: { namespace: [ns1], name: 'nope' }, destination: { namespace: [ns2], name: 'x' } })),
    404, 'NoSuchTableException');
  errorShape(await fails(cat.renameTable({ source: { namespace: [ns1], name: 't1' }, destination: { namespace: [ns2], name: 't2b' } })),
    409, 'AlreadyExistsException');
  errorShape(await fails(cat.renameTable({ source: { namespace: [ns1], name: 't1' }, destination: { namespace: ['no_such_ns'], name: 'x' } })),
    404, 'NoSuchNamespaceException');
  const cur = await cat.loadTableResult({ namespace: [ns1], name: 'orders' });
  const reg = await cat.registerTableResult({ namespace: [ns2] }, { name: 'orders_copy', 'metadata-location': cur['metadata-location'] });
  loadResultShape(reg);
  eq(reg.metadata['table-uuid'], cur.metadata['table-uuid'], 'registered table uuid');
  errorShape(await fails(cat.registerTable({ namespace: [ns2] }, { name: 'orders_copy', 'metadata-location': cur['metadata-location'] })),
    409, 'AlreadyExistsException');
  const report = {
    'report-type': 'scan-report', 'table-name': `${ns1}.orders`, 'snapshot-id': -1, filter: true,
    'schema-id': 0, 'projected-field-ids': [1], 'projected-field-names': ['id'], metrics: {},
  };
  const m = await rest('POST', `floe/namespaces/${ns1}/tables/orders/metrics`, report);
  eq(m.status, 204, 'metrics report');
  const bad = await rest('POST', `namespaces/${ns1}/tables/orders/metrics`, { nothing: 1 });
  eq(bad.status, 400, 'a report without report-type');
  const text = await (await fetch(`${base}/metrics`)).text();
  assert(/^floe_rest_metrics_reports_total 1$/m.test(text), 'reports counted in /metrics');
});

await step('rest_transactions', 60, async () => {
  const a = { namespace: [ns1], name: 't1' }, b = { namespace: [ns1], name: 't3' };
  const ea = (await cat.loadTableResult(a)).etag, eb = (await cat.loadTableResult(b)).etag;
  const bad = await rest('POST', 'transactions/commit', {
    'table-changes': [
      { identifier: a, requirements: [], updates: [{ action: 'set-properties', updates: { tx: '1' } }] },
      { identifier: b, requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 9 }], updates: [{ action: 'set-properties', updates: { tx: '1' } }] },
    ],
  });
  eq(bad.status, 409, 'a transaction with a failed requirement');
  shape(bad.body.error, { message: 'string', type: 'string', code: 'number' }, 'ErrorModel');
  eq(bad.body.error.type, 'CommitFailedException', 'error type');
  eq(await cat.loadTableResult(a, { ifNoneMatch: ea }), null, 'nothing changed in the first table');
  eq(await cat.loadTableResult(b, { ifNoneMatch: eb }), null, 'nothing changed in the second table');
  const good = await rest('POST', 'floe/transactions/commit', {
    'table-changes': [
      { identifier: a, requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }], updates: [{ action: 'set-properties', updates: { tx: '2' } }] },
      { identifier: b, requirements: [], updates: [{ action: 'set-properties', updates: { tx: '2' } }] },
    ],
  });
  eq(good.status, 204, 'a transaction that passes');
  eq((await cat.loadTable(a)).properties.tx, '2', 'first table committed');
  eq((await cat.loadTable(b)).properties.tx, '2', 'second table committed');
});

await step('rest_drops', 60, async () => {
  errorShape(await fails(cat.dropNamespace({ namespace: [ns1] })), 409, 'NamespaceNotEmptyException');
  for (const t of ['orders', 't1', 't3', 'staged']) await cat.dropTable({ namespace: [ns1], name: t }, { purge: t === 'orders' });
  errorShape(await fails(cat.dropTable({ namespace: [ns1], name: 'orders' })), 404, 'NoSuchTableException');
  eq((await cat.listTables({ namespace: [ns1] })).identifiers, [], 'no tables left');
  await cat.dropNamespace({ namespace: [ns1] });
  assert(!(await cat.namespaceExists({ namespace: [ns1] })), 'namespace dropped');
  const r = await rest('DELETE', `namespaces/${ns2}/tables/t2b?purgeRequested=false`);
  eq(r.status, 204, 'DELETE table status');
  eq((await rest('GET', 'no/such/route')).status, 404, 'an unknown route');
});

// ---- multi-level namespaces: %1F in paths, parent listings, nested folders ----
await step('rest_multilevel_namespaces', 90, async () => {
  const top = `rest_ml_${process.pid}`;
  const a = [top], ab = [top, 'eu'], abc = [top, 'eu', 'fr'], ab2 = [top, 'us'];
  for (const n of [a, ab, abc, ab2]) {
    const c = await cat.createNamespace({ namespace: n }, { properties: { level: String(n.length) } });
    eq(c.namespace, n, 'created namespace path');
  }
  errorShape(await fails(cat.createNamespace({ namespace: ab })), 409, 'AlreadyExistsException');
  eq((await cat.loadNamespaceMetadata({ namespace: abc })).properties, { level: '3' }, 'nested properties');
  eq((await fetch(`${base}/v1/namespaces/${top}%1Feu%1Ffr`, { method: 'HEAD' })).status, 204, 'HEAD nested');
  // parent listings give full paths, one level down
  const kids = await rest('GET', `namespaces?parent=${top}`);
  shape(kids.body, { namespaces: 'array', 'next-page-token': 'null|absent' }, 'ListNamespacesResponse');
  eq(kids.body.namespaces, [ab, ab2], `children of ${top}`);
  eq((await cat.listNamespaces({ parent: { namespace: ab } })).namespaces.map((x) => x.namespace), [abc], 'children of eu');
  eq((await cat.listNamespaces({ parent: { namespace: abc } })).namespaces, [], 'a leaf has no children');
  const p1 = await rest('GET', `namespaces?parent=${top}&pageToken=&pageSize=1`);
  eq(p1.body.namespaces, [ab], 'first page of children');
  const p2 = await rest('GET', `namespaces?parent=${top}&pageSize=1&pageToken=${encodeURIComponent(p1.body['next-page-token'])}`);
  eq(p2.body.namespaces, [ab2], 'second page of children');
  const tops = (await cat.listNamespaces()).namespaces.map((x) => x.namespace);
  assert(tops.some((x) => x.length === 1 && x[0] === top), 'top level lists the parent');
  assert(!tops.some((x) => x.length > 1), 'top level lists no nested namespace');
  errorShape(await fails(cat.listNamespaces({ parent: { namespace: [top, 'nope'] } })), 404, 'NoSuchNamespaceException');
  // tables in a nested namespace: create, commit, list, rename across levels
  const t = await cat.createTableResult({ namespace: abc }, { name: 'sales', schema });
  loadResultShape(t);
  assert(t.metadata.location.endsWith(`/warehouse/${top}/eu/fr/sales`), `nested location ${t.metadata.location}`);
  assert(fs.existsSync(`${process.env.FLOE_DATA}/warehouse/${top}/eu/fr/sales/metadata`), 'nested folders in the warehouse');
  const c = await cat.commitTable({ namespace: abc, name: 'sales' }, {
    requirements: [{ type: 'assert-table-uuid', uuid: t.metadata['table-uuid'] }],
    updates: [{ action: 'set-properties', updates: { nested: 'yes' } }],
  });
  commitResultShape(c);
  eq(c.metadata.properties.nested, 'yes', 'commit in a nested namespace');
  const ids = await rest('GET', `namespaces/${top}%1Feu%1Ffr/tables`);
  eq(ids.body.identifiers, [{ namespace: abc, name: 'sales' }], 'identifiers carry the full namespace');
  await cat.renameTable({ source: { namespace: abc, name: 'sales' }, destination: { namespace: ab2, name: 'sales' } });
  loadResultShape(await cat.loadTableResult({ namespace: ab2, name: 'sales' }));
  const tx = await rest('POST', 'transactions/commit', { 'table-changes': [
    { identifier: { namespace: ab2, name: 'sales' }, requirements: [], updates: [{ action: 'set-properties', updates: { tx: 'nested' } }] }] });
  eq(tx.status, 204, 'a transaction on a nested table');
  // a namespace with children or tables is not empty
  errorShape(await fails(cat.dropNamespace({ namespace: ab })), 409, 'NamespaceNotEmptyException');
  errorShape(await fails(cat.dropNamespace({ namespace: ab2 })), 409, 'NamespaceNotEmptyException');
  await cat.dropTable({ namespace: ab2, name: 'sales' }, { purge: true });
  for (const n of [abc, ab, ab2, a]) await cat.dropNamespace({ namespace: n });
  assert(!(await cat.namespaceExists({ namespace: a })), 'nested namespaces dropped');
});

// ---- Idempotency-Key: a retried mutation applies once ----
const idemKey = () => crypto.randomUUID();
async function keyed(method, path, body, key) {
  const res = await fetch(`${base}/v1/${path}`, {
    method, headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined, etag: res.headers.get('etag') };
}
await step('rest_idempotency', 90, async () => {
  const cfg = await rest('GET', 'config');
  assert(/^PT\d+S$/.test(cfg.body['idempotency-key-lifetime']), `idempotency-key-lifetime ${cfg.body['idempotency-key-lifetime']}`);
  const ns = `rest_idem_${process.pid}`;
  const k1 = idemKey();
  const first = await keyed('POST', 'namespaces', { namespace: [ns], properties: { a: '1' } }, k1);
  eq(first.status, 200, 'keyed create namespace');
  const again = await keyed('POST', 'namespaces', { namespace: [ns], properties: { a: '1' } }, k1);
  eq(again.status, 200, 'the retry gets the first answer, not 409');
  eq(again.text, first.text, 'the same body');
  eq((await keyed('POST', 'namespaces', { namespace: [ns] }, idemKey())).status, 409, 'a new key applies again');
  const other = await keyed('POST', 'namespaces', { namespace: [`${ns}_x`] }, k1);
  eq(other.status, 422, 'a key reused for another request');
  shape(other.body.error, { message: 'string', type: 'string', code: 'number' }, 'ErrorModel');
  // create table and commit: a retry publishes nothing more
  const kt = idemKey();
  const ct = await keyed('POST', `namespaces/${ns}/tables`, { name: 't', schema }, kt);
  eq(ct.status, 200, 'keyed create table');
  eq((await keyed('POST', `namespaces/${ns}/tables`, { name: 't', schema }, kt)).text, ct.text, 'create table replayed');
  const kc = idemKey();
  const commit = { requirements: [], updates: [{ action: 'set-properties', updates: { n: '1' } }] };
  const c1 = await keyed('POST', `namespaces/${ns}/tables/t`, commit, kc);
  eq(c1.status, 200, 'keyed commit');
  const c2 = await keyed('POST', `namespaces/${ns}/tables/t`, commit, kc);
  eq(c2.body['metadata-location'], c1.body['metadata-location'], 'the retried commit names the same version');
  const cur = await rest('GET', `namespaces/${ns}/tables/t`);
  eq(cur.body['metadata-location'], c1.body['metadata-location'], 'one commit applied, not two');
  eq(cur.body.metadata['metadata-log'].length, 1, 'one version after the create');
  // a final failure is replayed too (409), and so is a transaction
  const kf = idemKey();
  const bad = { requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 9 }], updates: [] };
  eq((await keyed('POST', `namespaces/${ns}/tables/t`, bad, kf)).status, 409, 'failed requirement');
  eq((await keyed('POST', `namespaces/${ns}/tables/t`, bad, kf)).status, 409, 'its retry');
  const kx = idemKey();
  const txb = { 'table-changes': [{ identifier: { namespace: [ns], name: 't' }, requirements: [],
    updates: [{ action: 'set-properties', updates: { tx: '1' } }] }] };
  eq((await keyed('POST', 'transactions/commit', txb, kx)).status, 204, 'keyed transaction');
  eq((await keyed('POST', 'transactions/commit', txb, kx)).status, 204, 'its retry');
  eq((await rest('GET', `namespaces/${ns}/tables/t`)).body.metadata['metadata-log'].length, 2, 'the transaction applied once');
  // rename and drops
  const kr = idemKey();
  const ren = { source: { namespace: [ns], name: 't' }, destination: { namespace: [ns], name: 't2' } };
  eq((await keyed('POST', 'tables/rename', ren, kr)).status, 204, 'keyed rename');
  eq((await keyed('POST', 'tables/rename', ren, kr)).status, 204, 'its retry: 204, not 404');
  const kd = idemKey();
  eq((await keyed('DELETE', `namespaces/${ns}/tables/t2`, null, kd)).status, 204, 'keyed drop');
  eq((await keyed('DELETE', `namespaces/${ns}/tables/t2`, null, kd)).status, 204, 'its retry: 204, not 404');
  const kn = idemKey();
  eq((await keyed('DELETE', `namespaces/${ns}`, null, kn)).status, 204, 'keyed drop namespace');
  eq((await keyed('DELETE', `namespaces/${ns}`, null, kn)).status, 204, 'its retry');
  const m = await (await fetch(`${base}/metrics`)).text();
  const replays = Number((/^floe_rest_idempotent_replays_total (\d+)$/m.exec(m) || [])[1]);
  eq(replays, 8, 'replays counted in /metrics');
});

// ---- a table topic's table, while floe commits to it ----
const kafka = new Kafka({ clientId: 'rest-catalog', brokers: [broker], logLevel: logLevel.NOTHING });
const topic = `rest-tt-${process.pid}`;
const tid = { namespace: ['default'], name: topic.replace(/\./g, '_') };
const batches = 40, perBatch = 25, total = batches * perBatch, parts = 2;

// the newest snapshot of the main ancestry that carries floe.offsets (the
// walk floe itself makes to find its progress)
function floeOffsets(md) {
  const byId = new Map((md.snapshots ?? []).map((s) => [s['snapshot-id'], s]));
  for (let s = byId.get(md['current-snapshot-id']); s; s = byId.get(s['parent-snapshot-id']))
    if (s.summary['floe.offsets']) return JSON.parse(s.summary['floe.offsets']);
  return null;
}

await step('rest_table_topic_while_committing', 240, async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: parts, configEntries: [
      { name: 'table.enable', value: 'true' }, { name: 'table.commit.interval.ms', value: '200' }] }],
  });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  let produced = 0, producing = true;
  const produce = (async () => {
    for (let b = 0; b < batches; b++) {
      await producer.send({ topic, acks: -1, messages: Array.from({ length: perBatch }, (_, i) =>
        ({ partition: (b * perBatch + i) % parts, value: JSON.stringify({ n: b * perBatch + i, tag }) })) });
      produced += perBatch;
      await sleep(60);
    }
    producing = false;
  })();
  await until(() => cat.tableExists(tid), 60000, 'the table topic\'s table');
  // a reader polling with If-None-Match: a new ETag exactly when the
  // metadata moved, 304 otherwise
  const reader = (async () => {
    let last = null, seen = new Set(), loads = 0, notModified = 0;
    while (producing || loads < 5) {
      const r = await cat.loadTableResult(tid, last ? { ifNoneMatch: last.etag } : undefined);
      loads++;
      if (r === null) { notModified++; continue; }
      loadResultShape(r);
      assert(!seen.has(r.etag), `ETag ${r.etag} came back for new metadata`);
      if (last) assert(r['metadata-location'] !== last['metadata-location'], 'a new ETag with the same metadata');
      seen.add(r.etag);
      last = r;
      await sleep(20);
    }
    return { versions: seen.size, notModified };
  })();
  // an engine-like writer: set-properties commits through the catalog,
  // retried on 409 as an engine would, racing floe's own commits
  const engine = (async () => {
    const counts = [];
    for (let i = 0; i < 20; i++) {
      for (let attempt = 0; ; attempt++) {
        const cur = await cat.loadTable(tid);
        try {
          const r = await cat.commitTable(tid, {
            requirements: [{ type: 'assert-table-uuid', uuid: cur['table-uuid'] }],
            updates: [{ action: 'set-properties', updates: { [`engine.k${i}`]: String(i) } }],
          });
          commitResultShape(r);
          counts.push(r.metadata['last-sequence-number']);
          break;
        } catch (e) {
          if (!(e.status === 409 && attempt < 50)) throw e;
        }
      }
      await sleep(40);
    }
    return counts;
  })();
  // multi-table transactions over the table topic's table and another
  // one, racing floe's commits to the first: each lands in both tables or
  // (409, retried) in neither, never in one
  const other = { namespace: ['default'], name: `tx_${process.pid}` };
  await cat.createTable({ namespace: ['default'] }, { name: other.name, schema });
  const txs = (async () => {
    let done = 0;
    for (let i = 0; i < 15; i++) {
      for (let attempt = 0; ; attempt++) {
        const [ua, ub] = [(await cat.loadTable(tid))['table-uuid'], (await cat.loadTable(other))['table-uuid']];
        const set = { action: 'set-properties', updates: { [`tx.k${i}`]: String(i) } };
        const r = await rest('POST', 'transactions/commit', { 'table-changes': [
          { identifier: tid, requirements: [{ type: 'assert-table-uuid', uuid: ua }], updates: [set] },
          { identifier: other, requirements: [{ type: 'assert-table-uuid', uuid: ub }], updates: [set] },
        ] });
        const [pa, pb] = [(await cat.loadTable(tid)).properties, (await cat.loadTable(other)).properties];
        eq(pa[`tx.k${i}`], pb[`tx.k${i}`], `transaction ${i} (answered ${r.status}) in both tables or neither`);
        if (r.status === 204) { eq(pa[`tx.k${i}`], String(i), `transaction ${i} landed`); done++; break; }
        if (!(r.status === 409 && attempt < 50)) throw new Error(`transaction ${i}: ${r.status} ${JSON.stringify(r.body)}`);
      }
      await sleep(30);
    }
    return done;
  })();
  const [, seen, counts, txDone] = await Promise.all([produce, reader, engine, txs]);
  eq(txDone, 15, 'every transaction landed');
  await producer.disconnect();
  await until(async () => {
    const o = floeOffsets(await cat.loadTable(tid));
    return o && Object.values(o).reduce((a, b) => a + b, 0) === total;
  }, 60000, `floe.offsets covering all ${total} records`);
  const md = await cat.loadTable(tid);
  for (let i = 0; i < 20; i++) eq(md.properties[`engine.k${i}`], String(i), `engine property k${i} kept`);
  const mo = await cat.loadTable(other);
  for (let i = 0; i < 15; i++) {
    eq(md.properties[`tx.k${i}`], String(i), `transaction property k${i} kept in the topic's table`);
    eq(mo.properties[`tx.k${i}`], String(i), `transaction property k${i} kept in the other table`);
  }
  const offs = floeOffsets(md);
  eq(Object.keys(offs).sort(), ['0', '1'], 'partitions in floe.offsets');
  eq(offs['0'] + offs['1'], produced, 'floe.offsets: every produced record once');
  const cur = md.snapshots.find((s) => s['snapshot-id'] === md['current-snapshot-id']);
  eq(Number(cur.summary['total-records']), total, 'total-records of the current snapshot');
  // the writers interleaved: floe committed snapshots after the engine's
  // first commit
  assert(counts[0] < md['last-sequence-number'],
    `no floe commit after the engine's first (sequence ${counts[0]} of ${md['last-sequence-number']})`);
  assert(seen.versions >= 2, `the reader saw ${seen.versions} metadata versions`);
  console.log(`# ${md.snapshots.length} snapshots; engine commits saw sequence ${counts[0]}..${counts[counts.length - 1]}; ` +
    `reader saw ${seen.versions} versions, ${seen.notModified} 304s`);
});

finish();
