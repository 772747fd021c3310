"""Iceberg tables of the filesystem (Hadoop-layout) catalog, as another
writer and as an auditor sees them, for tests: set table properties the way
any Iceberg tool does (a new vN.metadata.json published create-if-absent,
then version-hint.text), and measure what keeps a table bounded (metadata
folder, current metadata JSON, manifests of the current list, live data
files per partition tuple), reading the Avro manifests with python3-avro."""
import json
import os
import time
import warnings


def current(location):
    """(version, path, metadata dict) of the table's current metadata."""
    mdir = os.path.join(location, 'metadata')
    with open(os.path.join(mdir, 'version-hint.text')) as h:
        v = int(h.read().strip())
    path = os.path.join(mdir, 'v%d.metadata.json' % v)
    with open(path) as m:
        return v, path, json.load(m)


def set_table_properties(location, props, attempts=200):
    """Commit props (str -> str) into the table's properties as another
    writer would: vN+1 is created only if absent (another commit may win
    the race: then read again and retry)."""
    mdir = os.path.join(location, 'metadata')
    for _ in range(attempts):
        v, path, md = current(location)
        md.setdefault('properties', {}).update(props)
        now = int(time.time() * 1000)
        md.setdefault('metadata-log', []).append({'timestamp-ms': md.get('last-updated-ms', now),
                                                  'metadata-file': path})
        md['last-updated-ms'] = now
        tmp = os.path.join(mdir, '.props-%d.tmp' % os.getpid())
        with open(tmp, 'w') as out:
            json.dump(md, out)
        try:
            os.link(tmp, os.path.join(mdir, 'v%d.metadata.json' % (v + 1)))
        except FileExistsError:
            time.sleep(0.01)
            continue
        finally:
            os.unlink(tmp)
        with open(os.path.join(mdir, 'version-hint.text.tmp'), 'w') as h:
            h.write('%d\n' % (v + 1))
        os.replace(os.path.join(mdir, 'version-hint.text.tmp'),
                   os.path.join(mdir, 'version-hint.text'))
        return v + 1
    raise AssertionError('could not set the properties of %s' % location)


def _avro(path):
    from avro.datafile import DataFileReader
    from avro.io import DatumReader
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with open(path.replace('file://', '').replace('file:', ''), 'rb') as f:
            return list(DataFileReader(f, DatumReader()))


def figures(location):
    """What a table holds now: metadata folder bytes and files, current
    metadata JSON bytes, snapshots, manifests in the current list, live
    data files per partition tuple (max and total) and their bytes, live
    records."""
    mdir = os.path.join(location, 'metadata')
    folder = files = 0
    for n in os.listdir(mdir):
        try:  # a writer's temp file may go between the listing and the look
            folder += os.path.getsize(os.path.join(mdir, n))
            files += 1
        except FileNotFoundError:
            pass
    for _ in range(20):  # a commit may replace the current file meanwhile
        try:
            _, path, md = current(location)
            json_bytes = os.path.getsize(path)
            cur = [s for s in md.get('snapshots', [])
                   if s['snapshot-id'] == md.get('current-snapshot-id')]
            manifests = _avro(cur[0]['manifest-list']) if cur else []
            per_tuple, records, nbytes = {}, 0, 0
            for m in manifests:
                for e in _avro(m['manifest_path']):
                    if e['status'] == 2:
                        continue
                    key = json.dumps(e['data_file'].get('partition'), sort_keys=True, default=str)
                    per_tuple[key] = per_tuple.get(key, 0) + 1
                    records += e['data_file']['record_count']
                    nbytes += e['data_file']['file_size_in_bytes']
            break
        except (FileNotFoundError, IndexError):
            time.sleep(0.05)
    else:
        raise AssertionError('cannot read the current state of %s' % location)
    return {'metadata_folder_bytes': folder, 'metadata_files': files,
            'metadata_json_bytes': json_bytes, 'snapshots': len(md.get('snapshots', [])),
            'manifests': len(manifests), 'files_per_partition': max(per_tuple.values() or [0]),
            'live_files': sum(per_tuple.values()), 'live_bytes': nbytes, 'records': records}
