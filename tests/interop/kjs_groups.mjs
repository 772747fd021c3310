// kafkajs consumer groups against floe: two members share a topic and
// rebalance when the second joins and when one leaves; offsets committed
// by kafkajs are read back with admin.fetchOffsets; describe, list and
// delete the group.  Prints "ok - NAME" / "not ok - NAME: why" lines.
import kafkajs from 'kafkajs';
const { Kafka, logLevel } = kafkajs;
const broker = process.argv[2];
const kafka = new Kafka({ clientId: 'kjs-groups', brokers: [broker], logLevel: logLevel.NOTHING });
const topic = 'kjs-grp', groupId = `kjs-grp-${process.pid}-${Date.now()}`;
const N = 300;
let failed = 0;
const check = (name, got, want) => {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g === w) console.log(`ok - ${name}`);
  else { failed++; console.log(`not ok - ${name}: got ${g}, want ${w}`); }
};
const sleep = ms => new Promise(r => setTimeout(r, ms));
const until = async (cond, what) => { // a hang guard, not a measure
  for (let i = 0; i < 600 && !cond(); i++) await sleep(100);
  if (!cond()) throw new Error('timed out waiting for ' + what);
};

const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 4 }] });
const producer = kafka.producer();
await producer.connect();
const send = async (from, to) => {
  const messages = [];
  for (let i = from; i < to; i++) messages.push({ key: 'k' + i, value: String(i), partition: i % 4 });
  await producer.send({ topic, messages });
};
await send(0, N / 2);

const seen = new Map(); // value -> count
const owners = {};
const mk = name => {
  const c = kafka.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 200, rebalanceTimeout: 10000 });
  owners[name] = 0;
  return { c, name };
};
const start = async ({ c, name }) => {
  await c.connect();
  await c.subscribe({ topic, fromBeginning: true });
  await c.run({ eachMessage: async ({ message }) => {
    const v = message.value.toString();
    seen.set(v, (seen.get(v) || 0) + 1);
    owners[name]++;
  } });
};
const a = mk('a'), b = mk('b');
await start(a);
await until(() => seen.size >= N / 4, 'first messages');
await start(b);           // rebalance: b joins
await send(N / 2, N);
await until(() => seen.size >= (3 * N) / 4, 'more messages');
await a.c.disconnect();   // rebalance: a leaves (commits first)
await until(() => seen.size >= N, 'all messages');
await sleep(500);
await b.c.disconnect();
check('kafkajs_group_consumes_all', seen.size, N);
check('kafkajs_group_no_duplicates', [...seen.values()].filter(n => n > 1).length, 0);
check('kafkajs_both_members_worked', owners.a > 0 && owners.b > 0, true);

const offs = await admin.fetchOffsets({ groupId, topics: [topic] });
const parts = offs[0].partitions.map(p => [p.partition, Number(p.offset)]).sort((x, y) => x[0] - y[0]);
check('kafkajs_committed_offsets', parts, [[0, N / 4], [1, N / 4], [2, N / 4], [3, N / 4]]);
const groups = (await admin.listGroups()).groups.map(g => g.groupId);
check('kafkajs_list_groups', groups.includes(groupId), true);
const d = await admin.describeGroups([groupId]);
check('kafkajs_describe_empty', [d.groups[0].state, d.groups[0].members.length], ['Empty', 0]);
const del = await admin.deleteGroups([groupId]);
check('kafkajs_delete_group', del.map(r => r.errorCode), [0]);
const after = await admin.fetchOffsets({ groupId, topics: [topic] });
check('kafkajs_offsets_gone', after[0].partitions.map(p => Number(p.offset)), [-1, -1, -1, -1]);
await producer.disconnect();
await admin.disconnect();
process.exit(failed ? 1 : 0);
