"""kafka-python 2.0 (Debian python3-kafka) against floe: admin create topic
(table.* configs included; duplicates and unknown configs refused) and
describe configs, produce with keys and headers, consume in a group with
committed offsets, list offsets, AlterConfigs (replaces the whole set),
add partitions, delete the topic."""
import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BROKER, TAG, step, check, eq, finish  # noqa: E402
from kafka import KafkaProducer, KafkaConsumer, KafkaAdminClient, TopicPartition  # noqa: E402
from kafka.admin import NewTopic, NewPartitions, ConfigResource, ConfigResourceType  # noqa: E402
from kafka.errors import TopicAlreadyExistsError, InvalidConfigurationError  # noqa: E402

topic = "kpy-" + TAG
group = "kpy-group-" + TAG
N = 2000
admin = [None]


def create():
    admin[0] = KafkaAdminClient(bootstrap_servers=BROKER, client_id="floe-it", request_timeout_ms=10000)
    r = admin[0].create_topics([NewTopic(topic, 2, 1, topic_configs={"retention.ms": "86400000",
                                                                    "table.partition.by": "day(ts)"})])
    for t, code, _msg in r.topic_errors:
        eq(code, 0, "create error for " + t)


made = step("kafka_python_admin_create_topic", 30, create)


def create_errors():
    check(made, "needs the topic")
    try:
        admin[0].create_topics([NewTopic(topic, 1, 1)])
        raise AssertionError("a second create of the topic was accepted")
    except TopicAlreadyExistsError:
        pass
    try:
        admin[0].create_topics([NewTopic(topic + "-bad", 1, 1, topic_configs={"no.such.config": "1"})])
        raise AssertionError("a create with an unknown config was accepted")
    except InvalidConfigurationError:
        pass
    check(topic + "-bad" not in admin[0].list_topics(), "the refused topic exists")


step("kafka_python_admin_create_errors", 30, create_errors)


def configs():
    """The topic's configs as DescribeConfigs (all of them) shows them."""
    r = admin[0].describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    res = r[0].resources[0]  # (error_code, error_message, type, name, entries)
    eq(res[0], 0, "describe error code")
    return {e[0]: e[1] for e in res[4]}


def describe():
    check(made, "needs the topic")
    vals = configs()
    eq((vals.get("retention.ms"), vals.get("table.partition.by")), ("86400000", "day(ts)"), "configs set")
    eq(vals.get("segment.bytes"), "1073741824", "a default")


step("kafka_python_admin_describe_configs", 30, describe)

msgs = [(("k%d" % i).encode(), ("v%d-" % i).encode() + bytes(range(256))[: i % 256],
         [("i", str(i).encode()), ("n", b"" if i % 3 == 0 else b"x")]) for i in range(N)]


def produce():
    p = KafkaProducer(bootstrap_servers=BROKER, acks="all", linger_ms=5, compression_type="gzip")
    futs = [p.send(topic, key=k, value=v, headers=h) for k, v, h in msgs]
    p.flush(20)
    for f in futs:
        f.get(timeout=10)
    p.close(5)


produced = step("kafka_python_produce_gzip", 40, produce)


def consume():
    check(produced, "needs the produced messages")
    c = KafkaConsumer(topic, bootstrap_servers=BROKER, group_id=group, auto_offset_reset="earliest",
                      enable_auto_commit=False, consumer_timeout_ms=20000, fetch_max_wait_ms=200)
    got = {}
    for m in c:
        got[m.key] = (m.value, [(a, b) for a, b in m.headers])
        if len(got) >= N:
            break
    c.commit()
    parts = [TopicPartition(topic, p) for p in (0, 1)]
    ends = c.end_offsets(parts)
    committed = {tp.partition: c.committed(tp) for tp in parts}
    c.close()
    eq(len(got), N, "messages consumed")
    for k, v, h in msgs:
        eq(got[k][0], v, "value of %r" % k)
        eq(got[k][1], h, "headers of %r" % k)
    eq(committed, {tp.partition: ends[tp] for tp in parts}, "committed offsets vs end offsets")
    eq(sum(ends.values()), N, "end offsets total")


step("kafka_python_consume_in_group_and_commit", 60, consume)


def groups():
    check(produced, "needs the group")
    names = [g[0] for g in admin[0].list_consumer_groups()]
    check(group in names, "group %s not in %r" % (group, names[:10]))
    offs = admin[0].list_consumer_group_offsets(group)
    eq(sum(o.offset for o in offs.values()), N, "sum of committed offsets")


step("kafka_python_admin_list_groups_and_offsets", 30, groups)


def list_offsets():
    check(produced, "needs the produced messages")
    c = KafkaConsumer(bootstrap_servers=BROKER)
    parts = [TopicPartition(topic, p) for p in (0, 1)]
    beg, end = c.beginning_offsets(parts), c.end_offsets(parts)
    c.close()
    eq(sorted(beg.values()), [0, 0], "beginning offsets")
    eq(sum(end.values()), N, "end offsets total")


step("kafka_python_list_offsets", 30, list_offsets)


def alter():
    check(made, "needs the topic")
    admin[0].alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={"retention.ms": "7200000"})])
    vals = configs()
    eq(vals.get("retention.ms"), "7200000", "retention.ms after alter")
    # AlterConfigs (not incremental) replaces the whole set
    check("table.partition.by" not in vals, "table.partition.by survived a full-set AlterConfigs")


step("kafka_python_admin_alter_configs_replaces_the_set", 30, alter)


def grow_and_delete():
    check(made, "needs the topic")
    admin[0].create_partitions({topic: NewPartitions(total_count=5)})
    c = KafkaConsumer(bootstrap_servers=BROKER)
    eq(c.partitions_for_topic(topic), {0, 1, 2, 3, 4}, "partitions after CreatePartitions")
    c.close()
    admin[0].delete_topics([topic])
    check(topic not in admin[0].list_topics(), "the topic is still listed")


step("kafka_python_admin_create_partitions_and_delete_topic", 30, grow_and_delete)
if admin[0]:
    admin[0].close()
finish()
