"""Imported by Python integration tests: run `floe serve` on free ports."""
import atexit
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time


class Floe:
    def __init__(self, data_dir=None, extra=()):
        if not data_dir:
            data_dir = tempfile.mkdtemp(prefix='floe-py.')
            atexit.register(shutil.rmtree, data_dir, True)
            atexit.register(lambda p=data_dir + '.log': os.path.exists(p) and os.unlink(p))
        self.dir = data_dir
        self.extra = list(extra)
        self.proc = None

    def start(self):
        self.log = open(self.dir + '.log', 'ab')
        self.proc = subprocess.Popen(
            [os.environ['FLOE_BIN'], 'serve', '--data-dir', self.dir, '--listen', '127.0.0.1:0',
             '--http', '127.0.0.1:0'] + self.extra,
            stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode()
        m = re.match(r'floe ready kafka=(\S+) http=(\S+) data=', line)
        if not m:
            raise RuntimeError('no ready line: %r' % line)
        self.kafka, self.http = m.group(1), m.group(2)
        host, port = self.kafka.rsplit(':', 1)
        self.addr = (host, int(port))
        return self

    def stop(self, sig=signal.SIGTERM):
        if self.proc:
            self.proc.send_signal(sig)
            rc = self.proc.wait(30)
            self.proc = None
            self.log.close()
            return rc
        return 0

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


class Tests:
    def __init__(self):
        self.failed = 0

    def run(self, name, fn):
        try:
            fn()
            print('ok - %s' % name, flush=True)
        except Exception as e:  # report and go on
            self.failed += 1
            print('not ok - %s: %s' % (name, repr(e).replace('\n', ' ')[:300]), flush=True)
