"""Part 2 of tests/gpu/run: dlbridge <-> PyTorch, CuPy and JAX on cuda:0.

For each peer present with a GPU: values and zero copy (the same device
pointer) both ways for every dtype both sides have, strided views, deleters
exactly once (test_numpy's counting wrapper), and a stream hand-off each way
in which the producer's kernels run on one stream and the consumer reads on
another. A peer that is not installed (absent) or sees no GPU (CPU-only) is
reported as such (tests/gpu/peers.py), not as a failure. Nothing here needs
NumPy itself (CuPy and JAX bring it)."""
import ctypes
import gc
import time

from test_numpy import (DLTENSOR, PMT, USED_DLTENSOR, ExportOptions, api, dlb, helper,
                        make_capsule)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]

dlb.dlb_device_queue.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int,
                                 ctypes.POINTER(ctypes.c_void_p)]


def dlbridge_stream(state):
    q = ctypes.c_void_p()
    assert dlb.dlb_device_queue(state.L, 2, 0, ctypes.byref(q)) == 0
    return q.value


def push_capsule(state, name, cap):
    """A peer's legacy capsule -> dlb_push_legacy (wrapped: deleter counted)."""
    ptr = api.PyCapsule_GetPointer(cap, DLTENSOR)
    assert api.PyCapsule_SetName(cap, USED_DLTENSOR) == 0
    state.push_legacy(name, helper.dlb_interop_wrap(ctypes.cast(ptr, PMT)))


def push_torch(state, name, t, stream=None):
    cap = t.__dlpack__(stream=stream) if stream is not None else t.__dlpack__()
    push_capsule(state, name, cap)


def device_pointer(state, name):
    t = state.export_legacy(name)
    p = t.contents.dl_tensor.data
    helper.dlb_interop_call_deleter(t)
    return p


class Producer:
    """A Lua array as a Python DLPack producer (counted deleter)."""

    def __init__(self, state, name):
        self.state, self.name, self.streams = state, name, []

    def __dlpack__(self, stream=None, **_):
        self.streams.append(stream)
        opts = ExportOptions()
        dlb.dlb_export_options_init(ctypes.byref(opts))
        if stream is not None:
            opts.has_stream, opts.stream = 1, stream
        return make_capsule(helper.dlb_interop_wrap(self.state.export_legacy(self.name, opts)))

    def __dlpack_device__(self):
        return tuple(self.state.run("return %s:__dlpack_device()" % self.name, results=2))


class Peer:
    name = "?"

    def dtypes(self):
        return [d for d in DTYPES if self.dtype(d) is not None]


class TorchPeer(Peer):
    name = "torch"

    def __init__(self, torch):
        self.t = torch

    def dtype(self, d):
        return getattr(self.t, d, None)

    def arange(self, d):
        return self.t.arange(12, device="cuda").to(self.dtype(d)).reshape(3, 4)

    def from_dlpack(self, p):
        return self.t.from_dlpack(p)

    def host_bytes(self, x):
        x = x.cpu().contiguous()
        return bytes(x.view(-1).view(self.t.uint8).tolist()) if x.numel() else b""  # no NumPy needed

    def pointer(self, x):
        return x.data_ptr()

    def views(self, x):
        return {"T": x.t(), "cols": x[:, 1:4:2]}

    def export(self, x, stream):
        return x.__dlpack__(stream=stream)

    def side_stream_handoff(self, state):
        """torch writes on a side stream (a spin kernel, then a fill);
        dlbridge imports with its own stream and copies to the host."""
        t = self.t
        s = t.cuda.Stream()
        with t.cuda.stream(s):
            x = t.zeros(1 << 22, dtype=t.float32, device="cuda")
            t.cuda._sleep(50_000_000)  # ~25 ms of GPU time before the fill
            x.fill_(7)
            cap = x.__dlpack__(stream=dlbridge_stream(state))
        push_capsule(state, "hand", cap)
        ok = state.eval("hand:to('cpu'):eq(7):all()")
        state.run("hand = nil collectgarbage()")
        t.cuda.synchronize()
        return ok

    def consumer_handoff(self, state):
        """dlbridge queues fills on its stream; torch imports on its current
        (side) stream and reads at once."""
        t = self.t
        state.run("ho = dl.zeros(1 << 26, {dtype = 'float32', device = 'cuda:0'})"
                  " for v = 1, 9 do ho:fill(v) end")
        s = t.cuda.Stream()
        with t.cuda.stream(s):
            y = t.from_dlpack(Producer(state, "ho"))
            ok = bool((y == 9).all().item())
        del y
        return ok


class CupyPeer(Peer):
    name = "cupy"

    def __init__(self, cp):
        self.cp = cp

    def dtype(self, d):
        return None if d == "bfloat16" else getattr(self.cp, d, None) if d != "bool" else self.cp.bool_

    def arange(self, d):
        return self.cp.arange(12).astype(self.dtype(d)).reshape(3, 4)

    def from_dlpack(self, p):
        return self.cp.from_dlpack(p)

    def host_bytes(self, x):
        return self.cp.asnumpy(x).tobytes()

    def pointer(self, x):
        return x.data.ptr

    def views(self, x):
        return {"T": x.T, "cols": x[:, 1:4:2]}

    def export(self, x, stream):
        return x.__dlpack__(stream=stream)


class JaxPeer(Peer):
    name = "jax"

    def __init__(self, jax):
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import jax.dlpack
        self.jax, self.jnp = jax, jnp

    def dtype(self, d):
        return getattr(self.jnp, d, None) if d != "bool" else self.jnp.bool_

    def arange(self, d):
        return self.jax.device_put(self.jnp.arange(12).astype(self.dtype(d)).reshape(3, 4),
                                   self.jax.devices("gpu")[0])

    def from_dlpack(self, p):
        return self.jax.dlpack.from_dlpack(p)

    def host_bytes(self, x):
        import numpy as np
        return np.asarray(x).tobytes()

    def pointer(self, x):
        return x.unsafe_buffer_pointer()

    def views(self, x):
        return {}  # JAX has no strided views (and takes compact strides only)

    def export(self, x, stream):
        return x.__dlpack__(stream=stream)


def counts():
    return helper.dlb_interop_wrapped_deletes()


def settled_counts(at_least, wait=2.0):
    """counts() once it reaches at_least, or after `wait` seconds: a peer may
    drop its last reference a little later, on its own thread (XLA frees
    buffers after the work queued on them), which is no failure."""
    end = time.monotonic() + wait
    while True:
        gc.collect()
        n = counts()
        if n >= at_least or time.monotonic() >= end:
            return n
        time.sleep(0.01)


def check_peer(Lua, rep, peer):
    """Both ways, every shared dtype, views, deleters, stream hand-offs."""
    bad = []
    for d in peer.dtypes():
        rep.log("interop: %s %s" % (peer.name, d))  # a hang's last line says where
        state = Lua()
        try:
            helper.dlb_interop_reset()
            # dlbridge -> peer
            state.run("a = dl.arange(12):astype(%r):reshape{3, 4}:to('cuda:0')" % d)
            state.run("want = a:to('cpu'):tobytes()")
            x = peer.from_dlpack(Producer(state, "a"))
            hb = peer.host_bytes(x)
            state.run("got = %s" % lua_bytes(hb))
            if not state.eval("got == want"):
                bad.append("%s->%s %s values" % ("dlbridge", peer.name, d))
            if peer.pointer(x) != device_pointer(state, "a"):
                bad.append("dlbridge->%s %s not zero-copy" % (peer.name, d))
            del x
            n = settled_counts(1)
            if n != 1:
                bad.append("dlbridge->%s %s deleter ran %d times" % (peer.name, d, n))
            # peer -> dlbridge
            y = peer.arange(d)
            push_capsule(state, "b", peer.export(y, dlbridge_stream(state)))
            state.run("got = %s" % lua_bytes(peer.host_bytes(y)))
            if not state.eval("b:to('cpu'):tobytes() == got"):
                bad.append("%s->dlbridge %s values" % (peer.name, d))
            if peer.pointer(y) != device_pointer(state, "b"):
                bad.append("%s->dlbridge %s not zero-copy" % (peer.name, d))
            for vname, v in peer.views(y).items():
                push_capsule(state, "v", peer.export(v, dlbridge_stream(state)))
                state.run("got = %s" % lua_bytes(peer.host_bytes(v)))
                if not state.eval("v:to('cpu'):tobytes() == got"):
                    bad.append("%s->dlbridge %s view %s values" % (peer.name, d, vname))
            for vname, expr in (("T", "a:transpose()"), ("cols", "a:slice(2, 2, 4, 2)")):
                if not peer.views(y):
                    break
                state.run("v = %s want = v:to('cpu'):tobytes()" % expr)
                z = peer.from_dlpack(Producer(state, "v"))
                state.run("got = %s" % lua_bytes(peer.host_bytes(z)))
                if not state.eval("got == want"):
                    bad.append("dlbridge->%s %s view %s values" % (peer.name, d, vname))
                del z
            before = counts()
            state.run("b = nil v = nil collectgarbage() collectgarbage()")
            if settled_counts(before + 1) - before < 1:
                bad.append("%s->dlbridge %s deleter did not run" % (peer.name, d))
        except Exception as e:  # noqa: one dtype's failure is reported, the rest still run
            bad.append("%s %s raised %s: %s" % (peer.name, d, type(e).__name__, e))
        finally:
            state.close()
            gc.collect()
    for kind in ("side_stream_handoff", "consumer_handoff"):
        fn = getattr(peer, kind, None)
        if fn:
            rep.log("interop: %s %s" % (peer.name, kind))
            state = Lua()
            try:
                if not fn(state):
                    bad.append("%s %s read wrong values" % (peer.name, kind))
            except Exception as e:
                bad.append("%s %s raised %s: %s" % (peer.name, kind, type(e).__name__, e))
            finally:
                state.close()
    for b in bad:
        rep.fail(b)
    rep.log("%s: %d dtypes, %d problems" % (peer.name, len(peer.dtypes()), len(bad)))
    return "%s %s" % (peer.name, "ok" if not bad else "FAIL(%d)" % len(bad))


def lua_bytes(b):
    """A Lua string literal of the bytes b."""
    return '"' + "".join("\\%d" % c for c in b) + '"'


def run_all(Lua, rep, peers):
    """peers: tests/gpu/peers.py's probe(). Returns the words of the summary."""
    words = []
    for name, make in (("torch", TorchPeer), ("cupy", CupyPeer), ("jax", JaxPeer)):
        p = peers.get(name)
        if p is None or not p.usable:
            why = p.line() if p else name + ": not probed"
            rep.log("interop: %s: not run (%s)" % (name, why))
            words.append(p.word() if p else "%s(absent)" % name)
            continue
        try:
            peer = make(p.module)
        except Exception as e:  # noqa: a peer that breaks while setting up is a failure, with why
            rep.fail("%s: setting up the peer raised %s: %s" % (name, type(e).__name__, e))
            words.append("%s FAIL(setup)" % name)
            continue
        words.append(check_peer(Lua, rep, peer))
    if not any(p.usable for n, p in peers.items() if n != "numpy"):
        words.append("(no GPU peer: nothing to exchange with)")
    return words
