"""Durability against floe with confluent-kafka-python (librdkafka):
  durability.py create TOPIC              create the topic (2 partitions)
  durability.py setup TOPIC GROUP STATE   produce 1000 messages, commit group
                                          offsets part-way; write STATE (json)
  durability.py produce TOPIC ACKS        produce acks=all until killed; append
                                          "partition offset index" per ack to ACKS
  durability.py verify TOPIC GROUP STATE ACKS LABEL   after a restart (LABEL
     names it in the step names): every acknowledged message is there at
     its offset with its bytes, the offsets continue after the old end, the
     group offsets remain."""
import sys, os, json
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BROKER, step, check, eq, finish  # noqa: E402
from confluent_kafka import Producer, Consumer, TopicPartition, KafkaError  # noqa: E402

PARTS = 2


def value(i):
    return (b"durable-%d-" % i) * (1 + i % 40)


def producer():
    return Producer({"bootstrap.servers": BROKER, "acks": "all", "linger.ms": 2,
                     "message.timeout.ms": 10000})


def consumer(group):
    return Consumer({"bootstrap.servers": BROKER, "group.id": group, "enable.auto.commit": False,
                     "auto.offset.reset": "earliest", "enable.partition.eof": True,
                     "fetch.wait.max.ms": 100})


def read_all(topic, ends):
    """Read every partition from its start to ends[p]; return {(p, off): (key, value)}."""
    c = consumer("durability-reader-unused")
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTS)])
    got, done = {}, set(p for p in range(PARTS) if ends[p] == 0)
    while len(done) < PARTS:
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                if m.offset() >= ends[m.partition()]:
                    done.add(m.partition())
                continue
            raise RuntimeError(str(m.error()))
        got[(m.partition(), m.offset())] = (m.key(), m.value())
        if m.offset() + 1 >= ends[m.partition()]:
            done.add(m.partition())
    c.close()
    return got


def watermarks(topic):
    c = consumer("durability-wm-unused")
    r = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in range(PARTS)}
    c.close()
    return r


def create(topic):
    def run():
        from confluent_kafka.admin import AdminClient, NewTopic
        a = AdminClient({"bootstrap.servers": BROKER})
        for f in a.create_topics([NewTopic(topic, PARTS, 1)], request_timeout=15).values():
            f.result(15)
    step("durability_create_topic", 30, run)


def setup(topic, group, state):
    def run():
        p = producer()
        for i in range(1000):
            p.produce(topic, key=b"s%d" % i, value=value(i), partition=i % PARTS)
        eq(p.flush(20), 0, "undelivered")
        c = consumer(group)
        offs = [TopicPartition(topic, q, 100 + 37 * q) for q in range(PARTS)]
        c.commit(offsets=offs, asynchronous=False)
        got = {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, q) for q in range(PARTS)], timeout=10)}
        c.close()
        eq(got, {q: 100 + 37 * q for q in range(PARTS)}, "committed offsets before the crash")
        json.dump({"committed": got}, open(state, "w"))
    step("durability_setup_produce_and_commit", 40, run)


def produce(topic, acks, limit_s=90):
    """Runs until killed, or limit_s seconds so that it never outlives a test."""
    import time
    end = time.monotonic() + limit_s
    f = open(acks, "a", buffering=1)
    p = producer()
    i = 1000

    def dr(err, m):
        if err is None:
            f.write("%d %d %s\n" % (m.partition(), m.offset(), m.key().decode()[1:]))
    while time.monotonic() < end:
        try:
            p.produce(topic, key=b"m%d" % i, value=value(i), partition=i % PARTS, on_delivery=dr)
            i += 1
        except BufferError:
            p.poll(0.05)
        p.poll(0)


def verify(topic, group, state, acks, label):
    acked = []
    for line in open(acks):
        parts = line.split()
        if len(parts) == 3 and line.endswith("\n"):
            acked.append((int(parts[0]), int(parts[1]), int(parts[2])))
    print("# %d acknowledged messages before SIGKILL" % len(acked))
    wm = {}

    def all_there():
        check(len(acked) > 0, "nothing was acknowledged before the kill")
        wm.update(watermarks(topic))
        ends = {p: wm[p][1] for p in range(PARTS)}
        for p, off, _i in acked:
            check(off < ends[p], "acked offset %d on partition %d beyond end %d" % (off, p, ends[p]))
        got = read_all(topic, ends)
        for p, off, i in acked:
            m = got.get((p, off))
            check(m is not None, "acked message %d (p%d@%d) missing" % (i, p, off))
            eq(m, (b"m%d" % i, value(i)), "message at p%d@%d" % (p, off))
        for q in range(1000):  # the setup messages too
            p, off = q % PARTS, q // PARTS
            eq(got.get((p, off)), (b"s%d" % q, value(q)), "setup message at p%d@%d" % (p, off))
    step("durability_acked_messages_after_%s" % label, 90, all_there)

    def offsets_continue():
        check(wm, "needs the watermarks")
        p = producer()
        res = {}

        def dr(err, m):
            res[m.partition()] = (err, m.offset())
        for q in range(PARTS):
            p.produce(topic, key=b"after", value=b"after restart", partition=q, on_delivery=dr)
        eq(p.flush(20), 0, "undelivered")
        for q in range(PARTS):
            err, off = res[q]
            check(err is None, "produce after restart failed: %s" % err)
            eq(off, wm[q][1], "first offset after restart on partition %d" % q)
        maxacked = {}
        for q, off, _i in acked:
            maxacked[q] = max(maxacked.get(q, -1), off)
        for q, off in maxacked.items():
            check(res[q][1] > off, "offset %d reused on partition %d" % (res[q][1], q))
    step("durability_offsets_continue_after_%s" % label, 40, offsets_continue)

    def group_offsets():
        want = {int(k): v for k, v in json.load(open(state))["committed"].items()}
        c = consumer(group)
        got = {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, q) for q in range(PARTS)], timeout=10)}
        c.close()
        eq(got, want, "committed offsets after restart")
    step("durability_group_offsets_after_%s" % label, 30, group_offsets)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "create":
        create(sys.argv[2])
    elif mode == "setup":
        setup(*sys.argv[2:5])
    elif mode == "produce":
        produce(*sys.argv[2:4])
    elif mode == "verify":
        verify(*sys.argv[2:7])
    finish()
