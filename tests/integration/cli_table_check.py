# Helpers for test_cli_table (run with /usr/bin/python3).
#   gen PHASE OUTDIR         write per-partition kcat input files and expected.jsonl
#   committed HTTP TABLE     print "yes" when every partition of TABLE has
#                            committed == log_end > 0 in /admin/tables
#   compare EXPECTED SCAN T0 T1   check scan rows against what was produced
import base64, json, re, sys, urllib.request


def gen(phase, out):
    """Records for partitions 0 and 1.  Phase 1 fixes the shape; phase 2
    adds a top-level field and a nested one (older rows must read null)."""
    names = ['plain', 'quote " and \\ backslash', 'tab\tnewline\n', 'üñïçødé ✓', 'emoji 🚀', '']
    exp = []
    for p in (0, 1):
        lines = []
        start = 0 if phase == 1 else 7 + 3 * p
        for i in range(7 + 3 * p if phase == 1 else 4):
            n = start + i
            v = {
                'id': p * 1000 + n,
                'big': 2**53 + n if n % 2 else -(2**40) - n,
                'name': names[n % len(names)],
                'score': [1.5, -0.25, 1e-7, 12345.678, 0.1, 3.0][n % 6],
                'ok': n % 3 == 0,
                'tags': ['a', 'b'][: (n % 3)] if n else ['first'],
                'o': {'x': n / 4, 'y': n % 2 == 1, 'inner': {'z': 's%d' % n}},
                'nums': [[n, n + 1], []] if n % 2 else [[n]],
            }
            if n % 4 == 3:
                v['score'] = None
            if n % 5 == 4:
                del v['o']
            if phase == 2:
                v['added'] = 'new-%d' % n
                v.setdefault('o', {'x': 0.5, 'y': False, 'inner': {'z': 'n'}})['inner']['w'] = n
            key = 'k%d-%d' % (p, n)
            lines.append(key + '\t' + json.dumps(v, ensure_ascii=False))
            exp.append({'partition': p, 'offset': n, 'key': key, 'value': v})
        with open('%s/p%d.txt' % (out, p), 'w') as f:
            f.write('\n'.join(lines) + '\n')
    with open('%s/expected.jsonl' % out, 'a') as f:
        for e in exp:
            f.write(json.dumps(e) + '\n')


def committed(http, table):
    try:
        st = json.load(urllib.request.urlopen('http://%s/admin/tables' % http, timeout=5))
    except Exception:
        print('no')
        return
    for t in st['tables']:
        if t['table'] == table:
            ps = t['partitions']
            ok = ps and all(x['committed'] == x['log_end'] > 0 for x in ps)
            print('yes' if ok else 'no')
            return
    print('no')


def same(exp, got, path):
    """exp as produced (absent keys read null in the table), got as scanned."""
    if isinstance(exp, dict) or isinstance(got, dict):
        if not isinstance(got, dict):
            return '%s: expected an object, got %r' % (path, got)
        exp = exp if isinstance(exp, dict) else {}
        for k in exp:
            if k not in got:
                return '%s.%s missing' % (path, k)
        for k in got:
            why = same(exp.get(k), got[k], path + '.' + k)
            if why:
                return why
        return None
    if isinstance(exp, list):
        if not isinstance(got, list) or len(got) != len(exp):
            return '%s: %r != %r' % (path, exp, got)
        for i, (a, b) in enumerate(zip(exp, got)):
            why = same(a, b, '%s[%d]' % (path, i))
            if why:
                return why
        return None
    if isinstance(exp, bool) or isinstance(got, bool) or exp is None or got is None:
        return None if exp is got or exp == got and type(exp) == type(got) else '%s: %r != %r' % (path, exp, got)
    if isinstance(exp, (int, float)) and isinstance(got, (int, float)):
        return None if exp == got else '%s: %r != %r' % (path, exp, got)
    return None if exp == got else '%s: %r != %r' % (path, exp, got)


def compare(expected, scan, t0, t1):
    exp = {}
    for line in open(expected):
        e = json.loads(line)
        exp[(e['partition'], e['offset'])] = e
    seen = set()
    ts_re = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$')
    for n, line in enumerate(open(scan)):
        row = json.loads(line)
        k = row.pop('_kafka')
        pk = (k['partition'], k['offset'])
        if pk in seen:
            sys.exit('duplicate row %r' % (pk,))
        seen.add(pk)
        e = exp.get(pk)
        if not e:
            sys.exit('row %r was never produced' % (pk,))
        if k['key'] != e['key']:
            sys.exit('row %r: key %r != %r' % (pk, k['key'], e['key']))
        if k['headers'] != {'h1': base64.b64encode(b'v1').decode()}:
            sys.exit('row %r: headers %r' % (pk, k['headers']))
        ts = k['timestamp']
        if not ts_re.match(ts) or not (t0 <= ts[:19] <= t1):
            sys.exit('row %r: timestamp %r not within %s..%s' % (pk, ts, t0, t1))
        why = same(e['value'], row, 'row %r' % (pk,))
        if why:
            sys.exit(why)
    missing = set(exp) - seen
    if missing:
        sys.exit('%d produced records missing, e.g. %r' % (len(missing), sorted(missing)[:3]))
    print('%d rows equal' % len(seen))


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'gen':
        gen(int(sys.argv[2]), sys.argv[3])
    elif cmd == 'committed':
        committed(sys.argv[2], sys.argv[3])
    elif cmd == 'compare':
        compare(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
