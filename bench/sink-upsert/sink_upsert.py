"""`floe sink` memory with an upsert table's key index bounded or not.

A plain topic of floe's own broker ("an existing Kafka") gets KEYS inserts
keyed {"id": k} and KEYS/2 changes (updates, deletes); then three sinks,
one after another, each a fresh consumer group and warehouse, take the
whole backlog into one table:

- append: write_mode append, the same records as rows (no key index): the
  peer every upsert figure is set against;
- bounded: write_mode upsert, position deletes, state_dir, and
  upsert_index_memory_bytes SINK_UPSERT_BOUND (8MiB);
- unbounded: the same with upsert_index_memory_bytes 1TiB: the index all
  in memory, as `floe sink` kept it before it had a state_dir.

Each sink's peak RSS (VmHWM from /proc, sampled while it runs, the
process's own high-water mark at the end), its key index's memory and
disk bytes (/admin/tables) and its MB/s over the backlog's value bytes.
ratio: bounded index memory over unbounded index memory."""
import json
import os
import random
import re
import sys
import time
import urllib.request

ROOT = os.environ['FLOE_ROOT']
sys.path.insert(0, os.path.join(ROOT, 'tests', 'integration'))
from floe_serve import Floe, temp_dir  # noqa: E402
from sink_proc import Sink, tail, wait_offsets, write_yaml  # noqa: E402
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

KEYS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
BOUND = os.environ.get('SINK_UPSERT_BOUND', '8MiB')
TOPIC = 'cdc.bench'
TMP = temp_dir('floe-bench-sink-upsert.')


def produce(kafka):
    a = AdminClient({'bootstrap.servers': kafka})
    for fut in a.create_topics([NewTopic(TOPIC, 3, 1)]).values():
        fut.result(60)
    p = Producer({'bootstrap.servers': kafka, 'linger.ms': 50, 'batch.size': 1 << 20,
                  'compression.type': 'lz4', 'enable.idempotence': False, 'log_level': 0})
    rnd = random.Random(5)
    ends, size = {}, [0]

    def done(e, m):
        if e is None:
            ends[m.partition()] = max(ends.get(m.partition(), 0), m.offset() + 1)

    def send(k, v):
        b = json.dumps(v).encode()
        size[0] += len(b)
        while True:
            try:
                p.produce(TOPIC, b, key=json.dumps({'id': k}).encode(), on_delivery=done)
                return
            except BufferError:
                p.poll(0.1)
    for k in range(KEYS):
        send(k, {'id': k, 'op': 'I', 'name': 'customer %d' % k, 'n': rnd.randrange(1 << 40)})
    for _ in range(KEYS // 2):
        k = rnd.randrange(KEYS)
        send(k, {'id': k, 'op': 'D'} if rnd.random() < 0.2 else
             {'id': k, 'op': 'U', 'name': 'customer %d v2' % k, 'n': rnd.randrange(1 << 40)})
    if p.flush(600):
        raise SystemExit('producer: records left unsent')
    return ends, size[0]


def hwm(pid):
    with open('/proc/%d/status' % pid) as fh:
        return int(re.search(r'^VmHWM:\s+(\d+) kB', fh.read(), re.M).group(1)) * 1024


def run(kafka, name, table_yaml, ends):
    wh = os.path.join(TMP, name, 'warehouse')
    y = write_yaml(TMP, name + '.yaml',
                   'kafka:\n  bootstrap.servers: %s\n  group.id: bench-%s\n'
                   'catalog:\n  type: filesystem\n  warehouse: %s\n'
                   'state_dir: %s\nstatus_interval: 0\n'
                   'tables:\n  - topic: %s\n    table: cdc.bench\n    value_converter: json\n'
                   '    commit_interval: 2s\n%s'
                   % (kafka, name, wh, os.path.join(TMP, name, 'state'), TOPIC, table_yaml))
    s = Sink(TMP, name, y)
    t0 = time.monotonic()
    s.start()
    loc = os.path.join(wh, 'cdc', 'bench')
    wait_offsets(loc, ends, None, s, 0.25)
    secs = time.monotonic() - t0
    idx = {}
    with urllib.request.urlopen('http://%s/admin/tables' % s.http, timeout=30) as r:
        for t in json.load(r)['tables']:
            if t['table'] == 'cdc.bench':
                idx = t.get('key_index') or {}
    rss = hwm(s.proc.pid)
    if s.stop() != 0:
        raise SystemExit('%s: exit status after SIGTERM: %s' % (name, tail(s.log)))
    print('%-9s %7.1f s  peak RSS %7.1f MB  index %s' % (name, secs, rss / 1e6, idx), flush=True)
    return secs, rss, idx


def main():
    f = Floe().start()
    ends, size = produce(f.kafka)
    records = sum(ends.values())
    print('backlog: %d records, %.1f MB of values, %d keys' % (records, size / 1e6, KEYS))
    up = '    write_mode: upsert\n    id_columns: id\n    cdc_field: op\n'
    a = run(f.kafka, 'append', '', ends)
    b = run(f.kafka, 'bounded', up + '    upsert_index_memory_bytes: %s\n' % BOUND, ends)
    u = run(f.kafka, 'unbounded', up + '    upsert_index_memory_bytes: 1TiB\n', ends)
    f.stop()
    mb = size / 1e6
    print('sink-upsert keys=%d records=%d append_rss_mb=%.1f bounded_rss_mb=%.1f '
          'unbounded_rss_mb=%.1f bounded_index_mem_mb=%.1f bounded_index_disk_mb=%.1f '
          'unbounded_index_mem_mb=%.1f append_mb_s=%.1f bounded_mb_s=%.1f unbounded_mb_s=%.1f '
          'ratio=%.3f'
          % (KEYS, records, a[1] / 1e6, b[1] / 1e6, u[1] / 1e6, b[2]['memory_bytes'] / 1e6,
             b[2]['disk_bytes'] / 1e6, u[2]['memory_bytes'] / 1e6, mb / a[0], mb / b[0],
             mb / u[0], b[2]['memory_bytes'] / u[2]['memory_bytes']))


main()
