// Two floe processes and a REST catalog between them: `floe sink`
// consumes a plain topic of `floe serve` (kafkajs produces it) and commits
// the table through floe serve's REST catalog (catalog: type: rest), not to
// a directory.  The sink is SIGKILLed mid-stream and restarted; an
// engine-like writer (iceberg-js, set-properties) commits to the same
// table the whole time.  In the end, read through the catalog: every
// record exactly once (total-records, floe.offsets found by walking the
// snapshot ancestry), every one of the writer's properties kept.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IcebergRestCatalog } from 'iceberg-js';
import { Kafka, logLevel } from 'kafkajs';
import { step, assert, eq, sleep, until, finish, broker, floeOffsets } from './common.mjs';

const http = process.env.FLOE_HTTP, bin = process.env.FLOE_BIN;
assert(http && bin, 'FLOE_HTTP and FLOE_BIN must be set');
const cat = new IcebergRestCatalog({ baseUrl: `http://${http}`, warehouse: 'floe' });
const kafka = new Kafka({ clientId: 'sink-rest', brokers: [broker], logLevel: logLevel.NOTHING });
const topic = `sinkrest-${process.pid}`;
const tid = { namespace: ['sinkrest'], name: `orders_${process.pid}` };
const parts = 3, batches = 30, perBatch = 50, total = batches * perBatch;
const tmp = mkdtempSync(join(tmpdir(), 'floe-sink-rest.'));
const yaml = join(tmp, 'sink.yaml');
writeFileSync(yaml, [
  'kafka:', `  bootstrap.servers: ${broker}`, `  group.id: sink-rest-${process.pid}`,
  '  session.timeout.ms: 6000', '  heartbeat.interval.ms: 1000',
  'catalog:', '  type: rest', `  uri: http://${http}`, '  warehouse: floe',
  'tables:', `  - topic: ${topic}`, `    table: ${tid.namespace[0]}.${tid.name}`, '    value_converter: json',
  '    commit_interval: 1s', '',
].join('\n'));

let sinks = 0;
const procs = [];
// start a sink; resolves once it printed its ready line
async function startSink() {
  const log = join(tmp, `sink-${++sinks}.log`);
  const fd = openSync(log, 'a');
  const p = spawn(bin, ['sink', '--config', yaml, '--http', '127.0.0.1:0'], { stdio: ['ignore', fd, fd] });
  procs.push(p);
  let exited = null;
  p.on('exit', (code, sig) => { exited = `${code ?? sig}`; });
  await until(() => {
    if (exited !== null) throw new Error(`floe sink exited (${exited}): ${readFileSync(log, 'utf8').slice(-600)}`);
    return /^floe sink ready /m.test(readFileSync(log, 'utf8'));
  }, 60000, 'floe sink ready');
  return { p, log, exited: () => exited };
}

const sum = (o) => Object.values(o ?? {}).reduce((a, b) => a + b, 0);

await step('sink_rest_exactly_once_with_kill_and_a_second_writer', 300, async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: parts }] });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  let producing = true;
  const produce = (async () => {
    for (let b = 0; b < batches; b++) {
      await producer.send({ topic, acks: -1, messages: Array.from({ length: perBatch }, (_, i) =>
        ({ partition: (b * perBatch + i) % parts, value: JSON.stringify({ n: b * perBatch + i, region: `r${i % 4}` }) })) });
      await sleep(100);
    }
    producing = false;
  })();
  let sink = await startSink();
  await until(() => cat.tableExists(tid), 60000, 'the sink\'s table in the REST catalog');
  // the engine-like writer: set-properties, retried on 409
  let props = 0;
  const writer = (async () => {
    while (producing || props < 5) {
      for (let attempt = 0; ; attempt++) {
        const cur = await cat.loadTable(tid);
        try {
          await cat.commitTable(tid, {
            requirements: [{ type: 'assert-table-uuid', uuid: cur['table-uuid'] }],
            updates: [{ action: 'set-properties', updates: { [`engine.k${props}`]: String(props) } }],
          });
          break;
        } catch (e) {
          if (!(e.status === 409 && attempt < 50)) throw e;
        }
      }
      props++;
      await sleep(150);
    }
  })();
  // SIGKILL the sink once it committed something, then start another
  await until(async () => sum(floeOffsets(await cat.loadTable(tid))) > 0, 60000, 'a first commit by the sink');
  sink.p.kill('SIGKILL');
  await until(() => sink.exited() !== null, 10000, 'the killed sink to go');
  sink = await startSink();
  await Promise.all([produce, writer]);
  await producer.disconnect();
  await until(async () => sum(floeOffsets(await cat.loadTable(tid))) === total, 120000,
    `floe.offsets covering all ${total} records`);
  const md = await cat.loadTable(tid);
  const cur = md.snapshots.find((s) => s['snapshot-id'] === md['current-snapshot-id']);
  eq(Number(cur.summary['total-records']), total, 'total-records: every record once');
  eq(Object.keys(floeOffsets(md)).sort(), ['0', '1', '2'], 'partitions in floe.offsets');
  for (let i = 0; i < props; i++) eq(md.properties[`engine.k${i}`], String(i), `the writer's property k${i}`);
  assert(sink.exited() === null, 'the second sink is still running');
  sink.p.kill('SIGTERM');
  await until(() => sink.exited() !== null, 30000, 'the sink to stop on SIGTERM');
  eq(sink.exited(), '0', 'the sink\'s exit status on SIGTERM');
  console.log(`# ${md.snapshots.length} snapshots, ${props} property commits by the other writer`);
});

for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
rmSync(tmp, { recursive: true, force: true });
finish();
