"""PyTorch <-> dlbridge through DLPack, driven from Python with ctypes.

Debian's python3-torch (1.13.1: legacy DLPack only, through
torch.utils.dlpack) is the peer; ctest registers this file as interop.torch
when `import torch` works:

    DLBRIDGE_BUILD=/path/to/build /usr/bin/python3 -m unittest -v test_torch

The Lua state, the ctypes structs and the counting capsule helper are
test_numpy's. Each check is a convention PyTorch holds dlbridge to:
- a size-0 export must carry a non-NULL data pointer: LibTorch 1.13 never
  calls the deleter of a tensor whose data is NULL (the export would leak);
- a tensor whose elements overlap (torch's expand and as_strided) imports
  read-only: one write would change several elements in torch;
- a:__dlpack() without max_version is the protocol's legacy capsule, the
  only kind torch 1.13 reads;
- strides of extent-1 dims carry no meaning: an import makes them the
  compact row-major ones.
"""

import ctypes
import gc
import unittest

import torch
from torch.utils import dlpack as tdl

from test_numpy import (DLTENSOR, PMT, USED_DLTENSOR, ExportOptions, InteropCase, LuaProducer,
                        api, dlb, helper, make_capsule)


def torch_to_lua(state, name, t):
    """torch's legacy capsule of t -> dlb_push_legacy, the tensor wrapped so
    that its deleter calls are counted (helper "wrapped" counter)."""
    cap = tdl.to_dlpack(t)
    ptr = api.PyCapsule_GetPointer(cap, DLTENSOR)
    assert api.PyCapsule_SetName(cap, USED_DLTENSOR) == 0
    state.push_legacy(name, helper.dlb_interop_wrap(ctypes.cast(ptr, PMT)))
    return cap


class DunderProducer:
    """A Python producer over a Lua array that asks dlbridge's own protocol
    method for the capsule: `c = a:__dlpack()`, taken with dlb_capsule_take."""

    def __init__(self, state, name):
        self.state, self.name, self.versioned = state, name, None

    def __dlpack__(self, stream=None):
        self.state.run("c = %s:__dlpack()" % self.name)
        ptr, self.versioned = self.state.capsule_take("c")
        if self.versioned:  # torch 1.13 would read a versioned struct as legacy
            raise AssertionError("a:__dlpack() without max_version gave a versioned tensor")
        return make_capsule(helper.dlb_interop_wrap(ctypes.cast(ptr, PMT)))

    def __dlpack_device__(self):
        return tuple(self.state.run("return %s:__dlpack_device()" % self.name, results=2))


class DlbridgeToTorch(InteropCase):
    def test_size0_exports_are_released_by_torch(self):
        # Fresh, views of real memory, copies: every size-0 export has data
        # that torch will release, and it does, once.
        cases = (("a = dl.zeros{0}", None),
                 ("base = dl.zeros{2, 3} a = base:slice(2, 3, 2)", None),
                 ("a = dl.zeros({0, 4}, {dtype = 'float32'}):T()", None),
                 ("a = dl.zeros{0, 2}", "copy"))
        for n, (code, mode) in enumerate(cases, 1):
            with self.subTest(code=code, mode=mode):
                self.lua.run(code)
                opts = None
                if mode == "copy":
                    opts = ExportOptions()
                    dlb.dlb_export_options_init(ctypes.byref(opts))
                    opts.copy = 1
                x = tdl.from_dlpack(LuaProducer(self.lua, "a", opts=opts))
                self.assertEqual(x.numel(), 0)
                self.assertEqual(list(x.shape), self.lua.eval("a.shape"))
                del x
                gc.collect()
                self.assertCounts(wrapped=n)  # the deleter ran: nothing leaked
                ptr = self.base_pointer("a")  # (an export of its own, released at once)
                self.assertIsNotNone(ptr)
                self.assertEqual(ptr % 64, 0)

    def test_legacy_capsule_through_dunder(self):
        self.lua.run("a = dl.arange(6, {dtype = 'float32'}):view{2, 3}")
        producer = DunderProducer(self.lua, "a")
        x = tdl.from_dlpack(producer)
        self.assertEqual(producer.versioned, 0)
        self.assertEqual(x.tolist(), [[0, 1, 2], [3, 4, 5]])
        self.lua.run("a:set(2, 3, 50)")  # zero copy
        self.assertEqual(x[1, 2].item(), 50)
        del x
        gc.collect()
        self.assertCounts(wrapped=1)

    def test_read_only_array_through_dunder_is_a_copy(self):
        # Legacy has no read-only flag: torch gets a writable copy, and its
        # writes never reach the read-only view.
        self.lua.run("z = dl.arange(3, {dtype = 'float64'}) r = z:view{1, 3}:expand{2, 3}")
        x = tdl.from_dlpack(DunderProducer(self.lua, "r"))
        self.assertEqual(x.stride(), (3, 1))
        x[0, 0] = 7
        self.assertEqual(self.lua.eval("z[1]"), 0)
        del x
        gc.collect()
        self.assertCounts(wrapped=1)


class TorchToDlbridge(InteropCase):
    def test_broadcast_tensor_imports_read_only(self):
        t = torch.arange(3.0, dtype=torch.float64).expand(4, 3)
        self.assertEqual(t.stride(), (0, 1))
        torch_to_lua(self.lua, "b", t)
        self.assertTrue(self.lua.eval("b.readonly"))
        self.assertEqual(self.lua.eval("select(2, pcall(b.set, b, 1, 1, 99)).code"), "READ_ONLY")
        self.assertEqual(t.tolist(), [[0.0, 1.0, 2.0]] * 4)  # no broadcast row changed
        self.assertEqual(self.lua.eval("b:sum()"), 12.0)
        self.lua.run("b = nil")
        self.lua.collect()
        self.assertCounts(wrapped=1)  # torch's deleter, once

    def test_overlapping_as_strided_imports_read_only(self):
        t = torch.arange(6.0).as_strided((3, 2), (1, 1))  # (i, j) and (i + 1, j - 1) meet
        torch_to_lua(self.lua, "b", t)
        self.assertTrue(self.lua.eval("b.readonly"))
        self.assertEqual(self.lua.eval("b:totable()"), t.tolist())

    def test_plain_tensors_stay_writable(self):
        t = torch.arange(6, dtype=torch.int32).reshape(2, 3)
        torch_to_lua(self.lua, "b", t)
        self.assertFalse(self.lua.eval("b.readonly"))
        self.lua.run("b:set(2, 3, 40)")
        self.assertEqual(t[1, 2].item(), 40)
        torch_to_lua(self.lua, "c", t.t())
        self.assertFalse(self.lua.eval("c.readonly"))

    def test_extent_1_strides_become_compact(self):
        # torch allows any stride on an extent-1 dim (here 2^62); torch 1.13's
        # to_dlpack sends 1 for it (it rewrites extent-1 strides, pytorch
        # #83069), and dlbridge makes it the compact row-major 3. (The 2^62
        # itself arrives from spec/dlpack_foreign_spec.lua's producer.)
        t = torch.arange(1.0, 4.0, dtype=torch.float64).as_strided((1, 3), (2**62, 1))
        torch_to_lua(self.lua, "b", t)
        self.assertEqual(self.lua.eval("b.strides"), [3, 1])
        self.assertEqual(self.lua.eval("b:sum()"), 6.0)
        self.assertEqual(self.lua.eval("(b + 1):totable()"), [[2.0, 3.0, 4.0]])
        self.assertEqual(self.lua.eval("b:matmul(b:T()):totable()"), [[14.0]])
        self.assertEqual(self.lua.eval("b:T():matmul(b):get(3, 3)"), 9.0)

    def test_size0_torch_tensor(self):
        # torch exports data = NULL for its empty tensors: fine for a consumer.
        t = torch.empty(0, 3)
        torch_to_lua(self.lua, "b", t)
        self.assertEqual(self.lua.eval("b.shape"), [0, 3])
        self.assertEqual(self.lua.eval("b:sum()"), 0.0)
        self.lua.run("b = nil")
        self.lua.collect()
        self.assertCounts(wrapped=1)


if __name__ == "__main__":
    unittest.main()
