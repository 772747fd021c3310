#!/usr/bin/python3
"""bench/upsert: what upsert tables cost to write and to read.

One update-heavy change stream (UPSERT_RECORDS records, default 1,000,000,
over UPSERT_KEYS keys, default 200,000: the first KEYS records insert every
key, then 80% updates of a live key, 10% deletes, 10% inserts of a deleted
key; ~130-byte JSON values keyed by id) is
produced with confluent-kafka into three topics of one `floe serve`, each
with table.enable=false.  Then each topic in turn becomes a table (one
AlterConfigs) and the engine catches up on the whole log: the ingest rate is
the value bytes over the time from the alter to the last offset committed,
for table.write.mode=append (every change a row: the physical reference),
upsert with position deletes and upsert with equality deletes.  Commits
every table.commit.interval.ms (UPSERT_COMMIT_MS, 500); compaction off
everywhere, so reads see what the writers wrote.

Reads: DuckDB (tests/interop/duck_mor.mjs: the current snapshot's Parquet
files with its position and equality delete files applied as a
merge-on-read query) reads each upsert table and an append table holding
only the final rows (the mirror produced once more into a fourth topic):
the issue's goal is position-mode reads within 1.2x of that table.

Last line: upsert records=... keys=... value_mb=... append_mb_s=...
position_mb_s=... equality_mb_s=... position_commits=... equality_commits=...
final_rows=... read_final_ms=... read_position_ms=... read_equality_ms=...
position_read_ratio=... equality_read_ratio=..."""
import json
import os
import random
import subprocess
import sys
import time
import urllib.request

ROOT = os.environ['FLOE_ROOT']
sys.path.insert(0, os.path.join(ROOT, 'tests', 'integration'))
from floe_serve import Floe  # noqa: E402
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic  # noqa: E402

RECORDS = int(os.environ.get('UPSERT_RECORDS', 1000000))
KEYS = int(os.environ.get('UPSERT_KEYS', 200000))
COMMIT_MS = os.environ.get('UPSERT_COMMIT_MS', '500')
INTEROP = os.path.join(ROOT, 'tests', 'interop')


def status(f):
    with urllib.request.urlopen('http://%s/admin/tables' % f.http, timeout=30) as r:
        return {t['topic']: t for t in json.load(r)['tables']}


def produce(f, topics, changes):
    p = Producer({'bootstrap.servers': f.kafka, 'acks': 'all', 'linger.ms': 20,
                  'batch.size': 1 << 20, 'compression.type': 'lz4', 'log_level': 0})
    n = 0
    for key, value in changes:
        for t in topics:
            while True:
                try:
                    p.produce(t, value, key=key)
                    break
                except BufferError:
                    p.poll(0.05)
        n += 1
        if n % 10000 == 0:
            p.poll(0)
    assert p.flush(120) == 0


def stream(rnd):
    """The first KEYS records insert every key; then 80% updates of a live
    key, 10% deletes of one, 10% inserts (a deleted key again)."""
    live, pos, dead = [], {}, []
    out, mirror, nbytes = [], {}, 0
    for i in range(RECORDS):
        x = rnd.random()
        if i < KEYS:
            k, op = i, 'I'
        elif x < 0.8 or (x < 0.9 and len(live) < 2) or (x >= 0.9 and not dead):
            k, op = live[rnd.randrange(len(live))], 'U'
        elif x < 0.9:
            k, op = live[rnd.randrange(len(live))], 'D'
        else:
            k, op = dead.pop(rnd.randrange(len(dead))), 'I'
        if op == 'D':
            v = json.dumps({'id': k, 'op': 'D'})
            j = pos.pop(k)
            last = live.pop()
            if last != k:
                live[j] = last
                pos[last] = j
            dead.append(k)
            mirror.pop(k, None)
        else:
            v = json.dumps({'id': k, 'op': op, 'name': 'customer-%d' % k,
                            'email': 'c%d@example.com' % k, 'balance': rnd.randrange(1 << 30),
                            'seq': i, 'city': rnd.choice(['Oslo', 'Rome', 'Lima', 'Pune'])})
            if k not in pos:
                pos[k] = len(live)
                live.append(k)
            mirror[k] = v
        nbytes += len(v)
        out.append((str(k).encode(), v.encode()))
    return out, mirror, nbytes


def catch_up(f, admin, topic, configs, records):
    res = ConfigResource('topic', topic, set_config=dict(configs, **{'table.enable': 'true'}))
    t0 = time.monotonic()
    admin.alter_configs([res])[res].result(timeout=30)
    while True:
        t = status(f).get(topic)
        if t and t['partitions'] and sum(p['committed'] for p in t['partitions']) >= records:
            return time.monotonic() - t0, t
        if t and t['state'] != 'running':
            raise SystemExit('%s: %s %s' % (topic, t['state'], t.get('reason')))
        time.sleep(0.05)


def duck_ms(f, table):
    loc = os.path.join(f.dir, 'warehouse', 'default', table)
    best, rows = None, None
    for _ in range(5):
        r = subprocess.run(['node', 'duck_mor.mjs', loc], cwd=INTEROP, capture_output=True,
                           text=True, timeout=1800, check=True)
        stats = dict(w.split('=') for w in r.stderr.split() if '=' in w)
        ms = float(stats['ms'])
        best = ms if best is None else min(best, ms)
        rows = int(stats['rows'])
    return best, rows, stats


def main():
    changes, mirror, value_bytes = stream(random.Random(18))
    mb = value_bytes / 1e6
    f = Floe().start()
    try:
        admin = AdminClient({'bootstrap.servers': f.kafka})
        base = {'table.commit.interval.ms': COMMIT_MS, 'table.compaction.enable': 'false'}
        kinds = {'b_append': {},
                 'b_position': {'table.write.mode': 'upsert', 'table.id.columns': 'id',
                                'table.cdc.field': 'op', 'table.upsert.delete.mode': 'position'},
                 'b_equality': {'table.write.mode': 'upsert', 'table.id.columns': 'id',
                                'table.cdc.field': 'op', 'table.upsert.delete.mode': 'equality'},
                 'b_final': {}}
        fs = admin.create_topics([NewTopic(t, 1, 1, config={'table.enable': 'false'})
                                  for t in kinds])
        for fut in fs.values():
            fut.result(timeout=30)
        t0 = time.monotonic()
        produce(f, ['b_append', 'b_position', 'b_equality'], changes)
        produce(f, ['b_final'], [(str(k).encode(), v.encode()) for k, v in mirror.items()])
        print('produced %d records (%.1f MB of values) to 3 topics and %d final rows in %.1f s'
              % (RECORDS, mb, len(mirror), time.monotonic() - t0), flush=True)
        rate, commits = {}, {}
        for t in ('b_append', 'b_position', 'b_equality'):
            secs, st = catch_up(f, admin, t, dict(base, **kinds[t]), RECORDS)
            rate[t] = mb / secs
            commits[t] = st['commits']
            print('%-11s %.1f MB/s (%.2f s, %d commits)' % (t[2:], rate[t], secs, st['commits']),
                  flush=True)
        catch_up(f, admin, 'b_final', base, len(mirror))
        reads = {}
        for t in ('b_final', 'b_position', 'b_equality'):
            ms, rows, stats = duck_ms(f, t)
            if rows != len(mirror):
                raise SystemExit('%s: DuckDB reads %d rows, want %d' % (t, rows, len(mirror)))
            reads[t] = ms
            print('DuckDB reads %-9s %d rows in %.1f ms (best of 5; %s data, %s posdel, %s eqdel '
                  'files)' % (t[2:], rows, ms, stats['data'], stats['posdel'], stats['eqdel']),
                  flush=True)
        print('upsert records=%d keys=%d value_mb=%.1f append_mb_s=%.1f position_mb_s=%.1f '
              'equality_mb_s=%.1f position_commits=%d equality_commits=%d final_rows=%d '
              'read_final_ms=%.1f read_position_ms=%.1f read_equality_ms=%.1f '
              'position_read_ratio=%.2f equality_read_ratio=%.2f'
              % (RECORDS, KEYS, mb, rate['b_append'], rate['b_position'], rate['b_equality'],
                 commits['b_position'], commits['b_equality'], len(mirror), reads['b_final'],
                 reads['b_position'], reads['b_equality'],
                 reads['b_position'] / reads['b_final'], reads['b_equality'] / reads['b_final']))
    finally:
        f.stop()


main()
