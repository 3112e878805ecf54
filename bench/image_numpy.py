"""bench/image_numpy.py: NumPy's side of bench/image.lua, alternated with it
task by task (bench/numpy_support.py).

Run by bench/image.lua under /usr/bin/python3 (Debian's python3-numpy). The four
tasks of issue 9's image example, each a function named task_*, written as a
NumPy user would (bench/image.lua counts the lines of each body, here and in
its own tasks). A case is REPS calls of a task; the values check_mean,
check_max and check_count are the results, which image.lua prints next to
its own.
"""
import numpy as np

import numpy_support as ns

P = ns.params(REPS=50, H=480, W=640)
REPS, H, W = P["REPS"], P["H"], P["W"]


def task_chw(img):  # RGBA8 HxWx4 -> float32 3xHxW in [0, 1], contiguous
    return img[:, :, :3].transpose(2, 0, 1).astype(np.float32, order="C") / 255


def task_stats(chw):  # per-channel mean and max
    return chw.mean(axis=(1, 2)), chw.max(axis=(1, 2))


def task_mask(chw):  # the pixels whose red channel is above 0.5
    return chw[0] > 0.5


def task_count(mask):  # how many they are
    return np.count_nonzero(mask)


# Quasi-random bytes (as image.lua): 256 times the fractional part of i * g.
img = (np.arange(H * W * 4, dtype=np.float64) * 0.7548776662466927 % 1.0 * 256) \
    .astype(np.uint8).reshape(H, W, 4)
chw = task_chw(img)
mask = task_mask(chw)
ns.case("chw", lambda: task_chw(img), reps=REPS)
ns.case("stats", lambda: task_stats(chw), reps=REPS)
ns.case("mask", lambda: task_mask(chw), reps=REPS)
ns.case("count", lambda: task_count(mask), reps=REPS)
mean, peak = task_stats(chw)
ns.value("check_mean", lambda: " ".join(f"{float(x):.9g}" for x in mean))
ns.value("check_max", lambda: " ".join(f"{float(x):.9g}" for x in peak))
ns.value("check_count", lambda: str(task_count(mask)))
ns.serve()
