"""`floe sink` workers for the integration tests (test_sink,
test_sink_upsert): start one with its YAML and wait for its ready line,
stop it with a signal, run one that must fail at start, and read a
table's committed offsets.  Every worker still alive when the test exits
is SIGKILLed."""
import atexit
import json
import os
import re
import subprocess
import time

from iceberg_fs import current

BIN = os.environ['FLOE_BIN']
_workers = []


class Sink:
    """One `floe sink` worker; its output goes to DIR/NAME.log."""

    def __init__(self, tmp, name, yaml_path):
        self.name, self.yaml = name, yaml_path
        self.log = os.path.join(tmp, name + '.log')
        self.proc = self.http = None

    def start(self):
        with open(self.log, 'ab') as log:
            at = log.tell()
            self.proc = subprocess.Popen([BIN, 'sink', '--config', self.yaml, '--http', '127.0.0.1:0'],
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        _workers.append(self)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(self.log, 'rb') as fh:
                fh.seek(at)
                m = re.search(rb'^floe sink ready http=(\S+)', fh.read(), re.M)
            if m:
                self.http = m.group(1).decode()
                return self
            if self.proc.poll() is not None:
                raise AssertionError('%s exited with %d before its ready line: %s'
                                     % (self.name, self.proc.returncode, tail(self.log)))
            time.sleep(0.05)
        raise AssertionError('%s: no ready line within 60s' % self.name)

    def stop(self, sig=15):
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            raise AssertionError('%s still ran 60s after signal %d' % (self.name, sig))
        return rc


@atexit.register
def _kill_workers():
    for w in _workers:
        if w.proc and w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait()


def tail(path, n=4):
    try:
        with open(path, errors='replace') as fh:
            return ' | '.join([l.strip() for l in fh if l.strip()][-n:])
    except OSError:
        return ''


def write_yaml(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, 'w') as fh:
        fh.write(text)
    return path


def run_sink(yaml_path, timeout=60):
    """floe sink that must fail at start: (exit status, stderr).  Its HTTP
    listener takes any free port, as a started worker's does: the default
    one (8182) is another lane's when both run this test at once."""
    r = subprocess.run([BIN, 'sink', '--config', yaml_path, '--http', '127.0.0.1:0'],
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stderr


def table_offsets(location):
    """floe.offsets of the latest snapshot that has them ({} when none)."""
    try:
        _, _, md = current(location)
    except (OSError, ValueError):
        return {}
    snaps = {s['snapshot-id']: s for s in md.get('snapshots', [])}
    sid = md.get('current-snapshot-id')
    while sid in snaps:
        s = snaps[sid]
        if 'floe.offsets' in s.get('summary', {}):
            return {int(k): v for k, v in json.loads(s['summary']['floe.offsets']).items()}
        sid = s.get('parent-snapshot-id')
    return {}


def wait_offsets(location, ends, timeout=120, sink=None, pause=0.2):
    """Until the table at location has committed up to ends ({partition:
    next offset}); fails after timeout seconds (None: never) or when sink
    (a Sink, optional) exits, naming the offsets, the ends and the sink's
    last log lines."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while table_offsets(location) != ends:
        why = None
        if sink and sink.proc.poll() is not None:
            why = '%s exited %d' % (sink.name, sink.proc.returncode)
        elif deadline is not None and time.monotonic() > deadline:
            why = 'not committed within %ds' % timeout
        if why:
            raise AssertionError('%s: table offsets %s, log ends %s%s'
                                 % (why, table_offsets(location), ends,
                                    '; ' + tail(sink.log) if sink else ''))
        time.sleep(pause)
