// @confluentinc/kafka-javascript 1.10 (librdkafka 2.15 inside, modern API
// versions) against floe, through its KafkaJS-compatible API: admin create
// topics with configs and metadata, produce, consume in a group with
// committed offsets, idempotent producer, describe/list groups, delete
// records.  (Its admin has no describeConfigs; kafkajs covers that.)
import ckjs from '@confluentinc/kafka-javascript';
import { broker, tag, step, assert, eq, until, finish } from './common.mjs';

const { Kafka, logLevel } = ckjs.KafkaJS;
const kafka = new Kafka({ kafkaJS: { brokers: [broker], clientId: 'floe-it-ckjs', logLevel: logLevel.NOTHING } });
const topic = `ckjs-${tag}`;
const idemTopic = `ckjs-idem-${tag}`;
const N = 3000;
const admin = kafka.admin();

const made = await step('ckjs_admin_create_topics_with_configs', 30, async () => {
  await admin.connect();
  const created = await admin.createTopics({ topics: [
    { topic, numPartitions: 3, replicationFactor: 1,
      configEntries: [{ name: 'retention.ms', value: '604800000' }, { name: 'table.value.converter', value: 'json' }] },
    { topic: idemTopic, numPartitions: 1, replicationFactor: 1 },
  ] });
  assert(created === true, `createTopics returned ${created}`);
  const md = await admin.fetchTopicMetadata({ topics: [topic, idemTopic] });
  eq(Object.fromEntries(md.map((t) => [t.name, t.partitions.length])), { [topic]: 3, [idemTopic]: 1 }, 'partitions');
  const names = await admin.listTopics();
  assert(names.includes(topic) && names.includes(idemTopic), 'listTopics misses the new topics');
});

const msgs = [];
for (let i = 0; i < N; i++) {
  msgs.push({ key: `k${i}`, value: `ckjs ${i} ${'y'.repeat(i % 500)}`, headers: { idx: String(i) } });
}

const produced = await step('ckjs_produce', 40, async () => {
  assert(made, 'needs the topics');
  const p = kafka.producer({ kafkaJS: { acks: -1, compression: ckjs.KafkaJS.CompressionTypes.LZ4 } });
  await p.connect();
  // (send() converts the message objects in place: give it copies.)
  for (let i = 0; i < N; i += 500) {
    await p.send({ topic, messages: msgs.slice(i, i + 500).map((m) => ({ ...m, headers: { ...m.headers } })) });
  }
  await p.disconnect();
});

const group = `ckjs-group-${tag}`;
await step('ckjs_consume_in_group', 60, async () => {
  assert(produced, 'needs the produced messages');
  const c = kafka.consumer({ kafkaJS: { groupId: group, fromBeginning: true, autoCommit: true,
    autoCommitInterval: 100 } });
  await c.connect();
  await c.subscribe({ topics: [topic] });
  const seen = new Map();
  let dup = 0;
  await c.run({ eachMessage: async ({ message }) => {
    const k = message.key.toString();
    if (seen.has(k)) dup++;
    seen.set(k, { v: message.value.toString(), h: message.headers.idx.toString() });
  } });
  await until(() => seen.size >= N, 50000, `${N} messages (have ${seen.size})`);
  await c.commitOffsets();
  await c.disconnect();
  eq(dup, 0, 'duplicates');
  for (let i = 0; i < N; i++) {
    const m = seen.get(`k${i}`);
    assert(m, `missing k${i}`);
    eq([m.v, m.h], [msgs[i].value, String(i)], `message k${i}`);
  }
});

await step('ckjs_committed_offsets_match_end_offsets', 20, async () => {
  assert(produced, 'needs the produced messages');
  const ends = await admin.fetchTopicOffsets(topic);
  const committed = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  eq(Object.fromEntries(committed[0].partitions.map((p) => [p.partition, String(p.offset)])),
    Object.fromEntries(ends.map((e) => [e.partition, String(e.high)])), 'committed vs high watermarks');
  eq(ends.reduce((s, e) => s + Number(e.high), 0), N, 'messages in the topic');
});

await step('ckjs_list_and_describe_groups', 20, async () => {
  const l = await admin.listGroups();
  assert(l.groups.some((g) => g.groupId === group), `group ${group} not listed`);
  const d = await admin.describeGroups([group]);
  eq(d.groups[0].groupId, group, 'described group');
  eq(d.groups[0].protocolType, 'consumer', 'protocol type');
});

await step('ckjs_idempotent_producer', 60, async () => {
  assert(made, 'needs the topics');
  const p = kafka.producer({ kafkaJS: { idempotent: true, acks: -1 } });
  await p.connect();
  const M = 2000;
  for (let i = 0; i < M; i += 100) {
    const batch = [];
    for (let j = i; j < i + 100; j++) batch.push({ key: `i${j}`, value: String(j) });
    await p.send({ topic: idemTopic, messages: batch });
  }
  await p.disconnect();
  const offs = await admin.fetchTopicOffsets(idemTopic);
  eq(Number(offs[0].high), M, 'end offset after idempotent produce');
  const c = kafka.consumer({ kafkaJS: { groupId: `ckjs-idem-group-${tag}`, fromBeginning: true } });
  await c.connect();
  await c.subscribe({ topics: [idemTopic] });
  const vals = [];
  await c.run({ eachMessage: async ({ message }) => { vals.push(Number(message.value.toString())); } });
  await until(() => vals.length >= M, 40000, `${M} idempotent messages (have ${vals.length})`);
  await c.disconnect();
  eq(vals.length, M, 'count');
  for (let j = 0; j < M; j++) if (vals[j] !== j) throw new Error(`position ${j} holds ${vals[j]}`);
});

await step('ckjs_delete_records', 20, async () => {
  assert(made, 'needs the topics');
  await admin.deleteTopicRecords({ topic: idemTopic, partitions: [{ partition: 0, offset: '500' }] });
  const offs = await admin.fetchTopicOffsets(idemTopic);
  eq([String(offs[0].low), String(offs[0].high)], ['500', '2000'], 'low/high after DeleteRecords');
});

await step('ckjs_delete_topic', 20, async () => {
  await admin.deleteTopics({ topics: [idemTopic] });
  await until(async () => !(await admin.listTopics()).includes(idemTopic), 10000, 'topic gone from listTopics');
});

await admin.disconnect().catch(() => {});
finish();
