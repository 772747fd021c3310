"""confluent-kafka-python 1.7 (Debian python3-confluent-kafka, librdkafka
2.0 underneath) against floe: admin create topic with configs and describe
configs, idempotent produce with keys and headers, consume in a group with
committed offsets."""
import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BROKER, TAG, step, check, eq, finish  # noqa: E402
from confluent_kafka import Producer, Consumer, TopicPartition, KafkaError  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic, ConfigResource  # noqa: E402

topic = "ckpy-" + TAG
group = "ckpy-group-" + TAG
N = 5000
admin = AdminClient({"bootstrap.servers": BROKER})


def create():
    fs = admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1,
                                       config={"retention.ms": "86400000", "table.namespace": "ns1"})],
                             request_timeout=15)
    for _t, f in fs.items():
        f.result(timeout=15)
    md = admin.list_topics(topic=topic, timeout=10)
    eq(len(md.topics[topic].partitions), 3, "partitions")


made = step("confluent_python_admin_create_topic", 30, create)


def describe():
    check(made, "needs the topic")
    fs = admin.describe_configs([ConfigResource("topic", topic)], request_timeout=15)
    for _r, f in fs.items():
        cfg = f.result(timeout=15)
        eq(cfg["retention.ms"].value, "86400000", "retention.ms")
        eq(cfg["table.namespace"].value, "ns1", "table.namespace")


step("confluent_python_admin_describe_configs", 30, describe)

msgs = [(("k%d" % i).encode(), None if i % 50 == 0 else ("value-%d-" % i).encode() * (1 + i % 20),
         [("i", str(i).encode())]) for i in range(N)]


def produce():
    errs = []
    p = Producer({"bootstrap.servers": BROKER, "enable.idempotence": True, "acks": "all",
                  "compression.type": "zstd", "linger.ms": 5})

    def dr(err, _m):
        if err is not None:
            errs.append(err)
    for k, v, h in msgs:
        p.produce(topic, key=k, value=v, headers=h, on_delivery=dr)
        p.poll(0)
    left = p.flush(30)
    eq(left, 0, "messages not delivered")
    eq(errs, [], "delivery errors")


produced = step("confluent_python_idempotent_produce_zstd", 40, produce)


def consume():
    check(produced, "needs the produced messages")
    c = Consumer({"bootstrap.servers": BROKER, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    c.subscribe([topic])
    got = {}
    while len(got) < N:
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                continue
            raise RuntimeError(str(m.error()))
        check(m.key() not in got, "duplicate %r" % m.key())
        got[m.key()] = (m.value(), m.headers())
    c.commit(asynchronous=False)
    parts = [TopicPartition(topic, p) for p in range(3)]
    committed = {tp.partition: tp.offset for tp in c.committed(parts, timeout=10)}
    ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(3)}
    c.close()
    for k, v, h in msgs:
        eq(got[k], (v, h), "message %r" % k)
    eq(committed, ends, "committed offsets vs high watermarks")
    eq(sum(ends.values()), N, "total end offsets (no duplicates)")


step("confluent_python_consume_in_group_and_commit", 60, consume)
finish()
