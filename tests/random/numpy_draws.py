#!/usr/bin/python3
"""NumPy's side of spec/random_spec.lua: draws of np.random.Generator, as bytes.

    /usr/bin/python3 tests/random/numpy_draws.py REQUEST_FILE

Each line of the request is `key<TAB>seed<TAB>expression`: seed is a Python
literal (an integer, "0x..." for a hex integer, or a list of them) given to
np.random.default_rng, and expression is evaluated with `rng` (that new
generator) and `np` in scope. It prints `key<TAB>hex` a line, hex being the
bytes of np.asarray(result) (a Python float as float64, an int as int64), or
`key<TAB>!message` when NumPy raised.
"""
import sys

import numpy as np


def seed_of(text):
    if text.startswith("0x"):
        return int(text, 16)
    value = eval(text, {})
    if isinstance(value, list):
        return [int(v, 16) if isinstance(v, str) else v for v in value]
    return value


def as_bytes(result):
    if isinstance(result, bool):
        return np.bool_(result).tobytes()
    if isinstance(result, float):
        return np.float64(result).tobytes()
    if isinstance(result, int):
        return np.int64(result).tobytes()
    if isinstance(result, str):
        return result.encode()
    return np.ascontiguousarray(result).tobytes()


def main():
    out = []
    with open(sys.argv[1]) as request:
        for line in request:
            line = line.rstrip("\n")
            if not line:
                continue
            key, seed, expression = line.split("\t", 2)
            rng = np.random.default_rng(seed_of(seed))
            try:
                result = eval(expression, {"np": np, "rng": rng})
                out.append(key + "\t" + as_bytes(result).hex())
            except Exception as e:  # the spec decides whether NumPy should have raised
                out.append(key + "\t!" + type(e).__name__ + ": " + str(e).replace("\n", " "))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
