"""The intra-op helpers' spin hand-over (ops/_parallel.py), the mode of free-threaded CPython.

It is forced on here in a fresh interpreter, whatever the build: with the GIL it is slow (a
spinning helper holds the GIL until the switch interval) but must behave the same."""
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import cProfile, threading, time
    from framework.ops import _parallel as p
    p._SPIN = True
    p.set_intra_op_threads(2, limit_blas=False)
    main = threading.get_ident()
    where = {}

    def record(i):
        where.setdefault(i, set()).add(threading.get_ident())

    for _ in range(20):
        p.run(record, 2)
    assert where[0] == {main} and main not in where[1] and len(where[1]) == 1, where
    helper = next(iter(where[1]))

    where.clear()                       # more parts than helpers: the caller runs the rest
    p.run(record, 4)
    assert sorted(where) == [0, 1, 2, 3] and where[1] == {helper}
    assert where[0] == where[2] == where[3] == {main}

    def boom(i):
        if i == 1:
            raise ValueError("boom in the helper")
    try:
        p.run(boom, 2)
    except ValueError as e:
        assert str(e) == "boom in the helper"
    else:
        raise AssertionError("the helper's error was lost")

    time.sleep(p._SPIN_S * 5)           # the helper gave up spinning and sleeps: woken by a task
    where.clear()
    p.run(record, 2)
    assert where == {0: {main}, 1: {helper}}, where

    def slow(i):                        # a long part: the caller waits without spinning forever
        time.sleep(p._SPIN_S * 3)
        record(i)
    where.clear()
    p.run(slow, 2)
    assert where == {0: {main}, 1: {helper}}, where

    import sys                          # 3.13t's own cProfile hangs with threads (gh-125165)
    if sys.version_info >= (3, 14) or getattr(sys, "_is_gil_enabled", lambda: True)():
        prof = cProfile.Profile()       # a profiler attached: every part runs in the caller
        prof.enable()
        where.clear()
        p.run(record, 2)
        prof.disable()
        assert where == {0: {main}, 1: {main}}, where
    print("spin ok")
""")


def test_spin_hand_over_runs_parts_on_the_helper_and_returns_errors():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "spin ok"
