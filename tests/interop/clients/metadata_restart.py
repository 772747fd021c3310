"""Topic metadata survives restarts (confluent-kafka-python admin):
  metadata_restart.py setup TOPIC    create with configs (incl. table.*),
                                     alter configs, add partitions, produce
  metadata_restart.py verify TOPIC   after a restart: partitions, configs and
                                     data are all still there
Also: a group's committed offsets, and a CreateTopics of __consumer_offsets
(the broker's own offsets log) refused without touching them."""
import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BROKER, step, check, eq, finish  # noqa: E402
from confluent_kafka import Producer, Consumer, TopicPartition, KafkaError, KafkaException  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic, NewPartitions, ConfigResource  # noqa: E402

admin = AdminClient({"bootstrap.servers": BROKER})
WANT = {"retention.ms": "3600000", "cleanup.policy": "delete", "max.message.bytes": "2000000",
        "table.namespace": "ns_restart", "table.value.converter": "json"}


def describe(topic):
    fs = admin.describe_configs([ConfigResource("topic", topic)], request_timeout=15)
    for _r, f in fs.items():
        cfg = f.result(timeout=15)
        return {k: cfg[k].value for k in WANT if k in cfg}


def partitions(topic):
    return len(admin.list_topics(topic=topic, timeout=10).topics[topic].partitions)


def setup(topic):
    def create():
        fs = admin.create_topics([NewTopic(topic, 2, 1, config={"retention.ms": "86400000",
                                                                   "table.namespace": "ns_restart"})],
                                 request_timeout=15)
        for f in fs.values():
            f.result(15)
    step("metadata_create_topic_with_configs", 30, create)

    def alter():
        # AlterConfigs (not incremental) replaces the whole set.
        r = ConfigResource("topic", topic, set_config=WANT)
        for f in admin.alter_configs([r], request_timeout=15).values():
            f.result(15)
        eq(describe(topic), WANT, "configs after alter")
    step("metadata_alter_configs", 30, alter)

    def grow():
        for f in admin.create_partitions([NewPartitions(topic, 4)], request_timeout=15).values():
            f.result(15)
        eq(partitions(topic), 4, "partitions after CreatePartitions")
    step("metadata_create_partitions", 30, grow)

    def produce():
        p = Producer({"bootstrap.servers": BROKER, "acks": "all"})
        for i in range(400):
            p.produce(topic, key=b"k%d" % i, value=b"v%d" % i, partition=i % 4)
        eq(p.flush(20), 0, "undelivered")
    step("metadata_produce_to_new_partitions", 30, produce)

    def commit():
        c = Consumer({"bootstrap.servers": BROKER, "group.id": "meta-" + topic, "enable.auto.commit": False})
        c.commit(offsets=[TopicPartition(topic, p, 10 + p) for p in range(4)], asynchronous=False)
        c.close()
        eq(committed(topic), {p: 10 + p for p in range(4)}, "committed offsets")
    step("metadata_group_commit", 30, commit)

    def reserved():
        f = admin.create_topics([NewTopic("__consumer_offsets", 1, 1)], request_timeout=15)["__consumer_offsets"]
        try:
            f.result(15)
        except KafkaException as e:
            eq(e.args[0].code(), KafkaError.TOPIC_EXCEPTION, "error code")
        else:
            raise AssertionError("a client created __consumer_offsets")
        eq(committed(topic), {p: 10 + p for p in range(4)}, "committed offsets after the refused create")
    step("metadata_offsets_topic_reserved", 30, reserved)


def committed(topic):
    c = Consumer({"bootstrap.servers": BROKER, "group.id": "meta-" + topic, "enable.auto.commit": False})
    got = {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, p) for p in range(4)], timeout=10)}
    c.close()
    return got


def verify(topic, label):
    step("metadata_partitions_after_%s" % label, 30, lambda: eq(partitions(topic), 4, "partitions"))
    step("metadata_configs_after_%s" % label, 30, lambda: eq(describe(topic), WANT, "configs"))

    def data():
        c = Consumer({"bootstrap.servers": BROKER, "group.id": "unused", "enable.auto.commit": False})
        wm = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in range(4)}
        c.close()
        eq(wm, {p: (0, 100) for p in range(4)}, "watermarks")
    step("metadata_data_after_%s" % label, 30, data)
    step("metadata_group_offsets_after_%s" % label, 30,
         lambda: eq(committed(topic), {p: 10 + p for p in range(4)}, "committed offsets"))


if __name__ == "__main__":
    if sys.argv[1] == "setup":
        setup(sys.argv[2])
    else:
        verify(sys.argv[2], sys.argv[3])
    finish()
