"""The Python side of the integration-test harness.  lib.sh (shell) and
tests/unit/floe_proc.c (C) are the other two; all three run `floe serve` the
same way: free ports (port 0), a bounded wait for its line "floe ready
kafka=HOST:PORT http=HOST:PORT data=DIR" (FLOE_READY_TIMEOUT seconds,
default 60) that reports floe's last log lines when it exits first, SIGTERM
with a SIGKILL after FLOE_STOP_TIMEOUT seconds (60), and a SIGKILL when the
test exits, however it exits.

Importing it also keeps a test honest, as lib.sh does for bash: an uncaught
exception (a client library that does not import, a floe that never gets
ready), one in a thread, or a SIGTERM/SIGINT prints "not ok - TEST: why";
floe's last log lines are shown when anything failed; and a test that
printed a "not ok" line exits non-zero.

    f = Floe().start()                  # or Floe(DIR, ['--config', FILE])
    T = Tests()
    T.run('name_in_one_word', fn)       # "ok - name" or "not ok - name: why"
    T.finish()                          # exit status 1 if a test failed
"""
import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

READY_TIMEOUT = float(os.environ.get('FLOE_READY_TIMEOUT', '60'))
STOP_TIMEOUT = float(os.environ.get('FLOE_STOP_TIMEOUT', '60'))
_SCRIPT = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] not in ('', '-', '-c') else 'test'
_running = []    # Floe instances whose process may be alive
_logs = []       # every log file a start wrote to
_own_dirs = []   # temp dirs made here, removed at exit
_state = {'failed': False, 'status': None}
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class FloeError(Exception):
    """floe serve did not start or stop as it should."""


def _tail(path, n=5):
    """The last n non-empty lines of a file, on one line."""
    try:
        with open(path, 'rb') as fh:
            text = fh.read()[-65536:].decode(errors='replace')
    except OSError:
        return ''
    return ' | '.join([l for l in text.splitlines() if l.strip()][-n:])


def why(rc):
    """What a Popen returncode means."""
    if rc < 0:
        return 'killed by %s' % signal.Signals(-rc).name
    return 'exited with status %d' % rc


def reason(e):
    """One line for a failure: the exception, where it was raised, and the
    last stderr line of a failed subprocess."""
    tb = traceback.extract_tb(e.__traceback__)
    # the innermost frame in the project's own files, not in a library
    ours = [t for t in tb if os.path.abspath(t.filename).startswith(_ROOT)
            and os.path.abspath(t.filename) != os.path.abspath(__file__)] or tb
    where = ' (%s:%d)' % (os.path.basename(ours[-1].filename), ours[-1].lineno) if ours else ''
    text = '%s: %s%s' % (type(e).__name__, str(e)[:300], where)
    err = getattr(e, 'stderr', None)
    if err:
        if isinstance(err, bytes):
            err = err.decode(errors='replace')
        lines = [l for l in err.splitlines() if l.strip()]
        if lines:
            text += '; stderr: ' + lines[-1][:200]
    return text.replace('\n', ' ')


def not_ok(name, why_):
    _state['failed'] = True
    print('not ok - %s: %s' % (name, why_), flush=True)


def temp_dir(prefix):
    """A fresh temp dir, removed at exit after floe's logs in it were shown."""
    d = tempfile.mkdtemp(prefix=prefix)
    _own_dirs.append(d)
    return d


class Floe:
    """One `floe serve` on one data dir; start() and stop() may repeat.
    Its stdout and stderr go to DIR.log (appended by each start)."""

    def __init__(self, data_dir=None, extra=()):
        if not data_dir:
            data_dir = temp_dir('floe-py.')
        self.dir = data_dir
        self.log_path = data_dir + '.log'
        self.extra = list(extra)
        self.proc = None
        self.kafka = self.http = self.addr = None

    def start(self):
        """Start floe and wait for its ready line; FloeError if it exits or
        stays silent for FLOE_READY_TIMEOUT seconds (then it is killed)."""
        os.makedirs(self.dir, exist_ok=True)
        if self.log_path not in _logs:
            _logs.append(self.log_path)
        with open(self.log_path, 'ab') as log:
            at = log.tell()
            self.proc = subprocess.Popen(
                [os.environ['FLOE_BIN'], 'serve', '--data-dir', self.dir, '--listen', '127.0.0.1:0',
                 '--http', '127.0.0.1:0'] + self.extra,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        _running.append(self)
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            with open(self.log_path, 'rb') as fh:
                fh.seek(at)
                m = re.search(rb'^floe ready kafka=(\S+) http=(\S+) data=', fh.read(), re.M)
            if m:
                self.kafka, self.http = m.group(1).decode(), m.group(2).decode()
                host, port = self.kafka.rsplit(':', 1)
                self.addr = (host, int(port))
                return self
            rc = self.proc.poll()
            if rc is not None:
                self._gone()
                raise FloeError('floe serve %s before its ready line: %s' % (why(rc), _tail(self.log_path)))
            if time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait()
                self._gone()
                raise FloeError('no ready line from floe serve within %gs: %s'
                                % (READY_TIMEOUT, _tail(self.log_path)))
            time.sleep(0.05)

    def stop(self, sig=signal.SIGTERM):
        """Send sig (SIGTERM: a clean stop); SIGKILL if floe still runs
        FLOE_STOP_TIMEOUT seconds later.  Returns the Popen returncode
        (0 = clean stop, -9 = SIGKILL)."""
        if not self.proc:
            return 0
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            print('# floe: still running %gs after signal %d; SIGKILL' % (STOP_TIMEOUT, sig),
                  file=sys.stderr, flush=True)
            self.proc.kill()
            rc = self.proc.wait()
        self._gone()
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def _gone(self):
        self.proc = None
        if self in _running:
            _running.remove(self)


class Tests:
    """Named test steps: "ok - NAME" or "not ok - NAME: why"; later steps
    still run.  Names are one word ([a-z0-9_]) for greps and readable logs.
    FLOE_TEST_STEPS="WORD..." runs only the steps whose names contain one of
    the words (the others print "# SKIP"): a quick mode for steps that do
    not depend on each other."""

    def __init__(self):
        self.failed = 0
        self.ran = 0
        self.only = os.environ.get('FLOE_TEST_STEPS', '').split()

    def run(self, name, fn):
        if not re.fullmatch(r'[a-z0-9_]+', name):
            raise ValueError('test name %r: use only a-z, 0-9 and _' % name)
        if self.only and not any(w in name for w in self.only):
            print('ok - %s # SKIP not in FLOE_TEST_STEPS' % name, flush=True)
            return
        self.ran += 1
        try:
            fn()
        except Exception as e:  # report and go on
            self.failed += 1
            not_ok(name, reason(e))
        else:
            print('ok - %s' % name, flush=True)

    def eq(self, name, got, want):
        """A step that compares a value with the one it should be."""
        def cmp():
            if got != want:
                raise AssertionError('got %r, want %r' % (got, want))
        self.run(name, cmp)

    def finish(self):
        if not self.ran:
            not_ok(_SCRIPT, 'no step ran')
        sys.exit(1 if self.failed or not self.ran else 0)


def _excepthook(tp, e, tb):
    not_ok(_SCRIPT, 'uncaught ' + reason(e))
    sys.__excepthook__(tp, e, tb)


def _thread_excepthook(args):
    not_ok(_SCRIPT, 'uncaught in thread %s: %s' % (args.thread.name if args.thread else '?',
                                                    reason(args.exc_value)))
    threading.__excepthook__(args)


def _on_signal(sig, _frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # timeout(1) signals twice
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    not_ok(_SCRIPT, 'terminated by %s' % signal.Signals(sig).name)
    _state['status'] = 128 + sig
    sys.exit(128 + sig)


def _at_exit():
    for f in list(_running):
        if f.proc and f.proc.poll() is None:
            f.proc.kill()
            f.proc.wait()
        f._gone()
    if _state['failed']:
        for p in _logs:
            if os.path.exists(p):
                print('--- %s (last 30 lines)' % os.path.basename(p))
                print(_tail(p, 30).replace(' | ', '\n'))
    for d in _own_dirs:
        shutil.rmtree(d, True)
        if os.path.exists(d + '.log'):
            os.unlink(d + '.log')
    if _state['failed']:
        # whatever the script's own exit status: a printed "not ok" fails it
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_state['status'] or 1)


sys.excepthook = _excepthook
threading.excepthook = _thread_excepthook
signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)
atexit.register(_at_exit)
