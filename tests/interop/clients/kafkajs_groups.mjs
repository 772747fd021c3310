// kafkajs consumer groups against floe: two members share a topic and
// rebalance when the second joins and when one leaves; offsets committed
// by kafkajs are read back with admin.fetchOffsets; describe, list and
// delete the group.  Prints ok / not ok lines.
import kafkajs from 'kafkajs';
import { broker, tag, step, assert, eq, until, sleep, finish } from './common.mjs';

const { Kafka, logLevel } = kafkajs;
const kafka = new Kafka({ clientId: 'kjs-groups', brokers: [broker], logLevel: logLevel.NOTHING });
const topic = `kjs-grp-${tag}`, groupId = `kjs-grp-${tag}`;
const N = 300;
const admin = kafka.admin();
const producer = kafka.producer();
const send = async (from, to) => {
  const messages = [];
  for (let i = from; i < to; i++) messages.push({ key: 'k' + i, value: String(i), partition: i % 4 });
  await producer.send({ topic, messages });
};

const seen = new Map(); // value -> count
const owners = {};
const member = (name) => {
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

// (the waits are hang guards, not measures)
const consumed = await step('kafkajs_group_consumes_all_through_rebalances', 180, async () => {
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 4 }] });
  await producer.connect();
  await send(0, N / 2);
  const a = member('a'), b = member('b');
  await start(a);
  await until(() => seen.size >= N / 4, 60000, 'first messages');
  await start(b);           // rebalance: b joins
  await send(N / 2, N);
  await until(() => seen.size >= (3 * N) / 4, 60000, 'more messages');
  await a.c.disconnect();   // rebalance: a leaves (commits first)
  await until(() => seen.size >= N, 60000, 'all messages');
  await sleep(500);
  await b.c.disconnect();
  eq(seen.size, N, 'messages seen');
});
await step('kafkajs_group_no_duplicates', 5, async () => {
  assert(consumed, 'needs the consumed messages');
  eq([...seen.values()].filter((n) => n > 1).length, 0, 'messages seen twice');
});
await step('kafkajs_both_members_worked', 5, async () => {
  assert(consumed, 'needs the consumed messages');
  assert(owners.a > 0 && owners.b > 0, `messages per member: ${JSON.stringify(owners)}`);
});
await step('kafkajs_committed_offsets', 20, async () => {
  assert(consumed, 'needs the consumed messages');
  const offs = await admin.fetchOffsets({ groupId, topics: [topic] });
  const parts = offs[0].partitions.map((p) => [p.partition, Number(p.offset)]).sort((x, y) => x[0] - y[0]);
  eq(parts, [[0, N / 4], [1, N / 4], [2, N / 4], [3, N / 4]], 'committed offsets');
});
await step('kafkajs_list_groups', 20, async () => {
  assert(consumed, 'needs the group');
  const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
  assert(groups.includes(groupId), `${groupId} not listed`);
});
await step('kafkajs_describe_empty', 20, async () => {
  assert(consumed, 'needs the group');
  const d = await admin.describeGroups([groupId]);
  eq([d.groups[0].state, d.groups[0].members.length], ['Empty', 0], 'state and members');
});
const deleted = await step('kafkajs_delete_group', 20, async () => {
  assert(consumed, 'needs the group');
  const del = await admin.deleteGroups([groupId]);
  eq(del.map((r) => r.errorCode), [0], 'error codes');
});
await step('kafkajs_offsets_gone', 20, async () => {
  assert(deleted, 'needs the deleted group');
  const after = await admin.fetchOffsets({ groupId, topics: [topic] });
  eq(after[0].partitions.map((p) => Number(p.offset)), [-1, -1, -1, -1], 'offsets after delete');
});
await producer.disconnect().catch(() => {});
await admin.disconnect().catch(() => {});
finish();
