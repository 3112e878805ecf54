"""NumPy .npy files <-> dlbridge, both ways, with NumPy as the oracle.

Run with Debian's interpreter and NumPy (1.24), from tests/interop (ctest
registers it as interop.npy):

    DLBRIDGE_BUILD=/path/to/build /usr/bin/python3 -m unittest -v test_npy

A lua_State with dlbridge is driven in this process through liblua5.4 and
libdlbridge.so (ctypes). NumPy writes files (np.save and
np.lib.format.write_array, every version, dtype, order and byte order) that
dl.load and dl.fromnpy must read with the right values; dlbridge writes
files (dl.save, dl.tonpy, from every layout of view) that np.load must read
with the right values, byte for byte what np.save writes.
"""

import ctypes
import io
import os
import shutil
import tempfile
import unittest

import numpy as np

from lua_ctypes import BUILD, c_L, dlb, lua


LUA_TNIL, LUA_TBOOLEAN, LUA_TNUMBER, LUA_TSTRING = 0, 1, 3, 4


class LuaError(Exception):
    pass


class Lua:
    """A lua_State with `dl = require "dlbridge"`; run() returns results as
    Python values (strings as bytes)."""

    def __init__(self):
        self.L = lua.luaL_newstate()
        assert self.L
        lua.luaL_openlibs(self.L)
        dlb.dlb_preload(self.L)
        self.run("dl = require 'dlbridge'")

    def close(self):
        if self.L:
            lua.lua_close(self.L)
            self.L = None

    def _bytes(self, idx, convert=False):
        n = ctypes.c_size_t()
        p = (lua.luaL_tolstring if convert else lua.lua_tolstring)(self.L, idx, ctypes.byref(n))
        s = ctypes.string_at(p, n.value) if p else None
        if convert:
            lua.lua_settop(self.L, -2)
        return s

    def _value(self, idx):
        t = lua.lua_type(self.L, idx)
        if t == LUA_TNIL:
            return None
        if t == LUA_TBOOLEAN:
            return bool(lua.lua_toboolean(self.L, idx))
        if t == LUA_TNUMBER:
            if lua.lua_isinteger(self.L, idx):
                return lua.lua_tointegerx(self.L, idx, None)
            return lua.lua_tonumberx(self.L, idx, None)
        if t == LUA_TSTRING:
            return self._bytes(idx)
        return self._bytes(idx, convert=True).decode("utf-8", "replace")

    def run(self, code, results=0):
        L = self.L
        top = lua.lua_gettop(L)
        st = lua.luaL_loadstring(L, code.encode())
        if st == 0:
            st = lua.lua_pcallk(L, 0, results, 0, 0, None)
        if st != 0:
            msg = self._bytes(-1, convert=True).decode("utf-8", "replace")
            lua.lua_settop(L, top)
            raise LuaError(msg)
        vals = tuple(self._value(top + 1 + i) for i in range(results))
        lua.lua_settop(L, top)
        return vals[0] if results == 1 else vals

    def set_bytes(self, name, data):
        lua.lua_pushlstring(self.L, data, len(data))
        lua.lua_setglobal(self.L, name.encode())

    def error_code(self, code):
        """The dlbridge error code that the chunk raises (None if it succeeds)."""
        return self.run("local ok, err = pcall(function() %s end)\n"
                        "if ok then return nil end\n"
                        "return dl.is_error(err) and err.code or tostring(err)" % code, 1)


# NumPy's name for each dlbridge dtype .npy can hold (bfloat16 has none).
DTYPES = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32,
          "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
          "uint64": np.uint64, "float16": np.float16, "float32": np.float32,
          "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128}


def sample(np_dtype, shape, seed):
    """Random values of the dtype, with the extremes (and NaN/inf for floats)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    dt = np.dtype(np_dtype)
    if dt.kind == "b":
        flat = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        flat[:2] = [info.min, info.max][:min(n, 2)] if n else flat[:2]
    elif dt.kind == "f":
        flat = (rng.standard_normal(n) * 1e3).astype(dt)
        special = np.array([np.nan, np.inf, -np.inf, -0.0, np.finfo(dt).max, np.finfo(dt).tiny],
                           dtype=dt)
        flat[:min(n, 6)] = special[:min(n, 6)]
    else:
        part = np.float32 if dt == np.complex64 else np.float64
        flat = (rng.standard_normal(n).astype(part) + 1j * rng.standard_normal(n).astype(part))
        flat = flat.astype(dt)
        if n:
            flat[0] = complex(np.nan, -np.inf)
    return flat.reshape(shape)


def native_bytes(arr):
    """The elements in C order and this machine's byte order."""
    return np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("="))).tobytes()


class NpyCase(unittest.TestCase):
    def setUp(self):
        self.lua = Lua()
        self.dir = tempfile.mkdtemp(prefix="dlb-npy-interop-")

    def tearDown(self):
        self.lua.close()
        shutil.rmtree(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def lua_str(self, path):
        return "'%s'" % path.replace("\\", "\\\\").replace("'", "\\'")


class NumpyWritesDlbridgeReads(NpyCase):
    """Files NumPy writes load in dlbridge with the right values."""

    def check_load(self, arr, path, zero_copy):
        """dl.load (view and copy=true) and dl.fromnpy of the file agree with arr."""
        want = native_bytes(arr)
        p = self.lua_str(path)
        for how in ("dl.load(%s)" % p, "dl.load(%s, {copy = true})" % p,
                    "dl.fromnpy(io.open(%s, 'rb'):read('a'))" % p):
            dtype, shape, data, readonly, ndim = self.lua.run(
                "local a = %s\n"
                "return a.dtype, table.concat(a.shape, ','), a:tobytes(), a.readonly, a.ndim"
                % how, 5)
            self.assertEqual(dtype.decode(), arr.dtype.name, how)
            self.assertEqual(shape.decode(), ",".join(str(d) for d in arr.shape), how)
            self.assertEqual(ndim, arr.ndim)
            self.assertEqual(data, want, how)
            # a default load is read-only, viewed (zero_copy) or converted
            expect_readonly = how.startswith("dl.load(%s)" % p)
            self.assertEqual(readonly, expect_readonly, how)
        # a view where the file allows one, else copy = false is refused
        code = self.lua.run("local ok, e = pcall(dl.load, %s, {copy = false})\n"
                            "return ok and 'view' or e.code" % p, 1)
        self.assertEqual(code.decode(), "view" if zero_copy else "COPY_REQUIRED", path)

    def test_every_dtype_both_orders_both_byte_orders(self):
        for k, (name, np_dtype) in enumerate(DTYPES.items()):
            for order in ("C", "F"):
                for byteorder in ("<", ">"):
                    with self.subTest(dtype=name, order=order, byteorder=byteorder):
                        dt = np.dtype(np_dtype).newbyteorder(byteorder)
                        arr = np.array(sample(np_dtype, (3, 4, 5), k), dtype=dt, order=order)
                        path = self.path("a.npy")
                        np.save(path, arr)
                        swapped = dt.itemsize > 1 and byteorder == ">"
                        self.check_load(arr, path, zero_copy=not swapped)
                        if order == "F" and not swapped:
                            # a Fortran-order file is a view with column-major strides
                            strides = self.lua.run(
                                "return table.concat(dl.load(%s).strides, ',')" % self.lua_str(path), 1)
                            self.assertEqual(strides, b"1,3,12")

    def test_versions_1_2_3(self):
        arr = sample(np.float32, (4, 6), 7)
        for version in ((1, 0), (2, 0), (3, 0)):
            with self.subTest(version=version):
                path = self.path("v.npy")
                with open(path, "wb") as f:
                    np.lib.format.write_array(f, arr, version=version)
                with open(path, "rb") as f:
                    self.assertEqual(f.read(8)[6:], bytes(version))
                self.check_load(arr, path, zero_copy=True)

    def test_0d_and_size_0(self):
        for arr in (np.array(3.25), np.array(True), np.array(-7, dtype=np.int16),
                    np.zeros((0,), np.float64), np.zeros((3, 0, 2), np.complex64),
                    np.zeros((0, 4), np.uint8, order="F")):
            with self.subTest(shape=arr.shape, dtype=arr.dtype.name):
                path = self.path("z.npy")
                np.save(path, arr)
                self.check_load(arr, path, zero_copy=True)

    def test_non_contiguous_numpy_arrays_saved_by_numpy(self):
        base = sample(np.int32, (6, 8), 3)
        for view in (base.T, base[::2, ::-3], base[:, 1]):
            path = self.path("nc.npy")
            np.save(path, view)
            self.check_load(view, path, zero_copy=True)

    def test_bool_bytes_other_than_0_and_1_load_as_true(self):
        path = self.path("b.npy")
        raw = np.frombuffer(bytes([0, 1, 2, 255]), dtype=np.bool_)
        np.save(path, raw)
        data, readonly = self.lua.run(
            "local a = dl.load(%s) return a:tobytes(), a.readonly" % self.lua_str(path), 2)
        self.assertEqual(data, bytes([0, 1, 1, 1]))
        self.assertTrue(readonly)  # a converted copy, read-only like every default load

    def test_dtypes_dlbridge_lacks_raise_dtype(self):
        cases = [np.array(["ab", "c"]), np.array([b"ab", b"c"]),
                 np.array([1, "x", None], dtype=object),
                 np.zeros(2, dtype=[("x", "<f4"), ("y", "<i2")]), np.zeros(2, dtype="V4"),
                 np.array(["2020-01-01"], dtype="datetime64[ns]"),
                 np.array([5], dtype="timedelta64[s]"), np.zeros(2, dtype=np.longdouble),
                 np.zeros(2, dtype=np.clongdouble)]
        for arr in cases:
            with self.subTest(dtype=str(arr.dtype)):
                path = self.path("u.npy")
                np.save(path, arr, allow_pickle=True)
                self.assertEqual(self.lua.error_code("dl.load(%s)" % self.lua_str(path)), b"DTYPE")

    def test_corrupted_numpy_files_are_coded_errors(self):
        # Every prefix, and every single-byte change of the header: an array
        # or a coded error, never a crash (ASan checks the reads).
        buf = io.BytesIO()
        np.save(buf, sample(np.float64, (2, 3), 1))
        good = buf.getvalue()
        self.lua.run("function try_npy(s) local ok, err = pcall(dl.fromnpy, s)\n"
                     "  assert(ok or dl.is_error(err), tostring(err)) return ok end")
        for n in range(len(good)):
            self.lua.set_bytes("s", good[:n])
            self.assertEqual(self.lua.error_code("dl.fromnpy(s)"), b"FORMAT")
        rng = np.random.default_rng(5)
        for i in range(128):
            bad = bytearray(good)
            bad[i] = int(rng.integers(0, 256))
            self.lua.set_bytes("s", bytes(bad))
            self.lua.run("try_npy(s)")


class DlbridgeWritesNumpyReads(NpyCase):
    """Files dlbridge writes load in NumPy with the right values."""

    VIEWS = {  # Lua expression of a view of `a` (3x4x5) -> the same view in NumPy
        "a": lambda a: a,
        "a:transpose()": lambda a: a.transpose(),
        "a:permute{2, 3, 1}": lambda a: a.transpose(1, 2, 0),
        "a:slice(3, 1, 5, 2)": lambda a: a[:, :, 0:5:2],
        "a:slice(2, -1, 1, -1)": lambda a: a[:, ::-1, :],
        "a:select(2, 3)": lambda a: a[:, 2, :],
        "a:select(1, 2):select(1, 1)": lambda a: a[1, 0],
        "a:narrow(1, 2, 0)": lambda a: a[1:1],
        "a:select(1, 1):select(1, 1):select(1, 1)": lambda a: a[0, 0, 0],
        "a:slice(1, 1, 1):expand{4, 4, 5}": lambda a: np.broadcast_to(a[0:1], (4, 4, 5)),
    }

    def test_every_dtype_every_layout(self):
        for k, (name, np_dtype) in enumerate(DTYPES.items()):
            base = sample(np_dtype, (3, 4, 5), 100 + k)
            self.lua.set_bytes("raw", base.tobytes())
            self.lua.run("a = dl.frombytes(raw, '%s', {3, 4, 5})" % name)
            for expr, view_of in self.VIEWS.items():
                with self.subTest(dtype=name, view=expr):
                    want = view_of(base)
                    path = self.path("d.npy")
                    s = self.lua.run("local v = %s\ndl.save(%s, v)\nreturn dl.tonpy(v)"
                                     % (expr, self.lua_str(path)), 1)
                    got = np.load(path)
                    self.assertEqual(got.dtype, want.dtype)
                    self.assertEqual(got.shape, want.shape)
                    self.assertEqual(np.ascontiguousarray(got).tobytes(),
                                     np.ascontiguousarray(want).tobytes())
                    # C order, but a Fortran-contiguous view (a transpose) as it lies
                    fortran = want.flags.f_contiguous and not want.flags.c_contiguous
                    self.assertTrue(got.flags.f_contiguous if fortran else got.flags.c_contiguous)
                    with open(path, "rb") as f:
                        self.assertEqual(f.read(), s)
                    # byte for byte what np.save writes for the same view
                    buf = io.BytesIO()
                    np.save(buf, want)
                    self.assertEqual(s, buf.getvalue())

    def test_large_non_contiguous_array_goes_through_the_buffer(self):
        # 2 x 24 MiB float64 rows, every other column: more than the 16 MiB
        # buffer, so rows are written one at a time.
        n = 3 * 1024 * 1024
        path = self.path("big.npy")
        self.lua.run("local a = dl.arange(2 * 2 * %d):view{2, 2 * %d}\n"
                     "dl.save(%s, a:slice(2, 2, nil, 2))" % (n, n, self.lua_str(path)))
        got = np.load(path, mmap_mode="r")
        self.assertEqual(got.shape, (2, n))
        want = np.arange(2 * 2 * n, dtype=np.int64).reshape(2, 2 * n)[:, 1::2]
        self.assertTrue(np.array_equal(got, want))

    def test_bfloat16_raises_dtype(self):
        self.assertEqual(self.lua.error_code("dl.tonpy(dl.zeros(2, {dtype = 'bfloat16'}))"),
                         b"DTYPE")
        self.assertEqual(self.lua.error_code(
            "dl.save(%s, dl.zeros(2, {dtype = 'bfloat16'}))" % self.lua_str(self.path("h.npy"))),
            b"DTYPE")
        self.assertFalse(os.path.exists(self.path("h.npy")))

    def test_round_trip_through_both(self):
        arr = np.asfortranarray(sample(np.complex128, (5, 7), 9)).astype(">c16")
        path = self.path("r.npy")
        np.save(path, arr)
        self.lua.run("dl.save(%s, dl.load(%s))" % (self.lua_str(path), self.lua_str(path)))
        back = np.load(path)
        self.assertEqual(back.dtype, np.dtype("<c16"))
        self.assertTrue(back.flags.f_contiguous)  # loaded with Fortran strides, saved as it lies
        self.assertEqual(native_bytes(back), native_bytes(arr))


if __name__ == "__main__":
    unittest.main()
