// Two floe servers: A's table topics are committed to B's Iceberg REST
// catalog (catalog.type = rest), B keeps them in its warehouse.  While a
// kafkajs producer writes to A and an engine-like writer (iceberg-js,
// set-properties) commits to the same table through B, A is SIGKILLed, then
// B, then both (A restarted before B: it waits for its catalog).  In the
// end icebird reads the table as B serves it: every acknowledged record
// exactly once, no record twice, every one of the writer's properties kept;
// `floe table list --config` with A's config finds it there too.
// Then, through a small HTTP stand-in in front of B that checks what the
// client sends: OAuth2 client credentials (token endpoint form, tokens
// fetched again before they expire and after a 401), and a server whose
// /v1/config lacks the commit endpoint, which floe refuses at start.
// Then floe to floe with auth, no stand-in: A commits to a floe C that
// takes only OAuth2 client credentials (short-lived tokens) or a static
// token.
// Environment: FLOE_BIN; REST_TWO_WAREHOUSE=s3 with S3_ENDPOINT,
// S3_BUCKET, AWS_* puts B's warehouse, and A's files, on S3.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, openSync, readFileSync, readdirSync, rmSync, appendFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import '../fetch_shim.mjs';
import '../s3_fetch_shim.mjs';
import { IcebergRestCatalog } from 'iceberg-js';
import { icebergRead } from 'icebird';
import { Kafka, logLevel } from 'kafkajs';

process.env.FLOE_KAFKA ??= '(started here)';
const { step, assert, eq, sleep, until, finish, floeOffsets } = await import('./common.mjs');
const bin = process.env.FLOE_BIN;
assert(bin, 'FLOE_BIN must be set');
const s3 = process.env.REST_TWO_WAREHOUSE === 's3';
const P = s3 ? 'rest_two_s3' : 'rest_two';
const tmp = mkdtempSync(join(tmpdir(), 'floe-rest-two.'));
const procs = [];
const ns = 'two', table = `events_${process.pid}`, tid = { namespace: [ns], name: table };

// Start `floe serve` with args; resolves with its ready line's addresses
// once it printed it (or with its exit status when expectExit).
let runs = 0;
async function serve(name, args, expectExit = false) {
  const log = join(tmp, `${name}-${++runs}.log`);
  const fd = openSync(log, 'a');
  const p = spawn(bin, ['serve', ...args], { stdio: ['ignore', fd, fd] });
  procs.push(p);
  if (process.env.REST_TWO_PIDS) appendFileSync(process.env.REST_TWO_PIDS, `${p.pid}\n`);
  let exited = null;
  p.on('exit', (code, sig) => { exited = `${code ?? sig}`; });
  let m = null;
  await until(() => {
    const text = readFileSync(log, 'utf8');
    if (exited !== null) {
      if (expectExit) return true;
      throw new Error(`floe ${name} exited (${exited}): ${text.slice(-600)}`);
    }
    m = /^floe ready kafka=(\S+) http=(\S+) /m.exec(text);
    return m !== null;
  }, 60000, `floe ${name} ready`);
  return { p, log, kafka: m && m[1], http: m && m[2], exited: () => exited };
}
async function kill9(s) {
  s.p.kill('SIGKILL');
  await until(() => s.exited() !== null, 10000, 'a SIGKILLed floe to go');
}
async function stop(s) {
  s.p.kill('SIGTERM');
  await until(() => s.exited() !== null, 30000, 'floe to stop on SIGTERM');
  return s.exited();
}

// B: floe's own REST catalog, on a port kept across its restarts
const bDir = join(tmp, 'b');
const bConf = join(tmp, 'b.conf');
writeFileSync(bConf, s3 ? [
  `warehouse = s3://${process.env.S3_BUCKET}/rest-two`, `s3.endpoint = ${process.env.S3_ENDPOINT}`,
  's3.path-style-access = true', 's3.region = us-east-1', '',
].join('\n') : '\n');
let b = await serve('b', ['--config', bConf, '--data-dir', bDir, '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0']);
const bHttp = b.http, bKafka = b.kafka;
const startB = () => serve('b', ['--config', bConf, '--data-dir', bDir, '--listen', bKafka, '--http', bHttp]);
const cat = new IcebergRestCatalog({ baseUrl: `http://${bHttp}`, warehouse: 'floe' });

// A: its table topics committed to B
const aDir = join(tmp, 'a');
const aConf = join(tmp, 'a.conf');
writeFileSync(aConf, [
  'catalog.type = rest', `catalog.uri = http://${bHttp}/`, 'catalog.warehouse = floe',
  ...(s3 ? [`warehouse = s3://${process.env.S3_BUCKET}/rest-two`, `s3.endpoint = ${process.env.S3_ENDPOINT}`,
    's3.path-style-access = true', 's3.region = us-east-1'] : []),
  'table.commit.interval.ms = 300', '',
].join('\n'));
let a = await serve('a', ['--config', aConf, '--data-dir', aDir, '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0']);
const aKafka = a.kafka, aHttp = a.http;
const startA = () => serve('a', ['--config', aConf, '--data-dir', aDir, '--listen', aKafka, '--http', aHttp]);

// A table topic on the floe at kafkaAddr (json values, namespace ns)
// and a connected idempotent producer to it.
async function tableTopic(kafkaAddr, topic, partitions) {
  const kafka = new Kafka({ clientId: `rest-two-${topic}`, brokers: [kafkaAddr], logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 100 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions, configEntries: [
    { name: 'table.enable', value: 'true' }, { name: 'table.namespace', value: ns },
    { name: 'table.value.converter', value: 'json' }] }] });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return { kafka, producer };
}
const sum = (o) => Object.values(o ?? {}).reduce((x, y) => x + y, 0);
// B's view of the table; null while B is down
const load = async () => { try { return await cat.loadTable(tid); } catch { return null; } };
const committed = async () => sum(floeOffsets(await load() ?? {}));

await step(`${P}_ready_lines`, 30, async () => {
  assert(/Iceberg REST catalog at http:\/\/[^ ]+\/v1\//.test(readFileSync(b.log, 'utf8')),
    'B logs the REST endpoint it serves');
  assert(/tables committed to the REST catalog at http:\/\//.test(readFileSync(a.log, 'utf8')),
    'A logs the REST catalog it commits to');
  const r = await fetch(`http://${aHttp}/v1/config`);
  eq(r.status, 404, 'A, committing to B, serves no REST catalog of its own');
});

const parts = 3;
const acked = new Set(), sent = new Set();
await step(`${P}_exactly_once_through_kills`, 240, async () => {
  const made = await tableTopic(aKafka, table, parts);
  const kafka = made.kafka;
  let producing = true, n = 0;
  const produce = (async () => {
    let producer = made.producer;
    while (producing) {
      const batch = Array.from({ length: 20 }, () => n++);
      try {
        if (!producer) { producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 }); await producer.connect(); }
        batch.forEach((i) => sent.add(i));
        await producer.send({ topic: table, acks: -1, messages: batch.map((i) =>
          ({ partition: i % parts, value: JSON.stringify({ n: i, region: `r${i % 4}` }) })) });
        batch.forEach((i) => acked.add(i));
      } catch {
        // not acknowledged: in the table at most once
        try { await producer?.disconnect(); } catch { /* gone */ }
        producer = null;
        await sleep(200);
      }
      await sleep(30);
    }
    try { await producer?.disconnect(); } catch { /* gone */ }
  })();
  await until(async () => (await committed()) > 0, 60000, 'A\'s first commit to B');
  // the engine-like writer: set-properties through B, retried on 409 and
  // while B is down (a retried set-properties sets the same value again)
  let props = 0, writing = true;
  const writer = (async () => {
    while (writing) {
      for (;;) {
        try {
          const cur = await cat.loadTable(tid);
          await cat.commitTable(tid, {
            requirements: [{ type: 'assert-table-uuid', uuid: cur['table-uuid'] }],
            updates: [{ action: 'set-properties', updates: { [`engine.k${props}`]: String(props) } }],
          });
          break;
        } catch (e) {
          if (e.status && e.status !== 409 && e.status < 500) throw e;
          await sleep(100);
        }
      }
      props++;
      await sleep(150);
    }
  })();
  const advance = async (what) => {
    const from = await committed();
    await until(async () => (await committed()) > from + 40, 60000, `commits to go on after ${what}`);
  };
  await kill9(a);
  a = await startA();
  await advance('A was killed');
  await kill9(b);
  await sleep(500);
  b = await startB();
  await advance('B was killed');
  await kill9(a);
  await kill9(b);
  a = await startA(); // before its catalog: it waits for B
  await sleep(500);
  b = await startB();
  await advance('both were killed');
  producing = false;
  await produce;
  writing = false;
  await writer;
  // everything in A's log reaches the table
  const ka = kafka.admin();
  await ka.connect();
  const ends = await ka.fetchTopicOffsets(table);
  await ka.disconnect();
  const logEnd = ends.reduce((x, o) => x + Number(o.high), 0);
  await until(async () => (await committed()) === logEnd, 90000, `floe.offsets reaching A's log end ${logEnd}`);
  const md = await cat.loadTable(tid);
  if (s3) assert(md.location.startsWith(`s3://${process.env.S3_BUCKET}/`), `the table lives on S3: ${md.location}`);
  const rows = await icebergRead({ tableUrl: md.location, metadata: md });
  const seen = new Map(), at = new Set();
  for (const r of rows) {
    seen.set(Number(r.n), (seen.get(Number(r.n)) ?? 0) + 1);
    const o = `${r._kafka.partition}/${r._kafka.offset}`;
    assert(!at.has(o), `the record at partition/offset ${o} is in the table twice`);
    at.add(o);
  }
  eq(rows.length, logEnd, 'rows in the table (icebird, through B) = records in A\'s log');
  for (const [i, c] of seen)
    assert(c === 1, `record ${i} is in the table ${c} times: ${JSON.stringify(rows.filter((r) => Number(r.n) === i).map((r) => r._kafka), (_k, v) => typeof v === 'bigint' ? String(v) : v)}`);
  for (const i of acked) assert(seen.get(i) === 1, `acknowledged record ${i} is missing`);
  for (const i of seen.keys()) assert(sent.has(i), `record ${i} was never sent`);
  for (let i = 0; i < props; i++) eq(md.properties[`engine.k${i}`], String(i), `the writer's property k${i}`);
  assert(acked.size > 0 && props > 0, 'records and properties were written');
  // the operator CLI reads the table where A's config says it is
  const list = execFileSync(bin, ['table', 'list', '--config', aConf, '--data-dir', aDir, '--no-http'], { encoding: 'utf8' });
  const line = list.split('\n').find((l) => l.startsWith(`${ns}.${table} `));
  assert(line && line.trim().split(/\s+/)[2] === String(logEnd), `floe table list --config A's config: ${list}`);
  const aLogs = readdirSync(tmp).filter((f) => f.startsWith('a-')).map((f) => readFileSync(join(tmp, f), 'utf8')).join('');
  const count = (re) => (aLogs.match(re) || []).length;
  console.log(`# A's logs: ${count(/commit failed/g)} failed commits, ${count(/outcome unknown/g)} unknown outcomes, ` +
    `${count(/asked again at the first call/g)} starts without B`);
  console.log(`# ${acked.size} acknowledged of ${sent.size} sent, ${rows.length} rows, ` +
    `${md.snapshots.length} snapshots, ${props} property commits by the other writer`);
});

// ---- a stand-in in front of B: what the client sends, checked ----
// /auth/...: OAuth2 client credentials at /auth/v1/oauth/tokens; every
// other request needs a live bearer token, then goes on to B.
// /strip/...: goes on to B, but /v1/config answers without the commit
// endpoint.
const calls = { tokenForms: [], issued: 0, rejected: 0, forwarded: 0, commits: 0, lost504: 0, refused503: 0, cut: 0 };
const live = new Set();
const stand = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const m = /^\/(auth|strip|lost)(\/.*)$/.exec(req.url);
    if (!m) { res.writeHead(404); res.end(); return; }
    const [, mode, path] = m;
    const json = (status, o) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(o)); };
    if (mode === 'auth' && path === '/v1/oauth/tokens') {
      const f = Object.fromEntries(new URLSearchParams(body.toString()));
      calls.tokenForms.push({ ...f, contentType: req.headers['content-type'], method: req.method });
      if (f.grant_type !== 'client_credentials' || f.client_id !== 'floe-a' || f.client_secret !== 's3cret' ||
        f.scope !== 'catalog')
        return json(401, { error: 'invalid_client', error_description: 'unknown client or secret' });
      const t = `tok-${++calls.issued}`;
      live.add(t);
      // said to expire in 2 s, taken for as long as it is not revoked: a
      // refresh before any 401 is the client's own, ahead of the expiry
      return json(200, { access_token: t, token_type: 'bearer', expires_in: 2, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
    }
    if (mode === 'auth') {
      const h = req.headers.authorization || '';
      if (!h.startsWith('Bearer ') || !live.has(h.slice(7))) {
        calls.rejected++;
        return json(401, { error: { message: 'not authorized', type: 'NotAuthorizedException', code: 401 } });
      }
    }
    // commits, in turn: applied with the answer lost (504), refused
    // unapplied (503), applied with the connection cut, passed through
    let after = null;
    if (mode === 'lost' && req.method === 'POST' && /\/namespaces\/[^/]+\/tables\/[^/]+$/.test(path)) {
      const k = ++calls.commits % 4;
      if (k === 2) { calls.refused503++; return json(503, { error: { message: 'try later', type: 'ServiceUnavailableException', code: 503 } }); }
      if (k === 1) after = () => { calls.lost504++; json(504, { error: { message: 'gateway timeout', type: 'GatewayTimeoutException', code: 504 } }); };
      if (k === 3) after = () => { calls.cut++; res.socket.destroy(); };
    }
    calls.forwarded++;
    const [host, port] = bHttp.split(':');
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.authorization;
    const up = request({ host, port: Number(port), method: req.method, path, headers }, (r) => {
      const out = [];
      r.on('data', (c) => out.push(c));
      r.on('end', () => {
        if (after) return after();
        let data = Buffer.concat(out);
        if (mode === 'strip' && path.startsWith('/v1/config')) {
          const cfg = JSON.parse(data.toString());
          cfg.endpoints = cfg.endpoints.filter((e) => e !== 'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}');
          data = Buffer.from(JSON.stringify(cfg));
        }
        const hs = { ...r.headers, 'content-length': String(data.length) };
        res.writeHead(r.statusCode, hs);
        res.end(data);
      });
    });
    up.on('error', (e) => json(502, { error: { message: String(e), type: 'BadGateway', code: 502 } }));
    up.end(body);
  });
});
await new Promise((r) => stand.listen(0, '127.0.0.1', r));
const standUrl = `http://127.0.0.1:${stand.address().port}`;

if (!s3) await step(`${P}_oauth2_client_credentials`, 120, async () => {
  const conf = join(tmp, 'a2.conf');
  const conf2 = (cred) => writeFileSync(conf, ['catalog.type = rest', `catalog.uri = ${standUrl}/auth`,
    'catalog.warehouse = floe', `catalog.credential = ${cred}`, 'table.commit.interval.ms = 300', ''].join('\n'));
  // a wrong secret: refused at start, saying so
  conf2('floe-a:wrong');
  const bad = await serve('a2', ['--config', conf, '--data-dir', join(tmp, 'a2'), '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0'], true);
  eq(bad.exited(), '1', 'floe serve with a wrong secret exits 1');
  assert(/token endpoint .*HTTP 401 invalid_client/.test(readFileSync(bad.log, 'utf8')),
    `the reason names the token endpoint's answer: ${readFileSync(bad.log, 'utf8').slice(-300)}`);
  conf2('floe-a:s3cret');
  const a2 = await serve('a2', ['--config', conf, '--data-dir', join(tmp, 'a2'), '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0']);
  const topic = `auth_${process.pid}`, atid = { namespace: [ns], name: topic };
  const { producer } = await tableTopic(a2.kafka, topic, 1);
  let total = 0;
  const send = async (k) => {
    await producer.send({ topic, acks: -1, messages: Array.from({ length: k }, (_, i) => ({ value: JSON.stringify({ n: total + i }) })) });
    total += k;
  };
  const offs = async () => { try { return sum(floeOffsets(await cat.loadTable(atid))); } catch { return 0; } };
  await send(10);
  await until(async () => (await offs()) === total, 30000, 'the first commit through the token-checking stand-in');
  // the token lives 2 s: commits go on past it without a single 401
  for (let i = 0; i < 4; i++) { await sleep(1000); await send(5); }
  await until(async () => (await offs()) === total, 30000, 'commits past the first token\'s lifetime');
  eq(calls.rejected, 0, 'requests refused before any token was revoked');
  assert(calls.issued >= 2, `tokens fetched again before they expire (${calls.issued} issued)`);
  // revoke every token: the next call is a 401, then a new token
  const before = calls.issued;
  live.clear();
  await send(5);
  await until(async () => (await offs()) === total, 30000, 'commits after the tokens were revoked');
  assert(calls.rejected >= 1 && calls.issued > before, `a 401, then a new token (${calls.rejected} refused, ${calls.issued - before} new)`);
  for (const f of calls.tokenForms.slice(1))
    eq([f.method, f.contentType, f.grant_type, f.client_id, f.scope], ['POST', 'application/x-www-form-urlencoded',
      'client_credentials', 'floe-a', 'catalog'], 'the token request');
  await producer.disconnect();
  eq(await stop(a2), '0', 'A2 stops cleanly');
});

if (!s3) await step(`${P}_unknown_outcomes_resolved`, 120, async () => {
  const conf = join(tmp, 'a4.conf');
  writeFileSync(conf, ['catalog.type = rest', `catalog.uri = ${standUrl}/lost`, 'catalog.warehouse = floe',
    'table.commit.interval.ms = 200', ''].join('\n'));
  const a4 = await serve('a4', ['--config', conf, '--data-dir', join(tmp, 'a4'), '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0']);
  const topic = `lost_${process.pid}`, ltid = { namespace: [ns], name: topic };
  const { producer } = await tableTopic(a4.kafka, topic, 2);
  let total = 0;
  const offs = async () => { try { return sum(floeOffsets(await cat.loadTable(ltid))); } catch { return 0; } };
  while (calls.lost504 < 2 || calls.refused503 < 2 || calls.cut < 2) {
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, value: JSON.stringify({ n: total + i }) })) });
    total += 10;
    await until(async () => (await offs()) === total, 30000, `commit of ${total} records through lost and refused answers`);
  }
  await producer.disconnect();
  const md = await cat.loadTable(ltid);
  const rows = await icebergRead({ tableUrl: md.location, metadata: md });
  eq(rows.map((r) => Number(r.n)).sort((x, y) => x - y), Array.from({ length: total }, (_, i) => i),
    'every record once (icebird, through B)');
  const log = readFileSync(a4.log, 'utf8');
  assert(/outcome unknown/.test(log), 'A4 saw unknown outcomes');
  console.log(`# ${calls.commits} commit requests: ${calls.lost504} applied but answered 504, ` +
    `${calls.cut} applied with the connection cut, ${calls.refused503} refused with 503; ${total} records`);
  eq(await stop(a4), '0', 'A4 stops cleanly');
});

if (!s3) await step(`${P}_missing_endpoint_refused`, 60, async () => {
  const conf = join(tmp, 'a3.conf');
  writeFileSync(conf, ['catalog.type = rest', `catalog.uri = ${standUrl}/strip`, 'catalog.warehouse = floe', ''].join('\n'));
  const a3 = await serve('a3', ['--config', conf, '--data-dir', join(tmp, 'a3'), '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0'], true);
  eq(a3.exited(), '1', 'floe serve against a catalog without the commit endpoint exits 1');
  const text = readFileSync(a3.log, 'utf8');
  assert(text.includes('does not offer POST /v1/{prefix}/namespaces/{namespace}/tables/{table}'),
    `the reason names the missing endpoint: ${text.slice(-300)}`);
});

// floe to floe with auth: C serves its REST catalog only to OAuth2
// client floe-a (tokens living 3 s) and to a static token.  A6 with a
// wrong secret is refused at start; with the right one it commits while
// its tokens expire; restarted with the static token it goes on.  icebird
// reads through C with a token; C refuses a request without one.
if (!s3) await step(`${P}_auth_floe_to_floe`, 120, async () => {
  const cConf = join(tmp, 'c.conf');
  writeFileSync(cConf, ['rest.auth.tokens = c-static-token', 'rest.auth.clients = floe-a:s3cret',
    'rest.auth.token.ttl.ms = 3s', ''].join('\n'));
  const c = await serve('c', ['--config', cConf, '--data-dir', join(tmp, 'c'), '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0']);
  const anon = await fetch(`http://${c.http}/v1/config?warehouse=floe`);
  eq(anon.status, 401, 'C answers a request without a token with 401');
  const ccat = new IcebergRestCatalog({ baseUrl: `http://${c.http}`, warehouse: 'floe',
    auth: { type: 'bearer', token: 'c-static-token' } });
  const conf = join(tmp, 'a6.conf');
  const aArgs = ['--config', conf, '--data-dir', join(tmp, 'a6'), '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0'];
  const conf6 = (auth) => writeFileSync(conf, ['catalog.type = rest', `catalog.uri = http://${c.http}`,
    'catalog.warehouse = floe', auth, 'table.commit.interval.ms = 200', ''].join('\n'));
  conf6('catalog.credential = floe-a:wrong');
  const bad = await serve('a6', aArgs, true);
  eq(bad.exited(), '1', 'floe serve with a wrong secret for C exits 1');
  assert(/token endpoint http:\/\/\S+\/v1\/oauth\/tokens: HTTP 401 invalid_client/.test(readFileSync(bad.log, 'utf8')),
    `the reason is C's token endpoint's answer: ${readFileSync(bad.log, 'utf8').slice(-300)}`);
  conf6('catalog.credential = floe-a:s3cret');
  const t0 = Date.now(); // A6 takes its first token at start: it lives 3 s
  let a6 = await serve('a6', aArgs);
  const topic = `authc_${process.pid}`, ctid = { namespace: [ns], name: topic };
  let made = await tableTopic(a6.kafka, topic, 2);
  let total = 0;
  const send = async (k) => {
    await made.producer.send({ topic, acks: -1, messages: Array.from({ length: k }, (_, i) =>
      ({ partition: (total + i) % 2, value: JSON.stringify({ n: total + i }) })) });
    total += k;
  };
  const offs = async () => { try { return sum(floeOffsets(await ccat.loadTable(ctid))); } catch { return 0; } };
  await send(10);
  await until(async () => (await offs()) === total, 30000, 'A6\'s first commit to C');
  // records sent once A6's first token has expired: committed only with a new one
  while (Date.now() - t0 < 4500) { await send(5); await sleep(500); }
  await send(5);
  await until(async () => (await offs()) === total, 30000, 'A6\'s commits after its first token expired');
  const cm = await (await fetch(`http://${c.http}/metrics`)).text();
  const metric = (name) => Number((new RegExp(`^${name} (\\d+)$`, 'm').exec(cm) || [])[1]);
  const issued = metric('floe_rest_oauth_tokens_issued_total');
  assert(issued >= 2, `C issued A6 a new token as the first expired (${issued} issued)`);
  console.log(`# C issued ${issued} tokens; ${metric('floe_rest_unauthorized_total') - 1} requests refused after the anonymous one`);
  await made.producer.disconnect();
  eq(await stop(a6), '0', 'A6 stops cleanly');
  // the same A6 with C's static token instead
  conf6('catalog.token = c-static-token');
  a6 = await serve('a6', aArgs);
  made = await tableTopic(a6.kafka, topic, 2); // the topic is there: only a producer
  await send(10);
  await until(async () => (await offs()) === total, 30000, 'A6\'s commits with the static token');
  await made.producer.disconnect();
  const md = await ccat.loadTable(ctid);
  const rows = await icebergRead({ tableUrl: md.location, metadata: md });
  eq(rows.map((r) => Number(r.n)).sort((x, y) => x - y), Array.from({ length: total }, (_, i) => i),
    'every record once (icebird, through C with a token)');
  console.log(`# ${total} records through C's auth, ${md.snapshots.length} snapshots, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  eq(await stop(a6), '0', 'A6 (static token) stops cleanly');
  eq(await stop(c), '0', 'C stops cleanly');
});

// SigV4 (s3 mode): radosgw holds a catalog config object in a private
// bucket; a floe whose catalog.uri points there reads it only when its
// requests are signed as radosgw verifies them; over https only with
// s3.ca-file naming radosgw's private CA
if (s3) await step(`${P}_sigv4_signed_catalog_requests`, 60, async () => {
  const conf = join(tmp, 'a5.conf');
  const write = (secret) => writeFileSync(conf, ['catalog.type = rest', `catalog.uri = ${process.env.S3_ENDPOINT}/sigv4cat/cat`,
    'catalog.rest.sigv4-enabled = true', 'catalog.rest.signing-name = s3', 'catalog.rest.signing-region = us-east-1',
    `s3.access-key-id = ${process.env.AWS_ACCESS_KEY_ID}`, `s3.secret-access-key = ${secret}`, ''].join('\n'));
  write('not-the-secret');
  const bad = await serve('a5', ['--config', conf, '--data-dir', join(tmp, 'a5'), '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0'], true);
  eq(bad.exited(), '1', 'floe serve whose signatures radosgw refuses exits 1');
  assert(/config: HTTP 403/.test(readFileSync(bad.log, 'utf8')), `radosgw's 403 is the reason: ${readFileSync(bad.log, 'utf8').slice(-300)}`);
  write(process.env.AWS_SECRET_ACCESS_KEY);
  const good = await serve('a5', ['--config', conf, '--data-dir', join(tmp, 'a5'), '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0']);
  eq(await stop(good), '0', 'floe serve with signed catalog requests started (radosgw answered its /v1/config) and stops');
  // the same over https, radosgw's certificate signed by a private CA:
  // trusted only with s3.ca-file naming that CA
  const https = (ca) => writeFileSync(conf, ['catalog.type = rest', `catalog.uri = ${process.env.S3_HTTPS_ENDPOINT}/sigv4cat/cat`,
    'catalog.rest.sigv4-enabled = true', 'catalog.rest.signing-name = s3', 'catalog.rest.signing-region = us-east-1',
    `s3.access-key-id = ${process.env.AWS_ACCESS_KEY_ID}`, `s3.secret-access-key = ${process.env.AWS_SECRET_ACCESS_KEY}`,
    ...(ca ? [`s3.ca-file = ${process.env.S3_CA_FILE}`] : []), ''].join('\n'));
  https(false);
  const untrusted = await serve('a5', ['--config', conf, '--data-dir', join(tmp, 'a5'), '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0']);
  eq(await stop(untrusted), '0', 'floe serve without the CA stops');
  assert(/config: .*(certificate|SSL).*; asked again at the first call/i.test(readFileSync(untrusted.log, 'utf8')),
    `without s3.ca-file the catalog's certificate is not trusted: ${readFileSync(untrusted.log, 'utf8').slice(-300)}`);
  https(true);
  const trusted = await serve('a5', ['--config', conf, '--data-dir', join(tmp, 'a5'), '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0']);
  eq(await stop(trusted), '0', 'floe serve with s3.ca-file stops');
  assert(!/asked again at the first call/.test(readFileSync(trusted.log, 'utf8')),
    `with s3.ca-file radosgw answered /v1/config over https: ${readFileSync(trusted.log, 'utf8').slice(-300)}`);
});

stand.close();
await step(`${P}_clean_stops`, 60, async () => {
  eq(await stop(a), '0', 'A stops cleanly');
  eq(await stop(b), '0', 'B stops cleanly');
});
for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
rmSync(tmp, { recursive: true, force: true });
finish();
