// kafkajs 2.2 reads partition 0 of a topic from the beginning in a fresh
// consumer group until it has seen offset END-1 (argv: TOPIC END), and
// prints one JSON line per record: {"o": offset, "k": key, "v": value or
// null}.  For tests that compare what several clients read (compacted
// topics: gaps, empty batches).  Exit status 1 when it times out (30 s).
import kafkajs from 'kafkajs';
import { broker, tag } from './common.mjs';

const [topic, endArg] = process.argv.slice(2);
const end = Number(endArg);
const { Kafka, logLevel } = kafkajs;
const kafka = new Kafka({ clientId: 'floe-dump', brokers: [broker], logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({ groupId: `dump-${tag}`, sessionTimeout: 10000 });
const timer = setTimeout(() => { console.error('kafkajs_dump: timed out'); process.exit(1); }, 30000);
await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
await new Promise((resolve) => {
  if (end <= 0) resolve();
  consumer.run({
    eachMessage: async ({ message }) => {
      const o = Number(message.offset);
      console.log(JSON.stringify({ o, k: message.key && message.key.toString(),
        v: message.value === null ? null : message.value.toString() }));
      if (o >= end - 1) resolve();
    },
  });
});
await consumer.disconnect();
clearTimeout(timer);
