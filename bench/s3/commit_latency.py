#!/usr/bin/python3
"""bench/s3, part 2: commit latency of a table topic at a 1 s commit interval
with the warehouse on S3 (the tests' radosgw) against the same on local disk.

For each side, floe serve runs with table.commit.interval.ms=1000 while a
confluent_kafka producer sends FLOE_S3_COMMIT_RATE (2000) JSON records a
second for FLOE_S3_COMMIT_SECS (30) seconds; every commit's
last_commit_latency_ms is sampled from /admin/tables.
Last line: s3_commit local_p50_ms=... local_p99_ms=... s3_p50_ms=...
s3_p99_ms=... commits=...  (needs FLOE_BIN and FLOE_ROOT)"""
import json
import os
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.environ['FLOE_ROOT'], 'tests', 'integration'))
from floe_serve import Floe, temp_dir  # noqa: E402
from s3_server import S3Server  # noqa: E402

RATE = int(os.environ.get('FLOE_S3_COMMIT_RATE', 2000))
SECS = float(os.environ.get('FLOE_S3_COMMIT_SECS', 30))


def tables(f):
    with urllib.request.urlopen('http://%s/admin/tables' % f.http, timeout=10) as r:
        return json.load(r)['tables']


def run(name, extra):
    from confluent_kafka import Producer
    from kafka.admin import KafkaAdminClient, NewTopic
    f = Floe(temp_dir('floe-s3b.'), extra).start()
    try:
        a = KafkaAdminClient(bootstrap_servers=f.kafka)
        a.create_topics([NewTopic('lat', 2, 1, topic_configs={
            'table.enable': 'true', 'table.commit.interval.ms': '1000'})])
        a.close()
        stop = threading.Event()

        def produce():
            p = Producer({'bootstrap.servers': f.kafka, 'linger.ms': 20, 'log_level': 0})
            n, t0 = 0, time.monotonic()
            while not stop.is_set():
                for _ in range(RATE // 20):
                    p.produce('lat', json.dumps({'id': n, 'name': 'r%d' % n, 'v': n * 0.5}).encode())
                    n += 1
                p.poll(0)
                time.sleep(max(0, t0 + n / RATE - time.monotonic()))
            p.flush(30)

        th = threading.Thread(target=produce)
        th.start()
        lat, seen, t0 = [], 0, time.monotonic()
        while time.monotonic() - t0 < SECS:
            for t in tables(f):
                if t['topic'] == 'lat' and t.get('commits', 0) > seen:
                    if seen:  # the first commit creates the table
                        lat.append(t['last_commit_latency_ms'])
                    seen = t['commits']
            time.sleep(0.05)
        stop.set()
        th.join(60)
        return lat
    finally:
        f.stop()


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else -1


def main():
    s3 = S3Server.start_or_skip('s3_commit')
    conf = os.path.join(temp_dir('floe-s3c.'), 'floe.conf')
    with open(conf, 'w') as fh:
        fh.write('warehouse = s3://%s/bench\ns3.endpoint = %s\ns3.region = %s\n'
                 's3.access-key-id = %s\ns3.secret-access-key = %s\ns3.path-style-access = true\n'
                 % (s3.bucket, s3.endpoint, s3.region, s3.key, s3.secret))
    local = run('local', [])
    remote = run('s3', ['--config', conf])
    print('# local: %d commits, s3: %d commits' % (len(local), len(remote)))
    print('s3_commit local_p50_ms=%d local_p99_ms=%d s3_p50_ms=%d s3_p99_ms=%d commits=%d'
          % (pct(local, .5), pct(local, .99), pct(remote, .5), pct(remote, .99),
             min(len(local), len(remote))))


main()
