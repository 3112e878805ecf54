"""The peers of tests/gpu/run, probed: PyTorch, CuPy, JAX (each present with
a GPU, CPU-only, or absent) and NumPy (present or absent).

    python3 tests/gpu/peers.py      one line per peer (tests/gpu/oneshot's header)

`probe()` returns {name: Peer}; a peer that cannot be imported, or imports
but fails, is absent with the reason; one that imports but sees no GPU is
CPU-only. Nothing here needs NumPy, a GPU or dlbridge."""
import os
import sys

# JAX takes 75% of the GPU's memory at its first use unless told not to; the
# check shares the GPU with PyTorch, CuPy and dlbridge.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

PRESENT, CPU_ONLY, ABSENT = "present", "CPU-only", "absent"


class Peer:
    def __init__(self, name, status, version="", detail="", module=None):
        self.name, self.status, self.version, self.detail, self.module = name, status, version, detail, module

    @property
    def usable(self):
        return self.status == PRESENT

    def word(self):
        """One word for the summary line: torch, torch(CPU-only), torch(absent)."""
        return self.name if self.usable else "%s(%s)" % (self.name, self.status)

    def line(self):
        v = (" " + self.version) if self.version else ""
        return "%s%s: %s%s" % (self.name, v, self.status, (" (%s)" % self.detail) if self.detail else "")


def _first_line(e):
    text = ("%s: %s" % (type(e).__name__, e)).strip()
    return text.splitlines()[0][:200] if text else type(e).__name__


def _torch():
    import torch
    v = torch.__version__
    if not torch.cuda.is_available():
        built = "built without CUDA" if torch.version.cuda is None else "CUDA %s build, no device" % torch.version.cuda
        return Peer("torch", CPU_ONLY, v, built, torch)
    n = torch.cuda.device_count()
    return Peer("torch", PRESENT, v, "CUDA %s, %d device(s), %s" % (torch.version.cuda, n,
                                                                    torch.cuda.get_device_name(0)), torch)


def _cupy():
    import cupy
    v = cupy.__version__
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: no driver or no device: CuPy imports but cannot run
        return Peer("cupy", CPU_ONLY, v, "no usable GPU: " + _first_line(e), cupy)
    if n < 1:
        return Peer("cupy", CPU_ONLY, v, "no device", cupy)
    rt = cupy.cuda.runtime.runtimeGetVersion()
    return Peer("cupy", PRESENT, v, "CUDA runtime %d.%d, %d device(s)" % (rt // 1000, rt % 1000 // 10, n), cupy)


def _jax():
    import jax
    v = jax.__version__
    try:
        gpus = jax.devices("gpu")
    except Exception as e:  # noqa: RuntimeError when no GPU backend is there
        return Peer("jax", CPU_ONLY, v, "no GPU backend: " + _first_line(e), jax)
    if not gpus:
        return Peer("jax", CPU_ONLY, v, "no GPU device", jax)
    return Peer("jax", PRESENT, v, "%d GPU device(s), %s" % (len(gpus), gpus[0].device_kind), jax)


def _numpy():
    import numpy
    return Peer("numpy", PRESENT, numpy.__version__, "", numpy)


PROBES = (("torch", _torch), ("cupy", _cupy), ("jax", _jax), ("numpy", _numpy))


def probe(names=None):
    """{name: Peer} for the peers named (default all), in PROBES' order."""
    out = {}
    for name, fn in PROBES:
        if names is not None and name not in names:
            continue
        try:
            out[name] = fn()
        except ImportError as e:
            out[name] = Peer(name, ABSENT, "", _first_line(e))
        except Exception as e:  # noqa: a peer that breaks while importing is absent, with why
            out[name] = Peer(name, ABSENT, "", "import failed: " + _first_line(e))
    return out


def summary(peers):
    return " ".join(p.word() for p in peers.values())


if __name__ == "__main__":
    for p in probe(sys.argv[1:] or None).values():
        print("peer " + p.line())
