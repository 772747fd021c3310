#!/usr/bin/python3
"""bench/upsert: what upsert tables cost to write and to read.

One update-heavy change stream over KEYS keys (default 1,000,000; the first
argument sets it for a quicker run) of RECORDS records (default twice KEYS;
the second argument): the first KEYS records insert every key, then 80%
updates of a live key, 10% deletes, 10% inserts of a deleted key; ~130-byte
JSON values keyed by id.  Each table is turned on over its empty topic
(one AlterConfigs), and the stream is produced into it in UPSERT_ROUNDS (default 100) equal
parts, each waited for until the table has committed it: at least that
many commits (printed).  The ingest rate is the value bytes over the time
from the first record produced to the last committed, for
table.write.mode=append (every change a row: the physical reference),
upsert with position deletes (the key index under its default memory
bound, and again under UPSERT_SMALL_BOUND, 8MiB) and upsert with equality
deletes.  UPSERT_ROUNDS=0 instead produces the whole stream first and
turns the table on over it (one AlterConfigs): a catch-up, whose commit
count follows table.commit.interval.ms (UPSERT_COMMIT_MS).  Compaction is
off everywhere, so reads see what the writers wrote.  The key index's keys,
memory and disk bytes are read from the engine's status after each
position run.

Reads: DuckDB (tests/interop/duck_mor.mjs: the current snapshot's Parquet
files with its position and equality delete files applied as a
merge-on-read query) reads each upsert table and an append table holding
only the final rows (the mirror produced once more into another topic):
the issue's goal is position-mode reads within 1.2x of that table.  The
tables are read in turn, UPSERT_READS rounds (default 7; each read the best
of 3 runs of the query in one process), and each ratio is the median of
the rounds' ratios (a round's reads are seconds apart, so a shared
machine's drift cancels); min and max are printed too.  The equality
table before compaction, whose read takes minutes at 1M keys, is read once.  Then every
table is compacted as `floe table compact NAME` does on the running server
(its maintenance thread rewrites the data files with the delete files
applied and drops the delete files) and read again the same way.

Last line: upsert records=... keys=... value_mb=... append_mb_s=...
position_mb_s=... position_small_mb_s=... equality_mb_s=...
position_commits=... equality_commits=... index_mem_mb=... index_disk_mb=...
small_index_mem_mb=... small_index_disk_mb=... final_rows=... read_final_ms=...
read_position_ms=... read_equality_ms=... read_append_ms=... position_read_ratio=...
equality_read_ratio=... position_to_append_ratio=... read_final_after_ms=... read_position_after_ms=...
read_equality_after_ms=... position_after_ratio=... equality_after_ratio=..."""
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

KEYS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
RECORDS = int(sys.argv[2]) if len(sys.argv) > 2 else 2 * KEYS
COMMIT_MS = os.environ.get('UPSERT_COMMIT_MS', str(max(100, KEYS // 10000)))
SMALL_BOUND = os.environ.get('UPSERT_SMALL_BOUND', '8MiB')
READS = int(os.environ.get('UPSERT_READS', 7))
ROUNDS = int(os.environ.get('UPSERT_ROUNDS', 100))
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


def wait_committed(f, topic, records):
    while True:
        t = status(f).get(topic)
        if t and t['partitions'] and sum(p['committed'] for p in t['partitions']) >= records:
            return t
        if t and t['state'] != 'running':
            raise SystemExit('%s: %s %s' % (topic, t['state'], t.get('reason')))
        time.sleep(0.05)


def catch_up(f, admin, topic, configs, records):
    """The table turned on over a log of records: seconds until all are
    committed, and the table's status."""
    res = ConfigResource('topic', topic, set_config=dict(configs, **{'table.enable': 'true'}))
    t0 = time.monotonic()
    admin.alter_configs([res])[res].result(timeout=30)
    t = wait_committed(f, topic, records)
    return time.monotonic() - t0, t


def ingest_rounds(f, admin, topic, configs, changes):
    """The table on from the start and the stream produced in ROUNDS equal
    parts, each waited for until committed (so at least ROUNDS commits):
    seconds from the first record produced to the last committed, and the
    table's status."""
    res = ConfigResource('topic', topic, set_config=dict(configs, **{'table.enable': 'true'}))
    admin.alter_configs([res])[res].result(timeout=30)
    step = -(-len(changes) // ROUNDS)
    t0 = time.monotonic()
    for i in range(0, len(changes), step):
        produce(f, [topic], changes[i:i + step])
        wait_committed(f, topic, min(i + step, len(changes)))
    return time.monotonic() - t0, status(f)[topic]


def duck_ms(f, table, runs=3):
    loc = os.path.join(f.dir, 'warehouse', 'default', table)
    r = subprocess.run(['node', 'duck_mor.mjs', loc, '--count=%d' % runs], cwd=INTEROP,
                       capture_output=True,
                       text=True, timeout=1800, check=True)
    stats = dict(w.split('=') for w in r.stderr.split() if '=' in w)
    return float(stats['ms']), int(stats['rows']), stats


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def compact(f, table):
    """`floe table compact` against the running server; seconds it took."""
    t0 = time.monotonic()
    r = subprocess.run([os.environ['FLOE_BIN'], 'table', 'compact', 'default.' + table,
                        '--http', f.http, '--data-dir', f.dir], capture_output=True, text=True,
                       timeout=3600)
    if r.returncode:
        raise SystemExit('floe table compact %s: %s' % (table, r.stderr[-2000:]))
    return time.monotonic() - t0


def read_all(f, want, label, names, once=()):
    """Each table of names read in turn, READS rounds: median ms of each,
    and the median (min, max) of each round's ratio against the final
    rows' table (the first name); each of once (slow) read in the first
    round only.  want: the rows of each table."""
    ms = {t: [] for t in names + once}
    stats = {}
    for r in range(READS):
        for t in names + (once if r == 0 else ()):
            m, rows, stats[t] = duck_ms(f, t, 3 if t in names else 1)
            if rows != want[t]:
                raise SystemExit('%s: DuckDB reads %d rows, want %d' % (t, rows, want[t]))
            ms[t].append(m)
    out = {}
    for t in names + once:
        ratios = [a / b for a, b in zip(ms[t], ms['b_final'])]
        out[t] = (median(ms[t]), median(ratios))
        st = stats[t]
        print('DuckDB reads %-9s %s: %d rows, median %.1f ms (min %.1f, max %.1f), ratio to '
              'final %.2f (min %.2f, max %.2f); %s data files, %s row groups, %s posdel, %s eqdel '
              'files' % (t[2:], label, want[t], median(ms[t]), min(ms[t]), max(ms[t]),
                         median(ratios), min(ratios), max(ratios), st['data'], st['rg'],
                         st['posdel'], st['eqdel']), flush=True)
    return out


def index_stats(f, topic):
    ki = status(f)[topic].get('key_index') or {}
    return ki.get('memory_bytes', 0) / 1e6, ki.get('disk_bytes', 0) / 1e6, ki.get('keys', 0)


def main():
    changes, mirror, value_bytes = stream(random.Random(18))
    mb = value_bytes / 1e6
    f = Floe().start()
    try:
        admin = AdminClient({'bootstrap.servers': f.kafka})
        base = {'table.commit.interval.ms': COMMIT_MS, 'table.compaction.enable': 'false'}
        up = {'table.write.mode': 'upsert', 'table.id.columns': 'id', 'table.cdc.field': 'op'}
        kinds = {'b_append': {},
                 'b_position': dict(up, **{'table.upsert.delete.mode': 'position'}),
                 'b_position_small': dict(up, **{'table.upsert.delete.mode': 'position',
                                                 'table.upsert.index.memory.bytes': SMALL_BOUND}),
                 'b_equality': dict(up, **{'table.upsert.delete.mode': 'equality'}),
                 'b_final': {}}
        fs = admin.create_topics([NewTopic(t, 1, 1, config={'table.enable': 'false'})
                                  for t in kinds])
        for fut in fs.values():
            fut.result(timeout=30)
        streams = ['b_append', 'b_position', 'b_position_small', 'b_equality']
        t0 = time.monotonic()
        if not ROUNDS:
            produce(f, streams, changes)
        produce(f, ['b_final'], [(str(k).encode(), v.encode()) for k, v in mirror.items()])
        print('produced %s%d final rows in %.1f s' % (
            '' if ROUNDS else '%d records over %d keys (%.1f MB of values) to %d topics and ' % (
                RECORDS, KEYS, mb, len(streams)), len(mirror), time.monotonic() - t0), flush=True)
        rate, commits, idx = {}, {}, {}
        for t in streams:
            if ROUNDS:
                secs, st = ingest_rounds(f, admin, t, dict(base, **kinds[t]), changes)
            else:
                secs, st = catch_up(f, admin, t, dict(base, **kinds[t]), RECORDS)
            rate[t] = mb / secs
            commits[t] = st['commits']
            extra = ''
            if t.startswith('b_position'):
                idx[t] = index_stats(f, t)
                extra = '; key index: %d keys, %.1f MB in memory, %.1f MB on disk' % (
                    idx[t][2], idx[t][0], idx[t][1])
            print('%-15s %.1f MB/s (%.2f s, %d commits%s)' % (t[2:], rate[t], secs,
                                                             st['commits'], extra), flush=True)
        del changes
        catch_up(f, admin, 'b_final', base, len(mirror))
        want = {'b_final': len(mirror), 'b_position': len(mirror), 'b_equality': len(mirror),
                'b_append': RECORDS}
        # b_append: every change a row (deletes too), about as many rows as the position
        # table's data files hold before its deletes apply
        reads = read_all(f, want, 'before compaction', ('b_final', 'b_position', 'b_append'),
                         once=('b_equality',))
        for t in ('b_final', 'b_position', 'b_equality'):
            print('floe table compact %s: %.1f s' % (t, compact(f, t)), flush=True)
        after = read_all(f, want, 'after compaction', ('b_final', 'b_position', 'b_equality'))
        print('upsert records=%d keys=%d value_mb=%.1f append_mb_s=%.1f position_mb_s=%.1f '
              'position_small_mb_s=%.1f equality_mb_s=%.1f position_commits=%d '
              'equality_commits=%d index_mem_mb=%.1f index_disk_mb=%.1f small_index_mem_mb=%.1f '
              'small_index_disk_mb=%.1f final_rows=%d read_final_ms=%.1f read_position_ms=%.1f '
              'read_equality_ms=%.1f read_append_ms=%.1f position_read_ratio=%.2f '
              'equality_read_ratio=%.2f position_to_append_ratio=%.2f read_final_after_ms=%.1f read_position_after_ms=%.1f read_equality_after_ms=%.1f '
              'position_after_ratio=%.2f equality_after_ratio=%.2f'
              % (RECORDS, KEYS, mb, rate['b_append'], rate['b_position'],
                 rate['b_position_small'], rate['b_equality'], commits['b_position'],
                 commits['b_equality'], idx['b_position'][0], idx['b_position'][1],
                 idx['b_position_small'][0], idx['b_position_small'][1], len(mirror),
                 reads['b_final'][0], reads['b_position'][0], reads['b_equality'][0],
                 reads['b_append'][0], reads['b_position'][1], reads['b_equality'][1],
                 reads['b_position'][0] / reads['b_append'][0], after['b_final'][0],
                 after['b_position'][0], after['b_equality'][0], after['b_position'][1],
                 after['b_equality'][1]))
    finally:
        f.stop()


main()
