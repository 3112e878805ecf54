#!/usr/bin/env python3
"""Writes the seed corpora tests/fuzz/corpus/<harness>/ (README.md has the formats).

Each seed is spelled out byte by byte so that it can be changed along with the
harness; run `FUZZ_VERBOSE=1 build-fuzz/fuzz/<harness> corpus/<harness>/<seed>` to
see what a seed does.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def write(harness, name, data):
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))


# ---- fuzz_dlpack_import -------------------------------------------------------
# dtype table indices (byte 5)
INT8, INT16, INT32, INT64, U8, U16, U32, U64 = range(8)
F16, F32, F64, BF16, C64, C128, BOOL = range(8, 15)
VERSIONED, NULL_STRIDES, FAIL_ALLOC = 0x01, 0x08, 0x40


def route(r):
    return r << 1


def stride(k):
    """A small signed stride -8..8 (stride byte 96..191)."""
    return 96 + (k + 8) % 17


# A Lua program touching most ops (op byte, array byte, arguments).
OPS = [0, 0, 11, 0, 12, 0, 13, 0, 1, 0, 0, 0, 2, 0, 0, 64, 65, 64, 4, 0, 1, 0, 1,
       17, 0, 0, 1, 17, 0, 1, 1, 15, 0, 2, 1, 16, 0, 0, 8, 0, 0, 1, 1, 19, 0,
       14, 0, 0, 0, 0, 9, 0, 0, 6, 0, 0, 7, 0, 2, 3, 0, 0, 0, 1, 5, 0, 1, 0,
       10, 0, 0, 22, 0, 0, 18, 0, 2, 1, 23, 0, 0, 0, 20, 1, 21, 24, 0]


def tensor(name, mode, dtype, shape, strides=None, flags=0, byte_offset=0, pattern=7,
           alloc=0):
    data = [mode, 0, 3, flags, len(shape), dtype, 0, 0, byte_offset, pattern, alloc]
    data += shape  # extents below 160 are b % 8
    if strides is not None:
        data += strides
    elif not mode & NULL_STRIDES:
        data += [0] * len(shape)  # row-major
    write("fuzz_dlpack_import", name, data + OPS)


tensor("versioned-f64-2x3", VERSIONED, F64, [2, 3])
tensor("legacy-int32-4-capsule", route(1), INT32, [4])
tensor("versioned-readonly-f32-transposed", VERSIONED, F32, [3, 2],
       strides=[stride(1), stride(3)], flags=0x01)
tensor("versioned-bool-0d", VERSIONED, BOOL, [])
tensor("versioned-size0-int64", VERSIONED | route(1), INT64, [0, 3])
tensor("legacy-c128-2x2-offset", 0, C128, [2, 2], byte_offset=129)
tensor("versioned-u8-reversed", VERSIONED, U8, [4], strides=[stride(-1)])
tensor("versioned-int64-copy-route", VERSIONED | route(2), INT64, [3, 3])
tensor("versioned-unconsumed-capsule", VERSIONED | route(3), F64, [2])
tensor("versioned-f16-null-strides-oom", VERSIONED | NULL_STRIDES | FAIL_ALLOC, F16, [2, 2, 2],
       alloc=0x12)
# 2^40 elements (extent byte 168), stride 0 (stride byte 192): one element of memory
tensor("versioned-huge-extent-stride0", VERSIONED, F64, [168], strides=[192])
# flags 0x20: a host memory limit of 255 * 64 + 1 bytes
tensor("versioned-bf16-expand-views", VERSIONED, BF16, [1, 3], strides=[stride(0), stride(1)],
       flags=0x20, pattern=255)


# ---- fuzz_lua_api -------------------------------------------------------------
def S(i):
    """The byte of slot S[i]."""
    return i - 1


ONE = [0, 0, 1]  # a value: g_value -> number -> integer -> 1

LUA_SEEDS = {
    "views-and-printing": [
        [0, 8, S(4), 12, 7],                      # S[4] = dl.arange(12, {dtype = 'int64'})
        [2, 0, S(5), 0, S(4), 3, 3, 4],           # S[5] = S[4]:view{3, 4}
        [2, 2, S(6), 0, S(5), 1, 4, 5],           # S[6] = S[5]:transpose(1, 2)
        [2, 6, S(7), 0, S(6), 5, 4, 200, 64, 2],  # S[7] = S[6]:slice(2, nil, -3, nil)
        [4, 6, S(8), 0, S(6)],                    # tostring(S[6])
        [4, 4, S(8), 0, S(7)],                    # S[7]:totable()
        [4, 5, S(8), 0, S(6)],                    # S[6]:tobytes()
        [6, 0, S(8), 0, S(6), 0],                 # S[8] = S[6]:to_dlpack()
        [6, 4, S(2), 0, 0, S(8), 0],              # dl.from_dlpack(S[8])
        [6, 4, S(3), 0, 0, S(8), 0],              # ... again: CAPSULE_CONSUMED
        [8, 0, 0, S(4)],                          # S[4]:delete()
        [5, 0, S(1), 0, S(5), 4],                 # S[5][1]: a view outlives its base
    ],
    "create-dtypes": [
        [0, 0, S(4), 0, 8, 2, 3, 4, 1, 3, 12],    # dl.zeros({2, 3, 4, 1}, {dtype = 'bool'})
        [0, 1, S(5), 0, 3, 2, 2, 3, 2],           # dl.ones({2, 2}, {dtype = 'float16'})
        [0, 3, S(6), 0, 1, 3, 0, 0, 0, 3, 13],    # dl.full({3}, 0, {dtype = 'complex64'})
        [0, 4, S(7), 0, 103, 0, 10, 0, 0, 1, 0, 10, 0, 0, 2, 0, 10, 0, 0, 3, 0],  # dl.array{1, 2, 3}
        [0, 6, 3, S(8), 0, 0, 0, 0, 1, 0, 5, 0],  # dl.linspace(0, 1, 5)
        [0, 7, S(2), 0, 2, 0, 0, 1, 1, 2, 0],     # dl.frombytes(16 zero bytes, 'float64', {2})
        [4, 1, S(3), 0, S(4), 9],                 # S[4]:astype('uint16')
        [4, 2, 0, S(5)] + ONE,                    # S[5]:fill(1)
        [4, 3, 0, S(6), 10, 0, 0, 2],             # S[6]:copy_from(2)
    ],
    "hostile-shapes": [
        [0, 0, S(4), 0, 229, 0],                  # dl.zeros{MI, 0}
        [5, 0, S(5), 0, S(4), 2],                 # S[4][-1]
        [4, 4, S(6), 0, S(4)],                    # S[4]:totable()
        [0, 0, S(5), 0, 230, 0],                  # dl.zeros{MI, MI}
        [0, 0, S(6), 0, 12] + [0] * 31 + [0],     # 31 dims
        [0, 0, S(7), 0, 14] + [0] * 33 + [0],     # 33 dims
        [0, 0, S(8), 0, 236, 0],                  # dl.zeros{1000000000}
        [0, 5, 3, S(2), 0, 0, 0, 0, 154, 0, 97, 0],  # dl.arange(0, mi, -2)
        [2, 9, S(3), 0, S(1), 225, 0],            # S[1]:expand{nan}
    ],
    "indexing": [
        [0, 8, S(4), 12, 10],                     # dl.arange(12, {dtype = 'uint32'})
        [5, 0, S(5), 0, S(4), 2],                 # S[4][-1]
        [5, 2, 0, S(4), 5, 10, 0, 0, 3],          # S[4][2] = 3
        [5, 3, 0, S(4), 3, 0, 0, 0],              # S[4].size = 0
        [5, 4, 2, S(6), 0, S(1), 4, 5],           # S[1]:get(1, 2)
        [5, 5, 2, 0, S(1), 4, 5, 0, 170, 2],      # S[1]:set(1, 2, 0.5)
        [5, 1, S(7), 0, S(1), 0],                 # S[1].shape
        [2, 12, S(8), 0, S(1), 4, 5],             # S[1][1][2] = S[1][1][2]
    ],
    "dlpack-protocol": [
        [6, 0, S(4), 0, S(1), 81, 2],             # to_dlpack{max_version = {0, 0}, fallback = 'cpu'}
        [6, 4, S(5), 0, 4, S(1), 0],              # a producer exporting S[1]
        [6, 4, S(6), 0, 6, S(2), 0],              # a legacy-only producer
        [6, 4, S(7), 0, 7, 0, 0],                 # a producer raising a dlbridge error
        [6, 5, S(8), 0, 8, 0, 3],                 # a producer whose lookup raises
        [6, 6, S(2), 0, S(4), 0],                 # capsule.version
        [6, 7, S(3), 0, S(4)],                    # tostring(capsule)
        [6, 4, S(2), 0, 0, S(4), 11],             # dl.from_dlpack(S[4], {copy = true})
        [6, 3, 0, S(1)],                          # S[1]:__dlpack_device()
    ],
    "finalizers": [
        [10, 8, 0, 0, S(1), 0, 0],                # __gc deletes S[1]; dropped
        [9, 1],                                   # collectgarbage()
        [10, 0, 8, S(5), 3, 2, 0, 1],             # __gc makes an array; kept until lua_close
        [10, 8, 0, 0, S(2), 1, 14, 11, S(7), 0, 1],  # __gc deletes S[2], reads dl.memory(); kept
        [15, 5, S(3), 9],                         # 7 short-lived arrays
        [9, 1],
    ],
    "coroutines": [
        [11, S(6), 1, 0, 8, S(7), 12, 3, 13, S(7), 4, 6, S(8), 0, S(7), 1, 8, 0, 0, S(7)],
        [12, 0x40 | S(6)],                        # resume S[6]
        [12, 0x80 | S(6)],                        # coroutine.close(S[6]): closes its <close>
        [11, S(5), 0, 2, 0, S(2), 0, S(1), 3, 3, 4, 12, 0],  # left suspended
        [13, S(1), 4, 6, S(8), 0, S(1)],          # do local x <close> = S[1]; tostring end
        [12, 0x40 | S(5)],
    ],
    "memory-faults": [
        [0, 0, S(4), 216, 3, 2, 3, 0],            # dl.zeros{2, 3}: 2 allocation failures
        [4, 4, S(5), 205, S(1)],                  # totable with 8 KiB of Lua heap
        [6, 0, S(6), 190, S(1), 0],               # to_dlpack with a dead heap
        [14, 12, 0, 2],                           # LIMIT(4096)
        [0, 0, S(7), 0, 3, 200, 146, 200, 146, 0],  # dl.zeros{1000, 1000}: over the limit
        [14, 11, S(8), 0],                        # dl.memory()
        [14, 12, 0, 0],                           # LIMIT(0)
    ],
    "transfer-and-misc": [
        [7, 1, S(4), 0, S(1), 0, 1],              # dl.device_put(S[1], 'cpu', {copy = true})
        [7, 0, S(5), 0, S(1), 3, 2],              # S[1]:to('cpu:1', {donate = true})
        [14, 0, S(6), 0],                         # dl.backends()
        [14, 4, S(7), 0, 3, 2, 4],                # dl.try(dl.zeros, {2, 4})
        [14, 6, S(8), 0, S(7)],                   # S[7] .. '!'
        [14, 7, S(2), 0, S(7)],                   # S[7]:is('SHAPE')
        [14, 8, S(3), 0, S(7)],                   # dl.traceback(S[7])
    ],
    "export-options": [
        [6, 0, S(4), 0, S(1), 0x81, 0],           # {max_version = {1, 3}}
        [6, 0, S(5), 0, S(1), 0x83, 4, 0],        # {max_version = {1, 99}, dl_device = {1, 0}}
        [6, 0, S(6), 0, S(2), 0x84, 1],           # {copy = true}
        [6, 0, S(7), 0, S(1), 0x88, 1],           # {stream = 1}
        [6, 0, S(8), 0, S(1), 0x90],              # {fallback = 'cpu'}
        [6, 2, S(3), 0, S(2), 244],               # {max_version = {2^31, 0}}
    ],
}

for name, statements in LUA_SEEDS.items():
    write("fuzz_lua_api", name, [b for st in statements for b in st])

# ---- fuzz_npy --------------------------------------------------------------------
# .npy files: the magic, the version, the header's length (2 bytes little-endian
# in 1.0, 4 in 2.0 and 3.0), the dict padded with spaces and a newline so that
# the data starts at a multiple of 64 (as np.save pads), then the data.


def npy(dict_text, data=b"", major=1):
    pre = 10 if major == 1 else 12
    text = dict_text.encode("latin1")
    header = text + b" " * ((64 - (pre + len(text) + 1) % 64) % 64) + b"\n"
    length = len(header).to_bytes(2 if major == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([major, 0]) + length + header + bytes(data)


def npy_dict(descr, shape, fortran=False):
    """The dict np.save writes ('descr' may be a list: a structured dtype)."""
    return "{'descr': %r, 'fortran_order': %s, 'shape': %r, }" % (descr, fortran, shape)


write("fuzz_npy", "f8_c_order", npy(npy_dict("<f8", (2, 3)), range(48)))
write("fuzz_npy", "i4_fortran_order", npy(npy_dict("<i4", (2, 3), True), range(24)))
write("fuzz_npy", "i2_big_endian", npy(npy_dict(">i2", (5,)), range(10)))
write("fuzz_npy", "c8_big_endian_fortran", npy(npy_dict(">c8", (2, 2), True), range(32)))
write("fuzz_npy", "c16_0d", npy(npy_dict("<c16", ()), range(16)))
write("fuzz_npy", "b1_bytes_0_1_2", npy(npy_dict("|b1", (3,)), [0, 1, 2]))
write("fuzz_npy", "u1_size_0", npy(npy_dict("|u1", (3, 0))))
write("fuzz_npy", "f2_version_2", npy(npy_dict("<f2", (4,)), range(8), major=2))
write("fuzz_npy", "u8_version_3", npy(npy_dict("<u8", (3,)), range(24), major=3))
write("fuzz_npy", "u2_double_quotes_no_comma",
      npy('{"descr": "<u2", "fortran_order": False, "shape": (2,)}', range(4)))
write("fuzz_npy", "i8_python2_long", npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1L,), }",
                                          range(8)))
write("fuzz_npy", "structured", npy(npy_dict([("x", "<f4"), ("y", "<i2")], (2,)), range(12)))
write("fuzz_npy", "unicode", npy(npy_dict("<U2", (1,)), range(8)))
write("fuzz_npy", "datetime", npy(npy_dict("<M8[ns]", (1,)), range(8)))
write("fuzz_npy", "negative_extent", npy(npy_dict("<f4", (-1,))))
write("fuzz_npy", "truncated_data", npy(npy_dict("<f8", (4,)), range(31)))


# ---- fuzz_safetensors: byte 0 the mode, then a safetensors file -------------------
# mode: bit 0 through Lua and the C API, bit 1 DLB_LOAD_COPY, bit 2 Lua
# allocation faults, bit 3 every allocation fails; high nibble the countdown.
import json
import struct


def safetensors(entries, data, meta=None, pad=True):
    h = {} if meta is None else {"__metadata__": meta}
    h.update(entries)
    js = json.dumps(h, separators=(",", ":")).encode()
    if pad:
        js += b" " * (-len(js) % 8)
    return struct.pack("<Q", len(js)) + js + data


one = safetensors({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}},
                  struct.pack("<6f", *range(6)))
many = safetensors({"a": {"dtype": "U8", "shape": [3], "data_offsets": [0, 3]},
                    "m": {"dtype": "BOOL", "shape": [2], "data_offsets": [3, 5]},
                    "h": {"dtype": "BF16", "shape": [1], "data_offsets": [5, 7]},
                    "z": {"dtype": "C64", "shape": [], "data_offsets": [7, 15]},
                    "e": {"dtype": "I64", "shape": [0, 2], "data_offsets": [15, 15]},
                    "d": {"dtype": "F64", "shape": [1], "data_offsets": [15, 23]}},
                   b"\1\2\3\1\2\0\x3f" + struct.pack("<ffd", 1, 2, 0.5),
                   meta={"format": "pt", "k\u00e9": "v\n"})
for mode in (0x00, 0x01, 0x03, 0x15, 0x2d):
    write("fuzz_safetensors", "one_%02x" % mode, [mode] + list(one))
    write("fuzz_safetensors", "many_%02x" % mode, [mode] + list(many))
write("fuzz_safetensors", "empty", [1] + list(safetensors({}, b"")))
write("fuzz_safetensors", "bool2", [1] + list(safetensors(
    {"m": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}}, b"\0\2\xff")))
write("fuzz_safetensors", "misaligned", [1] + list(safetensors(
    {"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},
     "f": {"dtype": "F32", "shape": [2], "data_offsets": [1, 9]}},
    b"\x09" + struct.pack("<ff", 1.5, -2))))
