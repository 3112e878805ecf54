"""bench/numpy_support.py: what the NumPy sides of the benchmarks share.

A NumPy side (bench/*_numpy.py, run by its benchmark under Debian's
/usr/bin/python3) reads its sizes with params(), builds its data, registers
its cases with case() (names as the Lua side's) and values with value(),
then calls serve(): it prints "ready" and answers one line per command read
from stdin (bench/support.lua's Comparison sends them):

    warm NAME    untimed calls of the case (making its data first, for a
                 case given by make=): "NAME ok", or "NAME -" with no such case
    run NAME     one timed round: "NAME seconds", the CPU time
                 (time.process_time, as os.clock on the Lua side) of reps
                 calls divided by div (default reps)
    done NAME    drops what make= made: "NAME ok"
    value NAME   "NAME text": what the function given to value() returns
    quit -       ends

A case that raises answers "NAME error: ..." (also printed on stderr).
"""
import sys
import time
import traceback

_CASES = {}
_VALUES = {}


class _Case:
    def __init__(self, f, reps, div, prepare, make, warmups):
        self.f, self.reps, self.div = f, reps, div
        self.prepare, self.make, self.warmups = prepare, make, warmups
        self.current = f


def params(**defaults):
    """The key=value arguments, each converted to its default's type."""
    values = dict(defaults)
    for word in sys.argv[1:]:
        key, _, text = word.partition("=")
        if key in defaults and defaults[key] is not None:
            values[key] = type(defaults[key])(text)
        else:
            values[key] = text
    return values


def case(name, f=None, reps=1, div=None, prepare=None, make=None, warmups=1):
    """Registers a case: f() (or f(prepare()) with prepare) timed reps times
    a round; make(), when given, returns f at the first warm-up, and what it
    holds is dropped when the case is done."""
    _CASES[name] = _Case(f, reps, div, prepare, make, warmups)


def value(name, f):
    """Registers a value: f() returns its text (one line)."""
    _VALUES[name] = f


def _call(c):
    if c.prepare:
        c.current(c.prepare())
    else:
        c.current()


def _round(c):
    f, reps = c.current, c.reps
    if c.prepare:
        x = c.prepare()
        t0 = time.process_time()
        for _ in range(reps):
            f(x)
    else:
        t0 = time.process_time()
        for _ in range(reps):
            f()
    return (time.process_time() - t0) / (c.div or reps)


def _answer(name, text):
    sys.stdout.write(f"{name} {text}\n")
    sys.stdout.flush()


def serve():
    """Answers the Lua side's commands until it says quit or closes stdin."""
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        command, _, name = line.strip().partition(" ")
        if command == "quit":
            return
        try:
            if command == "value":
                text = str(_VALUES[name]()) if name in _VALUES else "-"
                _answer(name, text.replace("\n", " "))
                continue
            c = _CASES.get(name)
            if c is None:
                _answer(name, "-")
            elif command == "warm":
                if c.make and c.current is None:
                    c.current = c.make()
                for _ in range(c.warmups):
                    _call(c)
                _answer(name, "ok")
            elif command == "run":
                if c.current is None:
                    c.current = c.make()
                _answer(name, f"{_round(c):.12g}")
            elif command == "done":
                if c.make:
                    c.current = None
                _answer(name, "ok")
            else:
                _answer(name, "-")
        except Exception as e:  # noqa: BLE001 (the Lua side goes on without this figure)
            traceback.print_exc(file=sys.stderr)
            if c is not None and c.make:
                c.current = None
            _answer(name, f"error: {type(e).__name__}: {e}".replace("\n", " "))
