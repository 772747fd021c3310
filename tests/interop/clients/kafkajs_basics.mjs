// kafkajs 2.2 against floe: admin createTopics with configs and
// describeConfigs, produce, consume in a group with committed offsets, and
// an idempotent producer.  Prints ok / not ok lines.
import kafkajs from 'kafkajs';
import { broker, tag, step, assert, eq, until, finish } from './common.mjs';

const { Kafka, logLevel, ConfigResourceTypes } = kafkajs;
const kafka = new Kafka({ clientId: 'floe-it', brokers: [broker], logLevel: logLevel.NOTHING,
  retry: { retries: 5, initialRetryTime: 100 } });
const topic = `kjs-${tag}`;
const idemTopic = `kjs-idem-${tag}`;
const N = 3000;
const admin = kafka.admin();

const made = await step('kafkajs_admin_create_topics_with_configs', 20, async () => {
  await admin.connect();
  const created = await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic, numPartitions: 3, replicationFactor: 1,
        configEntries: [
          { name: 'retention.ms', value: '604800000' },
          { name: 'cleanup.policy', value: 'delete' },
          { name: 'table.value.converter', value: 'json' },
        ] },
      { topic: idemTopic, numPartitions: 1, replicationFactor: 1 },
    ],
  });
  assert(created === true, `createTopics returned ${created}`);
  const md = await admin.fetchTopicMetadata({ topics: [topic, idemTopic] });
  const parts = Object.fromEntries(md.topics.map((t) => [t.name, t.partitions.length]));
  eq(parts, { [topic]: 3, [idemTopic]: 1 }, 'partition counts');
});

await step('kafkajs_admin_create_existing_topic_is_refused', 20, async () => {
  assert(made, 'needs the topics');
  const again = await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });
  assert(again === false, `createTopics of an existing topic returned ${again}, want false`);
});

await step('kafkajs_admin_describe_configs', 20, async () => {
  assert(made, 'needs the topics');
  const r = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic,
      configNames: ['retention.ms', 'cleanup.policy', 'table.value.converter'] }],
  });
  eq(r.resources[0].errorCode, 0, 'resource error code');
  const got = Object.fromEntries(r.resources[0].configEntries.map((e) => [e.configName, e.configValue]));
  eq(got, { 'retention.ms': '604800000', 'cleanup.policy': 'delete', 'table.value.converter': 'json' }, 'configs');
  // without configNames: every config, the topic's own ones among them
  const all = await admin.describeConfigs({ includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }] });
  const every = Object.fromEntries(all.resources[0].configEntries.map((e) => [e.configName, e.configValue]));
  eq([every['retention.ms'], every['table.value.converter']], ['604800000', 'json'], 'configs in the full set');
  assert(Object.keys(every).length > 3, `only ${Object.keys(every).length} configs in the full set`);
});

await step('kafkajs_admin_alter_configs', 20, async () => {
  assert(made, 'needs the topics');
  await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC,
    name: topic, configEntries: [{ name: 'retention.ms', value: '3600000' },
      { name: 'cleanup.policy', value: 'delete' }, { name: 'table.value.converter', value: 'json' }] }] });
  const r = await admin.describeConfigs({ includeSynonyms: false, resources: [
    { type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms'] }] });
  eq(r.resources[0].configEntries.map((e) => e.configValue), ['3600000'], 'retention.ms after alter');
});

// Messages with keys, values and headers, over 3 partitions by key.
const msgs = [];
for (let i = 0; i < N; i++) {
  msgs.push({ key: `k${i}`, value: `value ${i} ${'x'.repeat(i % 300)}`,
    headers: { idx: String(i), kind: i % 2 ? 'odd' : 'even' } });
}

const produced = await step('kafkajs_produce', 30, async () => {
  const p = kafka.producer({ allowAutoTopicCreation: false });
  await p.connect();
  for (let i = 0; i < N; i += 500) {
    const res = await p.send({ topic, acks: -1, messages: msgs.slice(i, i + 500) });
    for (const r of res) eq(r.errorCode, 0, 'produce error code');
  }
  await p.disconnect();
});

const group = `kjs-group-${tag}`;
await step('kafkajs_consume_in_group', 60, async () => {
  assert(produced, 'needs the produced messages');
  const c = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 500,
    maxWaitTimeInMs: 200 });
  await c.connect();
  await c.subscribe({ topic, fromBeginning: true });
  const seen = new Map();
  let dup = 0;
  await c.run({ autoCommit: true, autoCommitInterval: 100, eachMessage: async ({ partition, message }) => {
    const k = message.key.toString();
    if (seen.has(k)) dup++;
    seen.set(k, { v: message.value.toString(), h: Object.fromEntries(
      Object.entries(message.headers).map(([a, b]) => [a, b.toString()])), partition });
  } });
  await until(() => seen.size >= N, 45000, `${N} messages (have ${seen.size})`);
  await c.stop();
  await c.disconnect();
  eq(dup, 0, 'duplicates');
  for (let i = 0; i < N; i++) {
    const m = seen.get(`k${i}`);
    assert(m, `missing k${i}`);
    eq(m.v, msgs[i].value, `value of k${i}`);
    eq(m.h, msgs[i].headers, `headers of k${i}`);
  }
  const parts = new Set([...seen.values()].map((m) => m.partition));
  eq(parts.size, 3, 'partitions used by the key partitioner');
});

await step('kafkajs_committed_offsets_match_end_offsets', 20, async () => {
  assert(produced, 'needs the produced messages');
  const ends = await admin.fetchTopicOffsets(topic);
  const committed = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  const want = Object.fromEntries(ends.map((e) => [e.partition, e.high]));
  const got = Object.fromEntries(committed[0].partitions.map((p) => [p.partition, p.offset]));
  eq(got, want, 'committed offsets vs high watermarks');
  const total = ends.reduce((s, e) => s + Number(e.high) - Number(e.low), 0);
  eq(total, N, 'messages in the topic');
});

await step('kafkajs_idempotent_producer', 60, async () => {
  assert(made, 'needs the topics');
  const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await p.connect();
  const M = 2000;
  for (let i = 0; i < M; i += 100) {
    const batch = [];
    for (let j = i; j < i + 100; j++) batch.push({ key: `i${j}`, value: String(j) });
    await p.send({ topic: idemTopic, acks: -1, messages: batch });
  }
  await p.disconnect();
  const offs = await admin.fetchTopicOffsets(idemTopic);
  eq(Number(offs[0].high), M, 'end offset after idempotent produce');
  const c = kafka.consumer({ groupId: `kjs-idem-group-${tag}`, maxWaitTimeInMs: 200 });
  await c.connect();
  await c.subscribe({ topic: idemTopic, fromBeginning: true });
  const vals = [];
  await c.run({ eachMessage: async ({ message }) => { vals.push(Number(message.value.toString())); } });
  await until(() => vals.length >= M, 40000, `${M} idempotent messages (have ${vals.length})`);
  await c.stop();
  await c.disconnect();
  eq(vals.length, M, 'count');
  for (let j = 0; j < M; j++) if (vals[j] !== j) throw new Error(`position ${j} holds ${vals[j]}`);
});

await step('kafkajs_delete_topic', 20, async () => {
  assert(made, 'needs the topics');
  await admin.deleteTopics({ topics: [idemTopic], timeout: 5000 });
  const names = await admin.listTopics();
  assert(!names.includes(idemTopic), 'topic still listed after delete');
});

await admin.disconnect().catch(() => {});
finish();
