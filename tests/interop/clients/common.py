"""Helpers shared by the python client scripts: TAP-like lines, bounded steps.
The broker address comes from FLOE_KAFKA (set by tests/integration/lib.sh)."""
import os, sys, time, traceback, signal

BROKER = os.environ.get("FLOE_KAFKA")
if not BROKER:
    print("not ok - env: FLOE_KAFKA is not set")
    sys.exit(1)
TAG = "%d-%d" % (os.getpid(), int(time.time() * 1000))
_failed = [0]
_SCRIPT = os.path.splitext(os.path.basename(sys.argv[0] or "python"))[0]


def _excepthook(tp, e, tb):
    """A failure outside a step (an import, top-level code) is a "not ok"
    line with its reason too."""
    print("not ok - %s: uncaught %s: %s" % (_SCRIPT, tp.__name__, str(e)[:300]), flush=True)
    sys.__excepthook__(tp, e, tb)


sys.excepthook = _excepthook


class StepTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise StepTimeout("timed out")


def step(name, seconds, fn):
    """Run fn() with a time bound; print ok / not ok; return its result or None."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        r = fn()
        print("ok - %s" % name, flush=True)
        return True if r is None else r
    except BaseException as e:  # noqa: BLE001 - report any failure as a test line
        _failed[0] += 1
        tb = traceback.extract_tb(e.__traceback__)[-1]
        print("not ok - %s: %s: %s (%s:%d)" % (name, type(e).__name__, str(e)[:300],
                                            os.path.basename(tb.filename), tb.lineno), flush=True)
        return None
    finally:
        signal.alarm(0)


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def eq(got, want, what):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, str(got)[:300], str(want)[:300]))


def finish():
    sys.exit(1 if _failed[0] else 0)
