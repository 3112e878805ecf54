"""bench/numpy_support.py: what the NumPy sides of the benchmarks share.

A figure is the median of `rounds` rounds of CPU time (time.process_time, as
os.clock in Lua), printed as one line "name seconds" for the Lua side to read.
"""
import statistics
import time


def median(f, rounds):
    """The median CPU time of rounds calls of f."""
    times = []
    for _ in range(rounds):
        t0 = time.process_time()
        f()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def emit(name, f, rounds):
    """Prints the line "name seconds" for f's median."""
    print(f"{name} {median(f, rounds):.9f}", flush=True)
