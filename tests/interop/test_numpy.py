"""NumPy <-> dlbridge through DLPack, driven from Python with ctypes.

Run with Debian's interpreter and NumPy (1.24, legacy DLPack only), from
tests/interop (ctest registers it as interop.numpy):

    DLBRIDGE_BUILD=/path/to/build /usr/bin/python3 -m unittest -v test_numpy

A Lua state is driven through the C API of dlbridge.h (libdlbridge.so) and
liblua5.4; capsules are made with PyCapsule_New and the destructor of
capsule_helper.c (built into $DLBRIDGE_BUILD/lib), which also holds counting
producers and a counting wrapper for "deleter exactly once" checks.

Where NumPy 1.24 refuses something, the test asserts its exact refusal: that
documents the peer's limit rather than skipping the case.
"""

import ctypes
import gc
import os
import sys
import unittest
import weakref

try:
    import numpy as np
except ImportError:
    # tests/gpu/run imports the helpers below (the Lua state, the DLPack
    # structs, the capsules) on machines that may have no NumPy: the NumPy
    # tests then skip, the helpers still load.
    np = None

from lua_ctypes import BUILD, c_L, dlb, lua


# PyDLL: the GIL stays held during calls (they can run NumPy's deleter).
helper = ctypes.PyDLL(os.path.join(BUILD, "lib", "libdlb_interop_capsule.so"))


# ---- DLPack structs (legacy ABI) -------------------------------------------------

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


assert ctypes.sizeof(DLTensor) == 48 and ctypes.sizeof(DLManagedTensor) == 64
PMT = ctypes.POINTER(DLManagedTensor)

# ---- C signatures --------------------------------------------------------------

lua.lua_getfield.argtypes = [c_L, ctypes.c_int, ctypes.c_char_p]
lua.lua_getglobal.argtypes = [c_L, ctypes.c_char_p]

dlb.dlb_status_name.restype = ctypes.c_char_p
dlb.dlb_status_name.argtypes = [ctypes.c_int]
dlb.dlb_export_legacy.argtypes = [c_L, ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(PMT)]
dlb.dlb_push_legacy.argtypes = [c_L, PMT]
dlb.dlb_push_capsule_legacy.argtypes = [c_L, PMT]
dlb.dlb_push_capsule_legacy.restype = None
dlb.dlb_capsule_take.argtypes = [c_L, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                                 ctypes.POINTER(ctypes.c_int)]


class ExportOptions(ctypes.Structure):
    """dlb_export_options (dlbridge.h)."""
    _fields_ = [("version", ctypes.c_uint32),
                ("max_version_major", ctypes.c_int32), ("max_version_minor", ctypes.c_int32),
                ("has_dl_device", ctypes.c_int32), ("dl_device", DLDevice),
                ("copy", ctypes.c_int32), ("has_stream", ctypes.c_int32),
                ("stream", ctypes.c_int64), ("fallback_cpu", ctypes.c_int32),
                ("layout", ctypes.c_int32)]


DLB_LAYOUT_NONNEGATIVE = 1
dlb.dlb_last_error.argtypes = [ctypes.POINTER(ctypes.c_char_p)]
dlb.dlb_last_error.restype = ctypes.c_int


dlb.dlb_export_options_init.argtypes = [ctypes.POINTER(ExportOptions)]
dlb.dlb_export_options_init.restype = None

helper.dlb_interop_make_f64.restype = PMT
helper.dlb_interop_make_f64.argtypes = [ctypes.c_int64]
helper.dlb_interop_wrap.restype = PMT
helper.dlb_interop_wrap.argtypes = [PMT]
helper.dlb_interop_call_deleter.argtypes = [PMT]
helper.dlb_interop_call_deleter.restype = None
helper.dlb_interop_reset.restype = None
for _f in ("producer", "wrapped", "capsule"):
    getattr(helper, "dlb_interop_%s_deletes" % _f).argtypes = []

api = ctypes.pythonapi
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.restype = ctypes.c_int
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_GetName.restype = ctypes.c_char_p
api.PyCapsule_GetName.argtypes = [ctypes.py_object]
api.PyCapsule_IsValid.restype = ctypes.c_int
api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]

# A capsule keeps the name pointer it was given, not a copy: these bytes objects
# live as long as the module (and so as long as every capsule made here).
DLTENSOR = b"dltensor"
USED_DLTENSOR = b"used_dltensor"
CAPSULE_DESTRUCTOR = ctypes.cast(helper.dlb_interop_capsule_destructor, ctypes.c_void_p)

LUA_TNIL, LUA_TBOOLEAN, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE = 0, 1, 3, 4, 5
LUA_OK = 0


def make_capsule(tensor):
    """A legacy "dltensor" PyCapsule owning tensor (the deleter runs if unconsumed)."""
    return api.PyCapsule_New(ctypes.cast(tensor, ctypes.c_void_p), DLTENSOR, CAPSULE_DESTRUCTOR)


def counts():
    return (helper.dlb_interop_producer_deletes(), helper.dlb_interop_wrapped_deletes(),
            helper.dlb_interop_capsule_deletes())


class LuaError(Exception):
    pass


class DlbError(Exception):
    """A dlb_* call failed: status is the returned code, code the error object's."""

    def __init__(self, status, code, message):
        super().__init__("%s (%s): %s" % (dlb.dlb_status_name(status).decode(), code, message))
        self.status = status
        self.name = dlb.dlb_status_name(status).decode()
        self.code = code
        self.message = message


class Lua:
    """A lua_State with dlbridge preloaded and `dl = require "dlbridge"` done."""

    def __init__(self, require=True):
        self.L = lua.luaL_newstate()
        assert self.L
        lua.luaL_openlibs(self.L)
        dlb.dlb_preload(self.L)
        if require:
            self.run("dl = require 'dlbridge'")

    def close(self):
        if self.L:
            lua.lua_close(self.L)
            self.L = None

    def _string(self, idx, convert=False):
        n = ctypes.c_size_t()
        fn = lua.luaL_tolstring if convert else lua.lua_tolstring
        p = fn(self.L, idx, ctypes.byref(n))
        s = ctypes.string_at(p, n.value).decode("utf-8", "replace") if p else None
        if convert:
            lua.lua_settop(self.L, -2)
        return s

    def value(self, idx):
        """The Lua value at idx as Python (nil, booleans, numbers, strings, sequences)."""
        L, t = self.L, lua.lua_type(self.L, idx)
        if t == LUA_TNIL:
            return None
        if t == LUA_TBOOLEAN:
            return bool(lua.lua_toboolean(L, idx))
        if t == LUA_TNUMBER:
            if lua.lua_isinteger(L, idx):
                return lua.lua_tointegerx(L, idx, None)
            return lua.lua_tonumberx(L, idx, None)
        if t == LUA_TSTRING:
            return self._string(idx)
        if t == LUA_TTABLE:
            out = []
            for i in range(1, lua.lua_rawlen(L, idx) + 1):
                lua.lua_rawgeti(L, idx, i)
                out.append(self.value(lua.lua_gettop(L)))
                lua.lua_settop(L, -2)
            return out
        return self._string(idx, convert=True)

    def run(self, code, *, results=0):
        """Runs a chunk; returns its results converted (one value, or a tuple)."""
        L = self.L
        top = lua.lua_gettop(L)
        st = lua.luaL_loadstring(L, code.encode())
        if st == LUA_OK:
            st = lua.lua_pcallk(L, 0, results, 0, 0, None)
        if st != LUA_OK:
            msg = self._string(-1, convert=True)
            lua.lua_settop(L, top)
            raise LuaError(msg)
        vals = tuple(self.value(top + 1 + i) for i in range(results))
        lua.lua_settop(L, top)
        return vals[0] if results == 1 else vals

    def eval(self, expr):
        return self.run("return " + expr, results=1)

    def collect(self):
        self.run("collectgarbage() collectgarbage()")

    def _error(self, status):
        """The error object dlb_* pushed: checks it, pops it, returns a DlbError."""
        L = self.L
        assert lua.lua_type(L, -1) == LUA_TTABLE, "no error object on the stack"
        lua.lua_getfield(L, -1, b"code")
        code = self._string(-1)
        lua.lua_getfield(L, -2, b"message")
        message = self._string(-1)
        lua.lua_settop(L, -4)
        return DlbError(status, code, message)

    def export_legacy(self, name, opts=None):
        """dlb_export_legacy of the global `name`: a DLManagedTensor* we now own."""
        L = self.L
        top = lua.lua_gettop(L)
        lua.lua_getglobal(L, name.encode())
        out = PMT()
        st = dlb.dlb_export_legacy(L, -1, ctypes.byref(opts) if opts else None, ctypes.byref(out))
        if st != 0:
            assert lua.lua_gettop(L) == top + 2, "the error object must be pushed"
            err = self._error(st)
            lua.lua_settop(L, top)
            raise err
        assert lua.lua_gettop(L) == top + 1, "nothing is left on success"
        lua.lua_settop(L, top)
        return out

    def push_legacy(self, name, tensor):
        """dlb_push_legacy, then the array becomes the global `name`."""
        L = self.L
        top = lua.lua_gettop(L)
        st = dlb.dlb_push_legacy(L, ctypes.cast(tensor, PMT))
        if st != 0:
            assert lua.lua_gettop(L) == top + 1, "the error object must be pushed"
            raise self._error(st)
        assert lua.lua_gettop(L) == top + 1, "the array must be pushed"
        lua.lua_setglobal(L, name.encode())

    def push_capsule_legacy(self, name, tensor):
        L = self.L
        top = lua.lua_gettop(L)
        dlb.dlb_push_capsule_legacy(L, ctypes.cast(tensor, PMT))
        assert lua.lua_gettop(L) == top + 1
        lua.lua_setglobal(L, name.encode())

    def capsule_take(self, name):
        """dlb_capsule_take of the global `name`: (tensor pointer, versioned)."""
        L = self.L
        top = lua.lua_gettop(L)
        lua.lua_getglobal(L, name.encode())
        ptr, versioned = ctypes.c_void_p(), ctypes.c_int(-1)
        st = dlb.dlb_capsule_take(L, -1, ctypes.byref(ptr), ctypes.byref(versioned))
        if st != 0:
            assert lua.lua_gettop(L) == top + 2, "the error object must be pushed"
            err = self._error(st)
            lua.lua_settop(L, top)
            raise err
        lua.lua_settop(L, top)
        return ptr.value, versioned.value


def numpy_to_lua(state, name, arr):
    """arr.__dlpack__() -> dlb_push_legacy, as a careful consumer does it: take
    the pointer, mark the capsule used at once, then hand it over."""
    cap = arr.__dlpack__()
    ptr = api.PyCapsule_GetPointer(cap, DLTENSOR)
    assert api.PyCapsule_SetName(cap, USED_DLTENSOR) == 0
    state.push_legacy(name, ptr)
    return cap


def data_pointer(arr):
    return arr.__array_interface__["data"][0]


class LuaProducer:
    """A Python producer over a Lua array (the global `name`), as NumPy sees it.

    __dlpack__ exports with dlb_export_legacy; with count=True the tensor is
    wrapped so that its deleter calls are counted (helper "wrapped" counter)."""

    def __init__(self, state, name, count=True, opts=None):
        self.state, self.name, self.count, self.opts = state, name, count, opts
        self.calls = []

    def __dlpack__(self, stream=None):
        self.calls.append(("__dlpack__", stream))
        tensor = self.state.export_legacy(self.name, self.opts)
        if self.count:
            tensor = helper.dlb_interop_wrap(tensor)
        return make_capsule(tensor)

    def __dlpack_device__(self):
        self.calls.append(("__dlpack_device__",))
        dev = self.state.run("return %s:__dlpack_device()" % self.name, results=2)
        return tuple(dev)


def index_expr(ndim, i):
    """Lua arguments for element (i, i, ..., i) of an ndim array."""
    return ", ".join([str(i)] * ndim)


class InteropCase(unittest.TestCase):
    def setUp(self):
        helper.dlb_interop_reset()
        self.lua = Lua()

    def tearDown(self):
        self.lua.close()
        gc.collect()

    def assertCounts(self, producer=0, wrapped=0, capsule=0):
        self.assertEqual(counts(), (producer, wrapped, capsule),
                         "deleter calls (producer, wrapped, capsule-destructor)")

    def base_pointer(self, name):
        """The data pointer dlbridge exports for the global `name` (export, read,
        give back)."""
        t = self.lua.export_legacy(name)
        ptr = t.contents.dl_tensor.data
        helper.dlb_interop_call_deleter(t)
        return ptr


# ---- dlbridge -> NumPy ------------------------------------------------------------

# name: (Lua code making `a`, a view of `base`; the NumPy array a must equal;
# its byte strides, or None; the byte offset of a's first element in base)
LUA_TO_NUMPY = {} if np is None else {
    "contiguous": ("base = dl.arange(12, {dtype = 'float64'}) a = base:view{3, 4}",
                   np.arange(12.0).reshape(3, 4), (32, 8), 0),
    "transposed": ("base = dl.arange(12, {dtype = 'float64'}) a = base:view{3, 4}:transpose()",
                   np.arange(12.0).reshape(3, 4).T, (8, 32), 0),
    "strided": ("base = dl.arange(10, {dtype = 'int32'}) a = base:slice(1, 1, -1, 2)",
                np.arange(10, dtype=np.int32)[::2], (8,), 0),
    "offset": ("base = dl.arange(10) a = base:slice(1, 4)", np.arange(10)[3:], (8,), 24),
    "negative_step": ("base = dl.arange(5) a = base:slice(1, -1, 1, -1)",
                      np.arange(5)[::-1], (-8,), 32),
    "negative_step_2d": ("base = dl.arange(6) a = base:view{2, 3}:slice(2, -1, 1, -1)",
                         np.arange(6).reshape(2, 3)[:, ::-1], (24, -8), 16),
    "size0": ("base = dl.zeros{0} a = base", np.zeros(0), None, None),  # no memory at all
    "size0_2d": ("base = dl.zeros{2, 3} a = base:slice(2, 3, 1)", np.zeros((2, 0)), None, None),
    "zero_d": ("base = dl.array{4.5, 5.5} a = base:select(1, 2)", np.array(5.5), (), 8),
    "float16": ("base = dl.array({1.5, -2, 0.25, 65504}, {dtype = 'float16'}) a = base",
                np.array([1.5, -2, 0.25, 65504], np.float16), (2,), 0),
    "int64": ("base = dl.array{1, -2, 4611686018427387904, math.mininteger} a = base",
              np.array([1, -2, 2**62, -2**63], np.int64), (8,), 0),
    "uint8": ("base = dl.array({0, 7, 255}, {dtype = 'uint8'}) a = base",
              np.array([0, 7, 255], np.uint8), (1,), 0),
    "complex64": ("base = dl.array({{re = 1, im = -2}, 3}, {dtype = 'complex64'}) a = base",
                  np.array([1 - 2j, 3], np.complex64), (8,), 0),
}

# NumPy 1.24's from_dlpack knows int, uint, float and complex only: it refuses
# kDLBool (added to NumPy in 1.25) and kDLBfloat before consuming the capsule.
# name: (Lua expression for `a`, its first element as Lua reads it back)
LUA_TO_NUMPY_REFUSED = {
    "bool": ("dl.array{true, false, true}", True),
    "bfloat16": ("dl.array({1.5, 2}, {dtype = 'bfloat16'})", 1.5),
}


@unittest.skipIf(np is None, "NumPy is not installed")
class DlbridgeToNumPy(InteropCase):
    """Each LUA_TO_NUMPY case becomes a test_<name> method (below the class)."""

    def check_case(self, code, expected, strides, offset):
        self.lua.run(code)
        producer = LuaProducer(self.lua, "a")
        x = np.from_dlpack(producer)
        # NumPy 1.24 calls type(x).__dlpack__(x) with no stream argument and
        # never asks __dlpack_device__.
        self.assertEqual(producer.calls, [("__dlpack__", None)])
        self.assertEqual(x.dtype, expected.dtype)
        self.assertEqual(x.shape, expected.shape)
        if strides is not None:
            self.assertEqual(x.strides, strides)
        np.testing.assert_array_equal(x, expected)
        self.assertCounts()  # NumPy consumed the capsule: no deleter yet
        nd = x.ndim
        if x.size:
            # Zero copy: NumPy's first element is where a's sits in base's
            # memory, and writes from Lua show in NumPy.
            self.assertEqual(data_pointer(x) - self.base_pointer("base"), offset)
            if nd:
                self.lua.run("a:set(%s, 42) a:set(%s, 7)" % (index_expr(nd, 1), index_expr(nd, -1)))
                self.assertEqual(x[(0,) * nd], 42)
                self.assertEqual(x[(-1,) * nd], 7)
            else:
                self.lua.run("a:set(42)")
                self.assertEqual(x[()], 42)
            # NumPy 1.24 makes legacy imports read-only.
            self.assertFalse(x.flags.writeable)
            with self.assertRaisesRegex(ValueError, "^assignment destination is read-only$"):
                x[(0,) * nd] = 1
        else:
            # Size 0: dlbridge's data is never NULL (LibTorch 1.13 never calls
            # the deleter of a NULL tensor; NumPy exports a pointer too) and is
            # 64-byte aligned; NumPy 1.24 views it read-only like any legacy import.
            ptr = self.base_pointer("a")
            self.assertIsNotNone(ptr)
            self.assertEqual(ptr % 64, 0)
            self.assertFalse(x.flags.writeable)
        del x
        gc.collect()
        self.assertCounts(wrapped=1)  # dlbridge's deleter: exactly once
        self.lua.run("a:delete() base:delete() a, base = nil, nil")
        self.lua.collect()

    def check_refused(self, code, first):
        self.lua.run("a = " + code)
        with self.assertRaises(RuntimeError) as cm:
            np.from_dlpack(LuaProducer(self.lua, "a"))
        self.assertEqual(str(cm.exception), "Unsupported dtype in DLTensor.")
        gc.collect()
        # NumPy left the capsule unused: its destructor gave the tensor back, once.
        self.assertCounts(wrapped=1, capsule=1)
        self.assertEqual(self.lua.eval("a:totable()[1]"), first)

    def test_readonly_array_is_copied_for_legacy(self):
        # The legacy ABI has no read-only flag: copy if needed (the default)
        # copies; copy = 0 refuses with COPY_REQUIRED.
        self.lua.run("z = dl.arange(3, {dtype = 'float64'}) r = z:view{1, 3}:expand{2, 3}")
        self.assertTrue(self.lua.eval("r.readonly"))
        x = np.from_dlpack(LuaProducer(self.lua, "r"))
        np.testing.assert_array_equal(x, [[0, 1, 2], [0, 1, 2]])
        self.assertEqual(x.strides, (24, 8))  # a compact copy, not the 0-stride view
        self.lua.run("z[1] = 99")  # a copy: the write stays in Lua
        self.assertEqual(x[0, 0], 0)
        del x
        gc.collect()
        self.assertCounts(wrapped=1)
        opts = ExportOptions()
        dlb.dlb_export_options_init(ctypes.byref(opts))
        opts.copy = 0
        with self.assertRaises(DlbError) as cm:
            np.from_dlpack(LuaProducer(self.lua, "r", opts=opts))
        self.assertEqual((cm.exception.name, cm.exception.code), ("COPY_REQUIRED", "COPY_REQUIRED"))
        self.assertEqual(lua.lua_gettop(self.lua.L), 0)

    def test_nonnegative_layout_for_consumers_that_refuse_negative_strides(self):
        self.lua.run("v = dl.arange(6, {dtype = 'float64'}):view{2, 3}:slice(2, -1, 1, -1)")
        self.assertEqual(self.lua.run("return v.strides[2]", results=1), -1)
        opts = ExportOptions()
        dlb.dlb_export_options_init(ctypes.byref(opts))
        opts.layout = DLB_LAYOUT_NONNEGATIVE
        x = np.from_dlpack(LuaProducer(self.lua, "v", opts=opts))
        np.testing.assert_array_equal(x, [[2, 1, 0], [5, 4, 3]])
        self.assertTrue(all(s >= 0 for s in x.strides))
        del x
        gc.collect()
        self.assertCounts(wrapped=1)

    def test_options_carry_their_version(self):
        # A mirror of an unknown (newer) layout is refused, never misread;
        # dlb_last_error tells a ctypes caller why without reading Lua.
        self.lua.run("a = dl.zeros{3}")
        opts = ExportOptions()
        dlb.dlb_export_options_init(ctypes.byref(opts))
        self.assertEqual(opts.version, 1)
        opts.version = 99
        with self.assertRaises(DlbError) as cm:
            self.lua.export_legacy("a", opts)
        self.assertEqual(cm.exception.code, "ARGUMENT")
        msg = ctypes.c_char_p()
        self.assertEqual(dlb.dlb_last_error(ctypes.byref(msg)), cm.exception.status)
        self.assertIn(b"dlb_export_legacy: ARGUMENT: dlb_export_options version 99", msg.value)

    def test_numpy_keeps_memory_after_delete_and_close(self):
        self.lua.run("a = dl.arange(1000, {dtype = 'float64'}) v = a:slice(1, 11, 20)")
        x = np.from_dlpack(LuaProducer(self.lua, "v"))
        self.lua.run("a:delete() v:delete() a, v = nil, nil")
        self.lua.collect()
        np.testing.assert_array_equal(x, np.arange(10.0, 20.0))
        self.lua.close()  # the deleter may run after lua_close
        np.testing.assert_array_equal(x, np.arange(10.0, 20.0))
        self.assertCounts()
        del x
        gc.collect()
        self.assertCounts(wrapped=1)

    def test_numpy_calls_the_dlbridge_deleter(self):
        # No counting wrapper: NumPy's deleter calls dlbridge's own, after the
        # Lua arrays are deleted and the state is closed (ASan checks the rest).
        self.lua.run("a = dl.arange(6, {dtype = 'float32'}):view{2, 3}")
        producer = LuaProducer(self.lua, "a", count=False)
        self.assertEqual(producer.__dlpack_device__(), (1, 0))
        x = np.from_dlpack(producer)
        self.lua.run("a:delete() a = nil")
        self.lua.collect()
        self.lua.close()
        np.testing.assert_array_equal(x, np.arange(6, dtype=np.float32).reshape(2, 3))
        del x
        gc.collect()

    def test_unconsumed_capsule_gives_back_once(self):
        self.lua.run("a = dl.arange(6)")
        cap = LuaProducer(self.lua, "a").__dlpack__()
        self.assertEqual(api.PyCapsule_GetName(cap), b"dltensor")
        del cap
        gc.collect()
        self.assertCounts(wrapped=1, capsule=1)
        # Unwrapped: the dlbridge deleter itself, through the capsule.
        cap = make_capsule(self.lua.export_legacy("a"))
        del cap
        gc.collect()
        self.assertEqual(self.lua.eval("a:totable()"), [0, 1, 2, 3, 4, 5])
        self.lua.run("a:delete() a = nil")
        self.lua.collect()
        self.assertCounts(wrapped=1, capsule=2)

    def test_consuming_twice_is_an_error(self):
        self.lua.run("a = dl.arange(4)")
        cap = LuaProducer(self.lua, "a").__dlpack__()

        class Same:
            def __dlpack__(self, stream=None):
                return cap

        x = np.from_dlpack(Same())
        self.assertEqual(api.PyCapsule_GetName(cap), b"used_dltensor")
        with self.assertRaises(ValueError) as cm:
            np.from_dlpack(Same())
        self.assertEqual(str(cm.exception), "PyCapsule_GetPointer called with incorrect name")
        del cap
        gc.collect()
        self.assertCounts()  # used: the destructor leaves it to NumPy
        del x
        gc.collect()
        self.assertCounts(wrapped=1)

    def test_lua_capsule_to_numpy(self):
        # a:to_dlpack{max_version = {0, 0}} in Lua, taken with dlb_capsule_take.
        self.lua.run("a = dl.arange(5, {dtype = 'float32'}) c = a:to_dlpack{max_version = {0, 0}}")
        self.assertEqual(self.lua.eval("c.versioned"), False)
        ptr, versioned = self.lua.capsule_take("c")
        self.assertEqual(versioned, 0)
        self.assertTrue(self.lua.eval("c.consumed"))
        with self.assertRaises(DlbError) as cm:
            self.lua.capsule_take("c")
        self.assertEqual(cm.exception.code, "CAPSULE_CONSUMED")
        cap = make_capsule(helper.dlb_interop_wrap(ctypes.cast(ptr, PMT)))

        class Holder:
            def __dlpack__(self, stream=None):
                return cap

        x = np.from_dlpack(Holder())
        del cap
        self.lua.run("c = nil a[2] = 20")
        self.lua.collect()
        np.testing.assert_array_equal(x, np.array([0, 20, 2, 3, 4], np.float32))
        del x
        gc.collect()
        self.assertCounts(wrapped=1)

    def test_numpy_cannot_reexport_its_legacy_import(self):
        # The import is read-only, and NumPy 1.24 cannot signal read-only.
        self.lua.run("a = dl.arange(3)")
        x = np.from_dlpack(LuaProducer(self.lua, "a"))
        with self.assertRaises(BufferError) as cm:
            x.__dlpack__()
        self.assertEqual(str(cm.exception),
                         "Cannot export readonly array since signalling readonly is "
                         "unsupported by DLPack.")
        del x
        gc.collect()
        self.assertCounts(wrapped=1)


# ---- NumPy -> dlbridge ------------------------------------------------------------

def _readonly(arr):
    arr.flags.writeable = False
    return arr


# NumPy 1.24 refuses to export these: bool (added in 1.25), read-only arrays
# (the legacy ABI has no read-only flag), longdouble.
# name: (a function making the array, NumPy's BufferError message)
NUMPY_TO_LUA_REFUSED = {
    "bool": (lambda: np.array([True, False]),
             "DLPack only supports signed/unsigned integers, float and complex dtypes."),
    "readonly": (lambda: _readonly(np.arange(3.0)),
                 "Cannot export readonly array since signalling readonly is unsupported by "
                 "DLPack."),
    "longdouble": (lambda: np.zeros(2, np.longdouble),
                   "DLPack only supports IEEE floating point types without padding (longdouble "
                   "typically is not IEEE)."),
}

# name: a function making the NumPy array (fresh for each test)
NUMPY_TO_LUA = {
    "contiguous": lambda: np.arange(12.0).reshape(3, 4),
    "transposed": lambda: np.arange(12.0).reshape(3, 4).T,
    "strided": lambda: np.arange(10, dtype=np.int32)[::2],
    "offset": lambda: np.arange(10)[3:],
    "negative_step": lambda: np.arange(5)[::-1],
    "negative_step_2d": lambda: np.arange(6).reshape(2, 3)[:, ::-1],
    "size0": lambda: np.zeros(0),
    "size0_2d": lambda: np.zeros((2, 0)),
    "zero_d": lambda: np.array(5.5),
    "float16": lambda: np.array([1.5, -2, 0.25, 65504], np.float16),
    "int64": lambda: np.array([1, -2, 2**62, -2**63], np.int64),
    "uint8": lambda: np.array([0, 7, 255], np.uint8),
    "complex128": lambda: np.array([1 - 2j, 3], np.complex128),
    # NumPy exports a misaligned float64 view as is (data at an odd address).
    "misaligned": lambda: np.ndarray((2,), np.float64, bytearray(
        b"\0" + np.array([1.5, -3.25], np.float64).tobytes()), offset=1),
}


@unittest.skipIf(np is None, "NumPy is not installed")
class NumPyToDlbridge(InteropCase):
    """Each NUMPY_TO_LUA case becomes a test_<name> method (below the class)."""

    def check_values(self, arr, strides=True):
        """x (the imported arr) has arr's dtype, shape, strides and values."""
        st = self.lua
        self.assertEqual(st.eval("x.dtype"), arr.dtype.name)
        self.assertEqual(st.eval("x.shape"), list(arr.shape))
        if arr.size and strides:
            self.assertEqual(st.eval("x.strides"), [s // arr.itemsize for s in arr.strides])
        self.assertFalse(st.eval("x.readonly"))  # a legacy import is writable in dlbridge
        if arr.dtype.kind == "c":
            flat = st.run("local t = {} for i, v in ipairs(x:totable()) do "
                          "t[#t + 1] = v.re t[#t + 1] = v.im end return t", results=1)
            self.assertEqual(flat, [p for z in arr.tolist() for p in (z.real, z.imag)])
        else:
            self.assertEqual(st.eval("x:totable()"), arr.tolist())

    def check_case(self, arr):
        rc = sys.getrefcount(arr)
        numpy_to_lua(self.lua, "x", arr)
        self.assertEqual(sys.getrefcount(arr), rc + 1)  # NumPy's manager_ctx
        self.check_values(arr)
        nd = arr.ndim
        if arr.size:
            # Lua writes are seen in NumPy, NumPy writes in Lua.
            self.lua.run("x:set(%s42)" % (index_expr(nd, 1) + ", " if nd else ""))
            self.assertEqual(arr[(0,) * nd], 42)
            arr[(-1,) * nd] = 7
            got = "x:get(%s)" % index_expr(nd, -1)
            if arr.dtype.kind == "c":
                got += ".re"
            self.assertEqual(self.lua.eval(got), 7)
        # The memory outlives the ndarray while Lua holds it.
        expected = arr.copy()
        ref = weakref.ref(arr)
        del arr
        gc.collect()
        self.assertIsNotNone(ref(), "NumPy's deleter ran too early")
        self.check_values(expected, strides=False)
        self.lua.run("x = nil")
        self.lua.collect()
        self.assertIsNone(ref(), "NumPy's deleter did not run")

    def test_overlapping_strides_import_read_only(self):
        # NumPy's as_strided views are writeable and NumPy exports them as
        # they are; in dlbridge one element standing for several is read-only.
        from numpy.lib.stride_tricks import as_strided
        base = np.arange(3.0)
        for shape, strides in (((4, 3), (0, 8)), ((2, 2), (8, 8))):
            with self.subTest(strides=strides):
                arr = as_strided(base, shape, strides)
                self.assertTrue(arr.flags.writeable)
                numpy_to_lua(self.lua, "x", arr)
                self.assertTrue(self.lua.eval("x.readonly"))
                self.assertEqual(self.lua.eval("x:totable()"), arr.tolist())
                self.assertEqual(self.lua.eval("select(2, pcall(x.set, x, 1, 1, 99)).code"),
                                 "READ_ONLY")
                np.testing.assert_array_equal(base, [0.0, 1.0, 2.0])
                self.lua.run("x = nil")
                self.lua.collect()
        # Plain strides stay writable (no false alarm on NumPy's own layouts).
        numpy_to_lua(self.lua, "y", np.arange(6.0).reshape(2, 3).T)
        self.assertFalse(self.lua.eval("y.readonly"))

    def test_deleter_exactly_once_refcount(self):
        arr = np.arange(8.0)
        rc = sys.getrefcount(arr)
        numpy_to_lua(self.lua, "x", arr)
        self.lua.run("v1 = x:slice(1, 2, 5) v2 = x:view{2, 4}[2]")
        self.lua.run("x:delete() x = nil")
        self.lua.collect()
        self.assertEqual(sys.getrefcount(arr), rc + 1)  # the views still hold it
        self.assertEqual(self.lua.eval("v2:totable()"), [4.0, 5.0, 6.0, 7.0])
        self.lua.run("v1:delete() v1 = nil")
        self.lua.collect()
        self.assertEqual(sys.getrefcount(arr), rc + 1)
        self.lua.run("v2 = nil")
        self.lua.collect()
        self.assertEqual(sys.getrefcount(arr), rc)  # once: not rc - 1
        self.lua.run("x = nil")
        self.lua.collect()
        self.assertEqual(sys.getrefcount(arr), rc)

    def test_lua_close_releases(self):
        arr = np.arange(4.0)
        rc = sys.getrefcount(arr)
        numpy_to_lua(self.lua, "x", arr)
        self.lua.run("y = x[2]")
        self.lua.close()
        self.assertEqual(sys.getrefcount(arr), rc)

    def test_lua_close_on_another_thread_without_the_gil(self):
        # NumPy's deleter runs on the closing thread; NumPy 1.24 takes the GIL
        # itself (numpy #22510), and dlbridge calls it with no Lua state left.
        import threading
        arr = np.arange(4.0)
        rc = sys.getrefcount(arr)
        numpy_to_lua(self.lua, "x", arr)
        close = ctypes.CDLL(lua._name).lua_close  # CDLL: releases the GIL
        close.argtypes = [c_L]
        t = threading.Thread(target=close, args=(self.lua.L,))
        self.lua.L = None
        t.start()
        t.join()
        self.assertEqual(sys.getrefcount(arr), rc)

    def check_refused(self, arr, message):
        with self.assertRaises(BufferError) as cm:
            arr.__dlpack__()
        self.assertEqual(str(cm.exception), message)

    def test_stream_refused(self):
        # Host memory only: any stream other than None is refused.
        with self.assertRaises(RuntimeError) as cm:
            np.arange(3.0).__dlpack__(stream=1)
        self.assertEqual(str(cm.exception), "NumPy only supports stream=None.")
        self.assertEqual(np.arange(3.0).__dlpack_device__(), (1, 0))

    def test_rejected_tensor_calls_numpy_deleter_once(self):
        # A tensor dlbridge rejects (here: NumPy's, retyped to a 128-bit float
        # after we took it) goes back to NumPy at once, exactly once.
        arr = np.arange(4.0)
        rc = sys.getrefcount(arr)
        cap = arr.__dlpack__()
        ptr = ctypes.cast(api.PyCapsule_GetPointer(cap, DLTENSOR), PMT)
        api.PyCapsule_SetName(cap, USED_DLTENSOR)
        ptr.contents.dl_tensor.dtype.bits = 128
        with self.assertRaises(DlbError) as cm:
            self.lua.push_legacy("x", ptr)
        self.assertEqual((cm.exception.name, cm.exception.code), ("DTYPE", "DTYPE"))
        self.assertEqual(lua.lua_gettop(self.lua.L), 0)
        del cap
        gc.collect()
        self.assertEqual(sys.getrefcount(arr), rc)

    def test_numpy_capsule_through_a_lua_capsule(self):
        # dlb_push_capsule_legacy: Lua code consumes it with dl.from_dlpack.
        arr = np.arange(6.0)
        rc = sys.getrefcount(arr)
        cap = arr.__dlpack__()
        ptr = api.PyCapsule_GetPointer(cap, DLTENSOR)
        api.PyCapsule_SetName(cap, USED_DLTENSOR)
        self.lua.push_capsule_legacy("c", ptr)
        self.assertEqual(self.lua.eval("c.versioned"), False)
        self.assertEqual(self.lua.eval("c.device"), [1, 0])
        self.lua.run("x = dl.from_dlpack(c) x[1] = -1")
        self.assertTrue(self.lua.eval("c.consumed"))
        self.assertEqual(arr[0], -1)
        self.lua.run("c, x = nil, nil")
        self.lua.collect()
        self.assertEqual(sys.getrefcount(arr), rc)
        # Never consumed: collecting the Lua capsule gives the tensor back.
        cap = arr.__dlpack__()
        ptr = api.PyCapsule_GetPointer(cap, DLTENSOR)
        api.PyCapsule_SetName(cap, USED_DLTENSOR)
        self.lua.push_capsule_legacy("c", ptr)
        self.assertEqual(sys.getrefcount(arr), rc + 1)
        self.lua.run("c = nil")
        self.lua.collect()
        self.assertEqual(sys.getrefcount(arr), rc)

    def test_round_trip_numpy_lua_numpy(self):
        arr = np.arange(6.0).reshape(2, 3)
        rc = sys.getrefcount(arr)
        numpy_to_lua(self.lua, "x", arr)
        y = np.from_dlpack(LuaProducer(self.lua, "x"))
        self.assertEqual(data_pointer(y), data_pointer(arr))
        arr[1, 2] = 50
        self.assertEqual(y[1, 2], 50)
        self.lua.run("x = nil")
        self.lua.collect()
        self.assertEqual(sys.getrefcount(arr), rc + 1)  # y still holds the tensor
        del y
        gc.collect()
        self.assertCounts(wrapped=1)
        self.assertEqual(sys.getrefcount(arr), rc)


for _name, _case in LUA_TO_NUMPY.items():
    setattr(DlbridgeToNumPy, "test_" + _name, lambda self, c=_case: self.check_case(*c))
for _name, _case in LUA_TO_NUMPY_REFUSED.items():
    setattr(DlbridgeToNumPy, "test_%s_refused" % _name, lambda self, c=_case: self.check_refused(*c))
for _name, _make in NUMPY_TO_LUA.items():
    setattr(NumPyToDlbridge, "test_" + _name, lambda self, m=_make: self.check_case(m()))
for _name, (_make, _message) in NUMPY_TO_LUA_REFUSED.items():
    setattr(NumPyToDlbridge, "test_%s_refused" % _name,
            lambda self, m=_make, msg=_message: self.check_refused(m(), msg))


# ---- hand-made producers -------------------------------------------------------------

@unittest.skipIf(np is None, "NumPy is not installed")
class HandMadeProducer(InteropCase):
    def test_unconsumed_capsule(self):
        cap = make_capsule(helper.dlb_interop_make_f64(5))
        self.assertCounts()
        del cap
        gc.collect()
        self.assertCounts(producer=1, capsule=1)

    def test_numpy_consumes(self):
        cap = make_capsule(helper.dlb_interop_make_f64(5))

        class Holder:
            def __dlpack__(self, stream=None):
                return cap

        x = np.from_dlpack(Holder())
        np.testing.assert_array_equal(x, np.arange(5.0))
        del cap
        gc.collect()
        self.assertCounts()  # renamed "used_dltensor": the destructor does nothing
        del x
        gc.collect()
        self.assertCounts(producer=1)

    def test_dlbridge_consumes(self):
        t = helper.dlb_interop_make_f64(5)
        self.lua.push_legacy("x", t)
        self.assertEqual(self.lua.eval("x:totable()"), [0.0, 1.0, 2.0, 3.0, 4.0])
        self.lua.run("x[5] = 40")  # zero copy: the write lands in the producer's memory
        data = ctypes.cast(t.contents.dl_tensor.data, ctypes.POINTER(ctypes.c_double))
        self.assertEqual(data[4], 40.0)
        self.lua.run("x = nil")
        self.lua.collect()
        self.assertCounts(producer=1)

    def test_byte_offset_and_null_strides(self):
        # NumPy always sends byte_offset 0; a producer may not.
        t = helper.dlb_interop_make_f64(5)
        t.contents.dl_tensor.byte_offset = 16
        t.contents.dl_tensor.shape[0] = 3
        t.contents.dl_tensor.strides = None
        self.lua.push_legacy("x", t)
        self.assertEqual(self.lua.eval("x:totable()"), [2.0, 3.0, 4.0])
        self.lua.run("x = nil")
        self.lua.collect()
        self.assertCounts(producer=1)

    def test_dlbridge_capsule_unconsumed_and_consumed(self):
        self.lua.push_capsule_legacy("c", helper.dlb_interop_make_f64(3))
        self.lua.run("c = nil")
        self.lua.collect()
        self.assertCounts(producer=1)
        self.lua.push_capsule_legacy("c", helper.dlb_interop_make_f64(3))
        self.lua.run("x = dl.from_dlpack(c)")
        self.assertEqual(self.lua.eval("x:totable()"), [0.0, 1.0, 2.0])
        self.lua.run("ok, e = pcall(dl.from_dlpack, c) assert(not ok and e.code == 'CAPSULE_CONSUMED')")
        self.lua.run("c = nil")
        self.lua.collect()
        self.assertCounts(producer=1)
        self.lua.run("x:delete()")
        self.assertCounts(producer=2)

    def test_rejected_by_dlbridge(self):
        for field, value, code in (("code", 99, "DTYPE"), ("device", 2, "DEVICE_UNAVAILABLE"),
                                   ("ndim", -1, "DLPACK_INVALID")):
            with self.subTest(field):
                helper.dlb_interop_reset()
                t = helper.dlb_interop_make_f64(3)
                if field == "code":
                    t.contents.dl_tensor.dtype.code = value
                elif field == "device":
                    t.contents.dl_tensor.device.device_type = value
                else:
                    t.contents.dl_tensor.ndim = value
                with self.assertRaises(DlbError) as cm:
                    self.lua.push_legacy("x", t)
                self.assertEqual(cm.exception.code, code)
                self.assertEqual(lua.lua_gettop(self.lua.L), 0)
                self.assertCounts(producer=1)

    def test_push_before_require(self):
        # dlb_preload only: pushing opens dlbridge in the state, and a later
        # require returns that same module (the array is one of its arrays).
        bare = Lua(require=False)
        try:
            bare.push_legacy("x", helper.dlb_interop_make_f64(2))
            self.assertCounts(producer=0)
            self.assertEqual(bare.run("return require('dlbridge').is_array(x) and x.size", results=1), 2)
            bare.run("x = nil collectgarbage()")
            self.assertCounts(producer=1)
        finally:
            bare.close()


if __name__ == "__main__":
    unittest.main()
