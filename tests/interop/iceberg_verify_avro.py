# Decode every manifest and manifest list of the given tables with
# python3-avro (Debian) and check header keys and field-id attributes.
# argv: table metadata folders.  Prints ok / not ok lines.
import json, os, sys, warnings
warnings.simplefilter("ignore")
import avro.datafile, avro.io

def field_ids(schema):
    out = {}
    def walk(s):
        if isinstance(s, list):
            for x in s: walk(x)
        elif isinstance(s, dict):
            if s.get('type') == 'record':
                for f in s['fields']:
                    out[f['name']] = f.get('field-id'); walk(f['type'])
            elif s.get('type') == 'array': walk(s['items'])
            elif isinstance(s.get('type'), (dict, list)): walk(s['type'])
    walk(schema)
    return out

failed = 0
for mdir in sys.argv[1:]:
    name = os.path.basename(os.path.dirname(mdir.rstrip('/')))
    bad = None; n = 0
    for f in sorted(os.listdir(mdir)):
        if not f.endswith('.avro'): continue
        try:
            with open(os.path.join(mdir, f), 'rb') as fh:
                r = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
                meta = {k: v for k, v in r.meta.items()}
                recs = list(r)
                r.close()
            schema = json.loads(meta['avro.schema'])
            ids = field_ids(schema)
            if schema['name'] == 'manifest_file':
                need = ['snapshot-id', 'sequence-number', 'format-version']
                want = {'manifest_path': 500, 'added_snapshot_id': 503, 'partitions': 507, 'content': 517}
            else:
                need = ['schema', 'schema-id', 'partition-spec', 'partition-spec-id', 'format-version', 'content']
                want = {'status': 0, 'data_file': 2, 'file_path': 100, 'partition': 102, 'record_count': 103,
                        'lower_bounds': 125, 'equality_ids': 135}
                for rec in recs:
                    if rec['data_file']['file_path'] is None: bad = f + ': null path'
            for k in need:
                if k not in meta: bad = '%s: no header %s' % (f, k)
            for k, v in want.items():
                if ids.get(k) != v: bad = '%s: %s has field-id %s' % (f, k, ids.get(k))
            n += 1
        except Exception as e:
            bad = '%s: %r' % (f, e)
    if bad:
        failed += 1
        print('not ok - python3-avro %s: %s' % (name, bad))
    else:
        print('ok - python3-avro %s (%d files)' % (name, n))
sys.exit(1 if failed else 0)
