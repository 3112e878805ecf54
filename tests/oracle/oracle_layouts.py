"""The layouts the oracle cases name (quantile, scatter, linalg, vecmath):
"-" as made, "T" (the last two dims swapped), "rev1" (dim 1 reversed),
"step1" (every other element of dim 1). The checkers apply them
(oracle_util.lua's apply_layout) to the base arrays these functions write."""
import numpy as np

LAYOUTS = ["-", "T", "rev1", "step1"]


def based(logical, layout):
    """A base array whose view by layout (as the checker applies it) is logical."""
    if layout == "T":
        return np.ascontiguousarray(np.swapaxes(logical, -1, -2))
    if layout == "rev1":
        return np.ascontiguousarray(logical[::-1])
    if layout == "step1":
        base = np.zeros((2 * logical.shape[0],) + logical.shape[1:], logical.dtype)
        base[::2] = logical
        return base
    return logical


def pick_layout(rng, logical):
    """A layout at random that logical's dims allow."""
    if logical.ndim == 0:
        return "-"
    layout = LAYOUTS[rng.integers(len(LAYOUTS))]
    if layout == "T" and logical.ndim < 2:
        return "-"
    return layout
