"""safetensors files between dlbridge and a second implementation (Python + NumPy).

Python's `safetensors` package is not a Debian package, so this file reads and
writes the format by hand from its specification (8 bytes N little-endian,
N bytes of UTF-8 JSON, the data), the way the reference implementation lays
files out (data sorted by decreasing dtype size, then by name; the header
padded with spaces to a multiple of 8), and checks against NumPy's values:

- files Python writes (every dtype the format shares with dlbridge, 0-d and
  empty tensors, metadata, an unpadded header, a misaligned tensor) load in
  dlbridge with the right dtypes, shapes and bytes;
- files dlbridge writes pass the reference reader's checks (the header a JSON
  object, tensors tiling the data with no hole, each tensor's byte size, every
  tensor aligned) and hold the right values.

dlbridge runs in lua5.4 subprocesses ($DLB_LUA, default lua5.4 on the PATH).
Run from tests/interop:

    DLBRIDGE_BUILD=/path/to/build /usr/bin/python3 -m unittest -v test_safetensors
"""

import json
import os
import struct
import subprocess
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
BUILD = os.environ.get("DLBRIDGE_BUILD", os.path.join(ROOT, "build"))

# The format's dtypes dlbridge has: name -> (NumPy dtype, dlbridge dtype).
# BF16 has no NumPy dtype: its bits travel as uint16.
DTYPES = {
    "BOOL": ("?", "bool"), "U8": ("<u1", "uint8"), "I8": ("<i1", "int8"),
    "U16": ("<u2", "uint16"), "I16": ("<i2", "int16"), "F16": ("<f2", "float16"),
    "BF16": ("<u2", "bfloat16"), "U32": ("<u4", "uint32"), "I32": ("<i4", "int32"),
    "F32": ("<f4", "float32"), "U64": ("<u8", "uint64"), "I64": ("<i8", "int64"),
    "F64": ("<f8", "float64"), "C64": ("<c8", "complex64"),
}


def run_lua(code):
    """Runs Lua code with dlbridge as `dl`; returns what it prints."""
    env = dict(os.environ)
    env["LUA_PATH"] = os.path.join(ROOT, "lua", "?.lua") + ";" + \
        os.path.join(ROOT, "lua", "?", "init.lua") + ";;"
    env["LUA_CPATH"] = os.path.join(BUILD, "lib", "?.so") + ";;"
    lua = os.environ.get("DLB_LUA", "lua5.4")
    out = subprocess.run([lua, "-e", "dl = require 'dlbridge'\n" + code], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError("lua failed: " + out.stderr)
    return out.stdout


def write_safetensors(tensors, metadata=None, pad=True, order=None):
    """The bytes of a file: tensors name -> ndarray (little-endian, C order).
    The data is laid out as the reference writer lays it out unless `order`
    (a list of names) says otherwise."""
    if order is None:
        order = sorted(tensors, key=lambda k: (-tensors[k][0].dtype.itemsize, k))
    header, data, at = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name in order:
        a, st_dtype = tensors[name]
        raw = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": st_dtype, "shape": list(a.shape),
                        "data_offsets": [at, at + len(raw)]}
        data += raw
        at += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def read_safetensors(blob):
    """Parses a file as the reference reader does; returns (tensors, metadata,
    data_start) with tensors name -> (dtype, shape, bytes)."""
    (n,) = struct.unpack("<Q", blob[:8])
    assert n <= len(blob) - 8 and n <= 100_000_000, "header size"
    text = blob[8:8 + n].decode("utf-8")
    assert text.startswith("{"), "the header starts with {"
    header = json.loads(text)
    metadata = header.pop("__metadata__", {})
    assert all(isinstance(v, str) for v in metadata.values())
    entries = sorted(header.items(), key=lambda kv: tuple(kv[1]["data_offsets"]))
    at, tensors = 0, {}
    for name, e in entries:
        assert set(e) == {"dtype", "shape", "data_offsets"}, name
        begin, end = e["data_offsets"]
        assert begin == at, "no hole before " + name
        size = np.dtype(DTYPES[e["dtype"]][0]).itemsize
        assert end - begin == int(np.prod(e["shape"], dtype=np.int64)) * size, name
        assert (8 + n + begin) % min(size, 8) == 0, name + " is aligned"
        tensors[name] = (e["dtype"], e["shape"], blob[8 + n + begin:8 + n + end])
        at = end
    assert 8 + n + at == len(blob), "no bytes after the last tensor"
    return tensors, metadata, 8 + n


def sample(st_dtype, shape=(2, 3)):
    """Values of a dtype with both ends of its range (NumPy dtype, bytes)."""
    np_dtype = DTYPES[st_dtype][0]
    count = int(np.prod(shape))
    if st_dtype == "BOOL":
        a = (np.arange(count) % 2 == 0)
    elif st_dtype == "BF16":  # bfloat16 bits of 1.5, -2.25, ...: the top half of float32
        f = np.linspace(-3, 3, count).astype("<f4")
        a = (f.view("<u4") >> 16).astype("<u2")
    elif st_dtype == "C64":
        a = (np.arange(count) + 1j * np.arange(count)[::-1]).astype(np_dtype)
    elif np.dtype(np_dtype).kind in "iu":
        info = np.iinfo(np_dtype)
        a = np.array([int(info.min), int(info.max), 1] * count, dtype=np_dtype)[:count]
    else:
        a = np.linspace(-1e4, 1e4, count).astype(np_dtype)
    return a.reshape(shape).astype(np_dtype)


class SafetensorsInterop(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "model.safetensors")

    def tearDown(self):
        self.dir.cleanup()

    def load_in_dlbridge(self, blob, opts="nil"):
        """Loads blob in dlbridge; returns name -> (dtype, shape, bytes, readonly)."""
        with open(self.path, "wb") as f:
            f.write(blob)
        out = run_lua(
            "local t, m = dl.load_safetensors(%r, %s)\n"
            "for k, a in pairs(t) do\n"
            "  print('T', k, a.dtype, table.concat(a.shape, 'x'), a.readonly,\n"
            "        (a:tobytes():gsub('.', function(c)\n"
            "          return string.format('%%02x', c:byte()) end)))\n"
            "end\n"
            "for k, v in pairs(m) do print('M', k, v) end\n" % (self.path, opts))
        tensors, metadata = {}, {}
        for line in out.splitlines():
            fields = line.split("\t")
            if fields[0] == "T":
                shape = [int(x) for x in fields[3].split("x")] if fields[3] else []
                tensors[fields[1]] = (fields[2], shape, bytes.fromhex(fields[5]),
                                      fields[4] == "true")
            else:
                metadata[fields[1]] = fields[2]
        return tensors, metadata

    def test_python_files_load_in_dlbridge(self):
        tensors = {"t_" + k.lower(): (sample(k), k) for k in DTYPES}
        tensors["scalar"] = (np.array(7.5, "<f8"), "F64")
        tensors["empty"] = (np.zeros((0, 4), "<f4"), "F32")
        for pad in (True, False):
            blob = write_safetensors(tensors, {"format": "np", "note": "caf\u00e9"}, pad=pad)
            loaded, metadata = self.load_in_dlbridge(blob)
            self.assertEqual(metadata, {"format": "np", "note": "caf\u00e9"})
            self.assertEqual(set(loaded), set(tensors))
            for name, (a, st_dtype) in tensors.items():
                dtype, shape, raw, readonly = loaded[name]
                self.assertEqual(dtype, DTYPES[st_dtype][1], name)
                self.assertEqual(shape, list(a.shape), name)
                self.assertEqual(raw, a.tobytes(), name)
                self.assertTrue(readonly, name)

    def test_misaligned_and_other_orders(self):
        # a 1-byte tensor first puts every later one at an odd offset
        tensors = {"a": (np.array([9], "<u1"), "U8"), "f": (sample("F32"), "F32"),
                   "d": (sample("F64", (3,)), "F64")}
        blob = write_safetensors(tensors, order=["a", "f", "d"])
        for opts in ("nil", "{copy = true}"):
            loaded, _ = self.load_in_dlbridge(blob, opts)
            for name, (a, _) in tensors.items():
                self.assertEqual(loaded[name][2], a.tobytes(), name)
                self.assertEqual(loaded[name][3], opts == "nil", name)

    def test_dlbridge_files_read_in_python(self):
        out = run_lua(
            "local t = {\n"
            "  w = dl.arange(12, {dtype = 'float32'}):view(3, 4):transpose(),\n"
            "  b = dl.array({1.5, -2.25}, {dtype = 'bfloat16'}),\n"
            "  m = dl.array{true, false, true},\n"
            "  i = dl.array({-5, 7}, {dtype = 'int16'}),\n"
            "  u = dl.full({2}, -1, {dtype = 'int64'}):astype('uint64'),\n"
            "  z = dl.array({{re = 1, im = -2}}, {dtype = 'complex64'}),\n"
            "  s = dl.array(3, {dtype = 'uint8'}),\n"
            "  e = dl.zeros({0, 2}, {dtype = 'float64'}),\n"
            "}\n"
            "dl.save_safetensors(%r, t, {framework = 'dlbridge'})\n" % self.path)
        self.assertEqual(out, "")
        with open(self.path, "rb") as f:
            tensors, metadata, _ = read_safetensors(f.read())
        self.assertEqual(metadata, {"framework": "dlbridge"})

        def values(name):
            st_dtype, shape, raw = tensors[name]
            return np.frombuffer(raw, DTYPES[st_dtype][0]).reshape(shape)

        np.testing.assert_array_equal(values("w"), np.arange(12, dtype="f4").reshape(3, 4).T)
        np.testing.assert_array_equal(
            (values("b").astype("<u4") << 16).view("<f4"), np.array([1.5, -2.25], "f4"))
        np.testing.assert_array_equal(values("m"), [True, False, True])
        self.assertEqual(tensors["m"][2], b"\1\0\1")
        np.testing.assert_array_equal(values("i"), [-5, 7])
        np.testing.assert_array_equal(values("u"), [2**64 - 1] * 2)
        np.testing.assert_array_equal(values("z"), [1 - 2j])
        self.assertEqual(tensors["s"][:2], ("U8", []))
        self.assertEqual(values("s"), 3)
        self.assertEqual(tensors["e"][1], [0, 2])
        self.assertEqual([tensors[k][0] for k in "wbmiuzse"],
                         ["F32", "BF16", "BOOL", "I16", "U64", "C64", "U8", "F64"])

    def test_views_saved_as_numpy_sees_them(self):
        # Non-contiguous tensors stream through one bounded buffer (16 MiB):
        # transposed, reversed (negative strides), strided and permuted views,
        # one of them larger than the buffer, hold what NumPy's views hold.
        out = run_lua(
            "local big = dl.arange(2048 * 2304, {dtype = 'float32'}):view(2048, 2304)\n"
            "local m = dl.arange(60, {dtype = 'int16'}):view(3, 4, 5)\n"
            "local c = dl.arange(12, {dtype = 'float64'}):view(3, 4):astype('complex64')\n"
            "dl.save_safetensors(%r, {\n"
            "  big_t = big:transpose(),\n"
            "  big_rev = big:slice(1, -1, 1, -1):slice(2, 1, -1, 3),\n"
            "  perm = m:permute{3, 1, 2},\n"
            "  rev = m:slice(3, -1, 1, -1):slice(1, -1, 1, -1),\n"
            "  step = m:slice(2, 1, -1, 2),\n"
            "  ct = c:transpose():slice(1, -1, 1, -1),\n"
            "})\n" % self.path)
        self.assertEqual(out, "")
        with open(self.path, "rb") as f:
            tensors, _, _ = read_safetensors(f.read())

        def values(name):
            st_dtype, shape, raw = tensors[name]
            return np.frombuffer(raw, DTYPES[st_dtype][0]).reshape(shape)

        big = np.arange(2048 * 2304, dtype="f4").reshape(2048, 2304)
        m = np.arange(60, dtype="i2").reshape(3, 4, 5)
        c = np.arange(12, dtype="f8").reshape(3, 4).astype("c8")
        np.testing.assert_array_equal(values("big_t"), big.T)
        np.testing.assert_array_equal(values("big_rev"), big[::-1, ::3])
        np.testing.assert_array_equal(values("perm"), m.transpose(2, 0, 1))
        np.testing.assert_array_equal(values("rev"), m[::-1, :, ::-1])
        np.testing.assert_array_equal(values("step"), m[:, ::2])
        np.testing.assert_array_equal(values("ct"), c.T[::-1])
        self.assertEqual(tensors["big_t"][1], [2304, 2048])

    def test_reference_layout_round_trip(self):
        # A file in the reference writer's layout, saved again by dlbridge: the
        # same tensors, and the same data section byte for byte (dlbridge lays
        # the data out as the reference does; only the JSON's key order differs).
        tensors = {"a.weight": (sample("F32"), "F32"), "a.bias": (sample("F16", (3,)), "F16"),
                   "step": (np.array(3, "<i8"), "I64"), "mask": (sample("BOOL", (4,)), "BOOL"),
                   "z": (sample("C64", (2,)), "C64"), "b": (sample("BF16", (5,)), "BF16")}
        blob = write_safetensors(tensors, {"k": "v"})
        with open(self.path, "wb") as f:
            f.write(blob)
        out = run_lua("local t, m = dl.load_safetensors(%r)\n"
                      "dl.save_safetensors(%r, t, m)" % (self.path, self.path + "2"))
        self.assertEqual(out, "")
        with open(self.path + "2", "rb") as f:
            again = f.read()
        mine, metadata, start = read_safetensors(again)
        theirs, _, their_start = read_safetensors(blob)
        self.assertEqual(metadata, {"k": "v"})
        self.assertEqual(mine, theirs)
        self.assertEqual(again[start:], blob[their_start:])


if __name__ == "__main__":
    unittest.main()
