"""bench/image_numpy.py: NumPy's side of bench/image.lua, in the same run.

Run by bench/image.lua under /usr/bin/python3 (Debian's python3-numpy). The four
tasks of issue 9's image example, each a function named task_*, written as a
NumPy user would (bench/image.lua counts the lines of each body, here and in
its own tasks). Prints "name seconds" per task, the median of ROUNDS rounds of
CPU time (time.process_time, as os.clock in Lua) of REPS calls, divided by
REPS; then "check ..." lines with the results, which image.lua compares with
its own.
"""
import statistics
import sys
import time

import numpy as np

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
REPS = 50
H, W = 480, 640


def task_chw(img):  # RGBA8 HxWx4 -> float32 3xHxW in [0, 1], contiguous
    return img[:, :, :3].transpose(2, 0, 1).astype(np.float32, order="C") / 255


def task_stats(chw):  # per-channel mean and max
    return chw.mean(axis=(1, 2)), chw.max(axis=(1, 2))


def task_mask(chw):  # the pixels whose red channel is above 0.5
    return chw[0] > 0.5


def task_count(mask):  # how many they are
    return np.count_nonzero(mask)


def timed(name, task, arg):
    def loop():
        for _ in range(REPS):
            task(arg)
    times = []
    for _ in range(ROUNDS):
        t0 = time.process_time()
        loop()
        times.append(time.process_time() - t0)
    print(f"{name} {statistics.median(times) / REPS:.9f}", flush=True)


# Quasi-random bytes (as image.lua): 256 times the fractional part of i * g.
img = (np.arange(H * W * 4, dtype=np.float64) * 0.7548776662466927 % 1.0 * 256) \
    .astype(np.uint8).reshape(H, W, 4)
chw = task_chw(img)
mask = task_mask(chw)
timed("chw", task_chw, img)
timed("stats", task_stats, chw)
timed("mask", task_mask, chw)
timed("count", task_count, mask)
mean, peak = task_stats(chw)
print("check mean " + " ".join(f"{float(x):.9g}" for x in mean))
print("check max " + " ".join(f"{float(x):.9g}" for x in peak))
print(f"check count {task_count(mask)}")
