/* fuzz_dlpack_import.c -- DLPack import through the C API, with producer
 * tensors built from the fuzz bytes, both ABIs (tests/fuzz/README.md has the
 * input format).
 *
 * The importer trusts the producer's data pointer, so the harness computes
 * itself (overflow-checked, in 128-bit arithmetic) the byte range the claimed
 * geometry reaches. When that range is small it mallocs exactly that range
 * (ASan then catches a one-byte overread) and the Lua side may read and write
 * elements; otherwise data points at a small buffer and the Lua side only does
 * what touches no element (metadata, views, export without copy).
 *
 * Invariants checked (a broken one aborts):
 * - the deleter runs exactly once: at once when the import fails, never while
 *   the imported array lives, and by lua_close at the latest;
 * - the importer never accepts a tensor that is invalid by the contract
 *   (ndim outside 0..32, negative extents, NULL data with elements, a byte
 *   range that overflows int64, an unknown dtype, a major version other than 1);
 * - a READ_ONLY tensor's memory is never written (checksum at the deleter);
 * - a capsule cannot be consumed twice, even after a failed import;
 * - a zero-copy export + import keeps shape, strides, dtype and read-only;
 * - a tensor two of whose indices reach one element imports read-only, and
 *   the strides that reach no element (extent-1 dims, all of a size-0
 *   tensor) come out compact row-major (both checked by brute force). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lauxlib.h>
#include "dlbridge.h"
#include "fuzz_common.h"

/* At most this many bytes of producer memory are really allocated. */
#define BACKING_LIMIT ((size_t)1 << 20)
/* Shape/strides arrays are never longer than this (ndim may claim more). */
#define MAX_ENTRIES 40

typedef struct producer {
  int versioned;
  int has_deleter;
  int deleter_calls;
  int readonly; /* READ_ONLY flag set on a versioned tensor */
  int backed;   /* every element the geometry reaches is ours to touch */
  DLManagedTensorVersioned *v;
  DLManagedTensor *l;
  int64_t *shape, *strides;
  unsigned char *block; /* the producer's memory (exactly the reachable range) */
  size_t block_size;
  uint64_t checksum; /* of block, for READ_ONLY tensors */
} producer;

static uint64_t checksum(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

static void release_memory(producer *p) {
  free(p->block);
  free(p->shape);
  free(p->strides);
  p->block = NULL;
  p->shape = p->strides = NULL;
}

/* Frees everything the tensor owns, including the managed struct itself:
 * any later touch by dlbridge is a use-after-free for ASan. */
static void on_delete(producer *p) {
  if (p->deleter_calls++ != 0) fuzz_fail("the deleter ran twice");
  if (p->readonly && p->block && checksum(p->block, p->block_size) != p->checksum)
    fuzz_fail("the memory of a READ_ONLY tensor was written");
  release_memory(p);
  free(p->v);
  free(p->l);
  p->v = NULL;
  p->l = NULL;
}

static void deleter_versioned(DLManagedTensorVersioned *self) { on_delete(self->manager_ctx); }
static void deleter_legacy(DLManagedTensor *self) { on_delete(self->manager_ctx); }

/* ---- selectors: fuzz bytes -> hostile values --------------------------------- */

static int32_t pick_ndim(fuzz_bytes *b) {
  static const int32_t special[] = {5,  6,         8,         31, 32,  33, 40, -1,
                                    -2, INT32_MIN, INT32_MAX, 64, 100, 0,  1,  2};
  uint8_t s = fb_u8(b);
  return s < 200 ? s % 5 : special[s % 16];
}

static int64_t pick_extent(fuzz_bytes *b) {
  static const int64_t special[] = {-1,
                                    INT64_MIN,
                                    INT64_MAX,
                                    INT64_C(1) << 31,
                                    INT64_C(1) << 32,
                                    INT64_C(1) << 62,
                                    1000,
                                    65536,
                                    INT64_C(1) << 40,
                                    INT64_MAX / 2 + 1,
                                    INT64_C(3037000500),
                                    -2,
                                    255,
                                    256,
                                    INT64_C(1) << 20,
                                    10};
  uint8_t s = fb_u8(b);
  if (s < 160) return s % 8;
  if (s < 192) return special[s % 16];
  return (int64_t)fb_u64(b);
}

/* A stride; `contiguous` is the row-major stride of this dim (when known). */
static int64_t pick_stride(fuzz_bytes *b, int64_t contiguous) {
  static const int64_t special[] = {0,
                                    INT64_MIN,
                                    INT64_MAX,
                                    -(INT64_C(1) << 31),
                                    INT64_C(1) << 31,
                                    INT64_C(1) << 62,
                                    -(INT64_C(1) << 62),
                                    INT64_MAX / 3,
                                    INT64_MIN / 3,
                                    1000,
                                    -1000,
                                    65536,
                                    INT64_C(1) << 40,
                                    -7,
                                    9,
                                    1};
  uint8_t s = fb_u8(b);
  if (s < 96) return contiguous;
  if (s < 192) return (int64_t)((s - 96) % 17) - 8;
  if (s < 224) return special[s % 16];
  return (int64_t)fb_u64(b);
}

static DLDataType pick_dtype(fuzz_bytes *b) {
  static const uint8_t table[][2] = {{0, 8},   {0, 16},  {0, 32}, {0, 64}, {1, 8},  {1, 16},
                                     {1, 32},  {1, 64},  {2, 16}, {2, 32}, {2, 64}, {4, 16},
                                     {5, 64},  {5, 128}, {6, 8},  {2, 64}, {2, 8},  {3, 8},
                                     {1, 128}, {6, 16},  {0, 1},  {0, 4},  {5, 32}, {7, 8}};
  DLDataType t;
  uint8_t s = fb_u8(b);
  if (s < 216) {
    int k = s % (int)(sizeof table / sizeof table[0]);
    t.code = table[k][0];
    t.bits = table[k][1];
    t.lanes = 1;
    if (s >= 200) t.lanes = (uint16_t)(s - 198); /* 2..17 lanes */
  } else {
    t.code = fb_u8(b);
    t.bits = fb_u8(b);
    t.lanes = fb_u16(b);
  }
  return t;
}

static DLDevice pick_device(fuzz_bytes *b) {
  static const int32_t types[] = {
      kDLCPU,   kDLCUDAHost, kDLCUDAManaged, kDLROCMHost, kDLCUDA, kDLROCM, kDLOpenCL, kDLVulkan,
      kDLMetal, kDLVPI,      kDLExtDev,      14,          0,       -1,      INT32_MAX, 18};
  static const int32_t ids[] = {1, -1, INT32_MIN, INT32_MAX, 7, 2, 0, 255};
  DLDevice d;
  uint8_t s = fb_u8(b), i = fb_u8(b);
  d.device_type = (DLDeviceType)(s < 128 ? kDLCPU : types[s % 16]);
  d.device_id = i < 200 ? 0 : ids[i % 8];
  return d;
}

static uint64_t pick_byte_offset(fuzz_bytes *b, uint64_t item) {
  static const uint64_t special[] = {(uint64_t)PTRDIFF_MAX,
                                     (uint64_t)PTRDIFF_MAX + 1,
                                     UINT64_MAX,
                                     UINT64_C(1) << 40,
                                     UINT64_C(1) << 62,
                                     UINT64_C(1) << 63,
                                     UINT64_MAX - 7,
                                     4096,
                                     1,
                                     3,
                                     65535,
                                     UINT64_C(1) << 32,
                                     (uint64_t)PTRDIFF_MAX - 7,
                                     8,
                                     16,
                                     64};
  uint8_t s = fb_u8(b);
  if (s < 128) return 0;
  if (s < 176) return (uint64_t)(s - 128) * item; /* aligned */
  if (s < 208) return (uint64_t)(s - 176);        /* unaligned */
  if (s < 240) return special[s % 16];
  return fb_u64(b);
}

/* ---- the geometry, computed independently of dlbridge ----------------------------- */

typedef struct geometry {
  int known;            /* ndim in range, extents >= 0, nothing overflowed */
  int64_t numel;        /* when known */
  __int128 first, last; /* byte range [first, last) from data, when known and numel > 0 */
} geometry;

static int dl_itemsize(DLDataType t, uint64_t *item) {
  uint64_t bits = (uint64_t)t.bits * t.lanes;
  *item = bits ? (bits + 7) / 8 : 1;
  return 0;
}

static geometry measure(int32_t ndim, const int64_t *shape, const int64_t *strides, uint64_t item,
                        uint64_t byte_offset) {
  geometry g = {0, 0, 0, 0};
  __int128 numel = 1, lo = 0, hi = 0, nonzero = 1;
  const __int128 max64 = INT64_MAX;
  if (ndim < 0 || ndim > DLB_MAX_NDIM || (ndim > 0 && !shape)) return g;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0) return g;
    if (shape[d] == 0) numel = 0;
  }
  if (numel == 0) { /* size 0 reaches no memory, whatever the other extents */
    g.known = 1;
    return g;
  }
  for (int d = 0; d < ndim; d++) {
    nonzero *= shape[d];
    if (nonzero > max64) return g;
  }
  numel = nonzero;
  g.numel = (int64_t)numel;
  for (int d = 0; d < ndim; d++) {
    __int128 span;
    if (shape[d] <= 1) continue;
    span = (__int128)(shape[d] - 1) * (strides ? strides[d] : 0);
    if (!strides) continue; /* row-major: handled below */
    if (span > 0) hi += span;
    else lo += span;
    if (span > max64 || span < -max64 - 1 || hi > max64 || lo < -max64 - 1) return g;
  }
  if (!strides) hi = numel - 1;
  g.first = lo * (__int128)item + (__int128)byte_offset;
  g.last = (hi + 1) * (__int128)item + (__int128)byte_offset;
  if (g.first < -max64 - 1 || g.first > max64 || g.last < -max64 - 1 || g.last > max64) return g;
  g.known = 1;
  return g;
}

/* ---- building the tensor ---------------------------------------------------------- */

typedef struct header {
  uint8_t mode, flags_sel, alloc_fail, pattern;
} header;

/* mode bits */
#define M_VERSIONED 0x01
#define M_ROUTE(m) (((m) >> 1) & 3)
#define M_NULL_STRIDES 0x08
#define M_NULL_DATA 0x10
#define M_NO_DELETER 0x20
#define M_FAIL_ALLOC 0x40
#define M_NO_BACKING 0x80

static void build(producer *p, fuzz_bytes *b, header *h, geometry *g) {
  uint32_t major, minor;
  uint64_t flags, item, byte_offset;
  int32_t ndim;
  int entries;
  DLDataType dtype;
  DLDevice device;
  DLTensor t;
  void *data;
  int64_t row[MAX_ENTRIES];

  h->mode = fb_u8(b);
  {
    static const uint32_t majors[] = {0, 2, 3, UINT32_MAX, 0x80000001u, 0x100, 1, 0};
    uint8_t sel = fb_u8(b);
    major = sel < 240 ? DLB_DLPACK_MAJOR : majors[sel % 8];
  }
  minor = fb_u8(b);
  if (minor >= 250) minor = UINT32_MAX - (255 - minor);
  h->flags_sel = fb_u8(b);
  flags = h->flags_sel & 7;
  if (h->flags_sel & 0x80) flags |= UINT64_C(1) << 63;
  ndim = pick_ndim(b);
  dtype = pick_dtype(b);
  device = pick_device(b);
  dl_itemsize(dtype, &item);
  byte_offset = pick_byte_offset(b, item);
  h->pattern = fb_u8(b);
  h->alloc_fail = fb_u8(b);

  p->versioned = h->mode & M_VERSIONED;
  p->has_deleter = !(h->mode & M_NO_DELETER);
  p->readonly = p->versioned && (flags & DLPACK_FLAG_BITMASK_READ_ONLY);

  entries = ndim < 0 ? 0 : ndim > MAX_ENTRIES ? MAX_ENTRIES : ndim;
  if (entries > 0 && !(h->flags_sel & 0x40)) { /* 0x40: shape NULL */
    p->shape = malloc((size_t)entries * sizeof *p->shape);
    for (int d = 0; d < entries; d++) p->shape[d] = pick_extent(b);
  }
  /* row-major strides of the claimed shape, where they fit in int64 */
  if (p->shape) {
    __int128 s = 1;
    for (int d = entries - 1; d >= 0; d--) {
      row[d] = s > INT64_MAX ? 1 : (int64_t)s;
      if (p->shape[d] > 1) s *= p->shape[d];
      if (s > INT64_MAX) s = (__int128)INT64_MAX + 1;
    }
  }
  if (entries > 0 && !(h->mode & M_NULL_STRIDES)) {
    p->strides = malloc((size_t)entries * sizeof *p->strides);
    for (int d = 0; d < entries; d++) p->strides[d] = pick_stride(b, p->shape ? row[d] : 1);
  }

  *g = measure(ndim, p->shape, p->strides, item, byte_offset);
  data = NULL;
  p->backed = 0;
  if (g->known && g->numel == 0) {
    p->backed = 1; /* nothing to read or write */
    if (!(h->mode & M_NULL_DATA)) {
      p->block = malloc(16);
      p->block_size = 16;
      data = p->block;
    }
  } else if (!(h->mode & M_NULL_DATA)) {
    if (g->known && !(h->mode & M_NO_BACKING) && g->last - g->first <= (__int128)BACKING_LIMIT) {
      p->block_size = (size_t)(g->last - g->first);
      p->block = malloc(p->block_size ? p->block_size : 1);
      for (size_t i = 0; i < p->block_size; i++)
        p->block[i] = (unsigned char)(h->pattern + i * 131 + (i >> 3) * 7);
      /* data + first == block, computed without pointer overflow UB */
      data = (void *)((uintptr_t)p->block - (uintptr_t)(uint64_t)(int64_t)g->first);
      p->backed = 1;
    } else {
      p->block = malloc(64);
      p->block_size = 64;
      memset(p->block, 0x5a, 64);
      data = p->block;
    }
  }
  if (p->readonly && p->block) p->checksum = checksum(p->block, p->block_size);

  t.data = data;
  t.device = device;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = p->shape;
  t.strides = p->strides;
  t.byte_offset = byte_offset;
  if (p->versioned) {
    p->v = calloc(1, sizeof *p->v);
    p->v->version.major = major;
    p->v->version.minor = minor;
    p->v->manager_ctx = p;
    p->v->deleter = p->has_deleter ? deleter_versioned : NULL;
    p->v->flags = flags;
    p->v->dl_tensor = t;
  } else {
    p->l = calloc(1, sizeof *p->l);
    p->l->manager_ctx = p;
    p->l->deleter = p->has_deleter ? deleter_legacy : NULL;
    p->l->dl_tensor = t;
  }
  if (fuzz_verbose())
    fprintf(stderr,
            "tensor: %s v%u.%u flags=%#llx ndim=%d dtype={%u,%u,%u} device={%d,%d} "
            "byte_offset=%llu strides=%s data=%s route=%d backed=%d known=%d numel=%lld\n",
            p->versioned ? "versioned" : "legacy", major, minor, (unsigned long long)flags, ndim,
            dtype.code, dtype.bits, dtype.lanes, (int)device.device_type, device.device_id,
            (unsigned long long)byte_offset, p->strides ? "given" : "NULL", data ? "set" : "NULL",
            M_ROUTE(h->mode), p->backed, g->known, (long long)g->numel);
}

/* What the contract says the importer must refuse (checked after a success). */
static void check_acceptable(const producer *p, const geometry *g, const DLTensor *t,
                             uint32_t major) {
  if (p->versioned && major != DLB_DLPACK_MAJOR)
    fuzz_fail("imported a tensor of DLPack major version %u", major);
  if (t->ndim < 0 || t->ndim > DLB_MAX_NDIM) fuzz_fail("imported a tensor with ndim %d", t->ndim);
  if (!g->known) fuzz_fail("imported a tensor whose size or byte range overflows int64");
  if (g->numel > 0 && !t->data) fuzz_fail("imported %lld elements at NULL", (long long)g->numel);
  if (t->dtype.lanes != 1) fuzz_fail("imported a dtype with %u lanes", t->dtype.lanes);
  if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDAHost &&
      t->device.device_type != kDLCUDAManaged && t->device.device_type != kDLROCMHost)
    fuzz_fail("imported a tensor of device type %d onto the cpu", (int)t->device.device_type);
}

/* ---- what the import made of the geometry --------------------------------------- */

static int cmp_i128(const void *a, const void *b) {
  __int128 x = *(const __int128 *)a, y = *(const __int128 *)b;
  return (x > y) - (x < y);
}

/* Whether two indices of the claimed geometry reach one element (numel
 * small enough to list every offset). */
static int overlaps(int32_t ndim, const int64_t *shape, const int64_t *strides, int64_t numel) {
  static __int128 offsets[4096];
  int64_t index[DLB_MAX_NDIM] = {0};
  int found = 0;
  for (int64_t k = 0; k < numel; k++) {
    __int128 off = 0;
    for (int d = 0; d < ndim; d++) off += (__int128)index[d] * strides[d];
    offsets[k] = off;
    for (int d = ndim - 1; d >= 0 && ++index[d] == shape[d]; d--) index[d] = 0;
  }
  qsort(offsets, (size_t)numel, sizeof offsets[0], cmp_i128);
  for (int64_t k = 1; k < numel && !found; k++) found = offsets[k] == offsets[k - 1];
  return found;
}

/* The integer at t[i] (t at idx). */
static int64_t int_at(lua_State *L, int idx, int i) {
  int64_t v;
  lua_rawgeti(L, idx, i);
  v = (int64_t)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return v;
}

/* The array at the top of the stack, imported from the producer's claimed
 * geometry: read-only where elements overlap, compact strides where no
 * element is reached. */
static void check_geometry(lua_State *L, const producer *p, const geometry *g, const DLTensor *t) {
  int64_t compact[DLB_MAX_NDIM], s = 1;
  int top = lua_gettop(L), readonly;
  if (!p->shape || !p->strides || t->ndim <= 0 || t->ndim > DLB_MAX_NDIM) return;
  lua_getfield(L, top, "readonly");
  readonly = lua_toboolean(L, -1);
  lua_getfield(L, top, "strides");
  if (!lua_istable(L, -1)) fuzz_fail("an imported array has no strides");
  for (int d = t->ndim - 1; d >= 0; d--) {
    compact[d] = s;
    if (p->shape[d] > 1) s *= p->shape[d]; /* the product was checked by the import */
  }
  for (int d = 0; d < t->ndim; d++) {
    int64_t got = int_at(L, top + 2, d + 1);
    if (g->numel == 0 || p->shape[d] == 1) {
      if (got != compact[d])
        fuzz_fail("dim %d reaches no element: stride %lld, not the compact %lld", d + 1,
                  (long long)got, (long long)compact[d]);
    } else if (got != p->strides[d]) {
      fuzz_fail("dim %d: stride %lld became %lld", d + 1, (long long)p->strides[d], (long long)got);
    }
  }
  if (g->numel > 1 && g->numel <= 4096 && !readonly &&
      overlaps(t->ndim, p->shape, p->strides, g->numel))
    fuzz_fail("a tensor whose elements overlap imported writable");
  lua_settop(L, top);
}

/* ---- Lua ---------------------------------------------------------------------- */

/* The input being run: the producer, and what it claimed (saved at build
 * time: with copy = true the tensor is gone by the time Lua sees the array). */
static struct {
  producer *p;
  geometry g;
  DLTensor claimed;
  uint32_t major;
} current;

static int l_fail(lua_State *L) { fuzz_fail("%s", luaL_optstring(L, 1, "(no message)")); }

static int l_delcount(lua_State *L) {
  lua_pushinteger(L, current.p->deleter_calls);
  return 1;
}

/* ACCEPTED(): called by the Lua side right after an import succeeded. */
static int l_accepted(lua_State *L) {
  check_acceptable(current.p, &current.g, &current.claimed, current.major);
  return 0;
}

/* TRACE(...): prints its arguments (FUZZ_VERBOSE=1 only). */
static int l_trace(lua_State *L) {
  for (int i = 1; i <= lua_gettop(L); i++)
    fprintf(stderr, "%s%s", i > 1 ? " " : "  ", lua_tostring(L, i) ? lua_tostring(L, i) : "?");
  fprintf(stderr, "\n");
  return 0;
}

/* push(tensor): dlb_push_* (route 0) or dlb_push_capsule_* (routes 1-3), in
 * protected mode as a host's lua_CFunction would run. Returns status, object. */
static int l_push(lua_State *L) {
  producer *p = lua_touserdata(L, 1);
  int capsule = (int)lua_tointeger(L, 2);
  dlb_status st;
  lua_settop(L, 0);
  if (capsule)
    st = p->versioned ? dlb_push_capsule_versioned(L, p->v) : dlb_push_capsule_legacy(L, p->l);
  else st = p->versioned ? dlb_push_versioned(L, p->v) : dlb_push_legacy(L, p->l);
  lua_pushinteger(L, st);
  lua_insert(L, 1);
  return 2;
}

/* The Lua side: import through a capsule when asked, then exercise the array
 * with the remaining bytes as a little program (README.md). */
static const char exercise[] =
    "local dl, x0, ops, backed, route, has_deleter, FAIL, DELCOUNT, ACCEPTED, TRACE = ...\n"
    "local pos = 1\n"
    "local function byte() local b = ops:byte(pos) or 0; pos = pos + 1; return b end\n"
    "local INTS = {1, 2, -1, -2, 0, 3, 4, 5, 33, -33, 100, math.maxinteger, math.mininteger, 7, 8, "
    "-3}\n"
    "local function int() return INTS[byte() % #INTS + 1] end\n"
    "local function maybe() local b = byte(); if b < 64 then return nil end; return INTS[b % #INTS "
    "+ 1] end\n"
    "local VALS = {0, 1, -1, 0.5, 1e300, 0/0, 1/0, true, false, {re = 1, im = 2}, 'x', "
    "math.maxinteger,\n"
    "              math.mininteger, 255, 65520, -0.0, {}, {1, 2}, 3.0, 2^63}\n"
    "local function val() return VALS[byte() % #VALS + 1] end\n"
    "local DTYPES = {'float64', 'float32', 'float16', 'bfloat16', 'int8', 'int16', 'int32', "
    "'int64',\n"
    "                'uint8', 'uint16', 'uint32', 'uint64', 'bool', 'complex64', 'complex128', "
    "'nope'}\n"
    "local function code(e) return type(e) == 'table' and tostring(e.code) or tostring(e) end\n"
    "local function get(x, k) local ok, v = pcall(function() return x[k] end); if ok then return v "
    "end; return nil end\n"
    "local function same(s, t)\n"
    "  if type(s) ~= 'table' or type(t) ~= 'table' or #s ~= #t then return false end\n"
    "  for i = 1, #s do if s[i] ~= t[i] then return false end end\n"
    "  return true\n"
    "end\n"
    "local function consumed_again(cap, what)\n"
    "  local ok, e = pcall(dl.from_dlpack, cap)\n"
    "  if ok or code(e) ~= 'CAPSULE_CONSUMED' then FAIL(what .. ': the capsule could be consumed "
    "again (' .. code(e) .. ')') end\n"
    "end\n"
    "local a\n"
    "if route == 0 then\n"
    "  a = x0\n"
    "elseif route == 3 then\n"
    "  local cap = x0\n"
    "  local _ = tostring(cap), cap.version, cap.device, cap.consumed, cap.versioned\n"
    "  x0, cap = nil, nil\n"
    "  if byte() % 2 == 0 then collectgarbage() end\n"
    "  return\n"
    "else\n"
    "  local cap, opts = x0, nil\n"
    "  x0 = nil\n"
    "  if route == 2 and backed then\n"
    "    local s = byte() % 4\n"
    "    opts = ({{copy = true}, {device = 'cpu', copy = true}, {device = 'cpu'}, {copy = "
    "false}})[s + 1]\n"
    "  end\n"
    "  local ok, r = pcall(dl.from_dlpack, cap, opts)\n"
    "  if not ok then\n"
    "    if has_deleter and DELCOUNT() ~= 1 then\n"
    "      FAIL('from_dlpack failed (' .. code(r) .. ') and the deleter ran ' .. DELCOUNT() .. ' "
    "times')\n"
    "    end\n"
    "    consumed_again(cap, 'after a failed import')\n"
    "    return\n"
    "  end\n"
    "  if not dl.is_array(r) then FAIL('from_dlpack returned ' .. type(r)) end\n"
    "  ACCEPTED()\n"
    "  consumed_again(cap, 'after an import')\n"
    "  a = r\n"
    "end\n"
    "local P, caps = {a}, {}\n"
    "local function pick() return P[byte() % #P + 1] end\n"
    "local function add(ok, v) if ok and dl.is_array(v) and #P < 24 then P[#P + 1] = v end; return "
    "v end\n"
    "local function shape(x) return get(x, 'shape') or {} end\n"
    /* The work of totable/tobytes/tostring: the product of the extents, zeros
     * counted as 1 (a size-0 array still makes one Lua table per row). */
    "local function small(x, limit)\n"
    "  local s = get(x, 'shape'); if not s then return false end\n"
    "  local w = 1\n"
    "  for _, e in ipairs(s) do w = w * math.max(e, 1); if w > (limit or 65536) then return false "
    "end end\n"
    "  return true\n"
    "end\n"
    "local function M(x, name, ...)\n"
    "  if not TRACE then return pcall(x[name], x, ...) end\n"
    "  local r = table.pack(pcall(x[name], x, ...))\n"
    "  TRACE(name, tostring(r[1]), dl.is_error(r[2]) and tostring(r[2].code) or type(r[2]))\n"
    "  return table.unpack(r, 1, r.n)\n"
    "end\n"
    "local n = 0\n"
    "while pos <= #ops and n < 64 do\n"
    "  n = n + 1\n"
    "  local op, x = byte() % 25, pick()\n"
    "  if TRACE then TRACE('op', op, #P, tostring((get(x, 'ndim'))), tostring((get(x, 'size')))) "
    "end\n"
    "  if op == 0 then\n"
    "    pcall(function() local _ = x.shape, x.strides, x.ndim, x.size, x.dtype, x.itemsize, "
    "x.nbytes,\n"
    "      x.device, x.backend, x.readonly, x:is_contiguous(), x:__dlpack_device(), #x, x.nope "
    "end)\n"
    "  elseif op == 1 then add(M(x, 'select', int(), int()))\n"
    "  elseif op == 2 then add(M(x, 'slice', int(), maybe(), maybe(), maybe()))\n"
    "  elseif op == 3 then add(M(x, 'narrow', int(), int(), int()))\n"
    "  elseif op == 4 then\n"
    "    if byte() % 2 == 0 then add(M(x, 'transpose')) else add(M(x, 'transpose', int(), int())) "
    "end\n"
    "  elseif op == 5 then\n"
    "    local nd, perm = get(x, 'ndim') or 0, {}\n"
    "    for d = 1, nd do perm[d] = d end\n"
    "    for d = nd, 2, -1 do local k = byte() % d + 1; perm[d], perm[k] = perm[k], perm[d] end\n"
    "    if byte() % 8 == 0 then perm[#perm + 1 - byte() % 2] = int() end\n"
    "    add(M(x, 'permute', perm))\n"
    "  elseif op == 6 then\n"
    "    if byte() % 2 == 0 then add(M(x, 'squeeze')) else add(M(x, 'squeeze', int())) end\n"
    "  elseif op == 7 then add(M(x, 'unsqueeze', int()))\n"
    "  elseif op == 8 then\n"
    "    local s, t = shape(x), {}\n"
    "    for k = 1, byte() % 3 do t[#t + 1] = byte() % 4 end\n"
    "    for d = 1, #s do local c = byte() % 4; t[#t + 1] = c == 0 and -1 or c == 1 and s[d] or c "
    "== 2 and 3 or int() end\n"
    "    add(M(x, 'expand', t))\n"
    "  elseif op == 9 then\n"
    "    local s, c, t = shape(x), byte() % 4, nil\n"
    "    if c == 0 then t = {-1} elseif c == 1 then t = {} for d = #s, 1, -1 do t[#t + 1] = s[d] "
    "end\n"
    "    elseif c == 2 then t = {int(), -1} else t = {int(), int(), int()} end\n"
    "    add(M(x, 'view', t))\n"
    "  elseif op == 10 then\n"
    "    if backed or (get(x, 'ndim') or 0) > 1 then add(pcall(function() return x[int()] end)) "
    "end\n"
    "  elseif op == 11 then\n"
    "    if backed and small(x) then local _ = tostring(x) end\n"
    "  elseif op == 12 then\n"
    "    if backed and small(x, 4096) then M(x, 'totable') end\n"
    "  elseif op == 13 then\n"
    "    if backed and small(x) then\n"
    "      local ok, s = M(x, 'tobytes')\n"
    "      local ok2, c = M(x, 'copy')\n"
    "      if ok and ok2 then\n"
    "        local ok3, s2 = M(c, 'tobytes')\n"
    "        if ok3 and s ~= s2 then FAIL('tobytes of an array and of its copy differ') end\n"
    "      end\n"
    "    end\n"
    "  elseif op == 14 then\n"
    "    if backed then local idx = {}; for d = 1, get(x, 'ndim') or 0 do idx[d] = int() end; M(x, "
    "'get', table.unpack(idx)) end\n"
    "  elseif op == 15 then\n"
    "    if backed and small(x) then\n"
    "      local w, ro = byte() % 5, get(x, 'readonly')\n"
    "      local ok\n"
    "      if w == 0 then ok = pcall(function() x[int()] = val() end)\n"
    "      elseif w == 1 then local idx = {}; for d = 1, get(x, 'ndim') or 0 do idx[d] = int() "
    "end\n"
    "        idx[#idx + 1] = val(); ok = M(x, 'set', table.unpack(idx))\n"
    "      elseif w == 2 then ok = M(x, 'fill', val())\n"
    "      elseif w == 3 then ok = M(x, 'copy_from', pick())\n"
    "      else ok = M(x, 'copy_from', val()) end\n"
    "      if ok and ro and get(x, 'size') ~= 0 then FAIL('a write to a read-only array "
    "succeeded') end\n"
    "    end\n"
    "  elseif op == 16 then\n"
    "    if backed and small(x) then\n"
    "      local c = byte() % 4\n"
    "      if c == 0 then add(M(x, 'copy')) elseif c == 1 then add(M(x, 'contiguous'))\n"
    "      elseif c == 2 then add(M(x, 'reshape', {-1})) else add(M(x, 'astype', DTYPES[byte() % "
    "#DTYPES + 1])) end\n"
    "    end\n"
    "  elseif op == 17 or op == 18 then\n"
    "    local c, opts = byte() % 12, nil\n"
    "    local copying = false\n"
    "    if c == 1 then opts = {max_version = {0, 0}}\n"
    "    elseif c == 2 then opts = {max_version = {1, 0}}\n"
    "    elseif c == 3 then opts = {max_version = {1, 99}}\n"
    "    elseif c == 4 then opts = {max_version = {2, 0}}\n"
    "    elseif c == 5 then opts = {copy = false}\n"
    "    elseif c == 6 and backed and small(x) then opts = {copy = true}; copying = true\n"
    "    elseif c == 7 and backed and small(x) then opts = {max_version = {0, 0}, copy = true}; "
    "copying = true\n"
    "    elseif c == 8 then opts = {dl_device = {1, 0}}\n"
    "    elseif c == 9 then opts = {dl_device = {2, 0}}\n"
    "    elseif c == 10 then opts = {stream = 1}\n"
    "    elseif c == 11 then opts = {fallback = 'cpu', max_version = {int() % 3, int()}} end\n"
    "    -- __dlpack without max_version is legacy (the protocol's default)\n"
    "    local legacy = opts and opts.max_version and opts.max_version[1] == 0 or\n"
    "                   (op == 18 and not (opts and opts.max_version))\n"
    "    -- a legacy tensor has no read-only flag: a read-only array goes out as a copy\n"
    "    if legacy and (not opts or opts.copy == nil) and get(x, 'readonly') then\n"
    "      if backed and small(x) then copying = true else opts = opts or {}; opts.copy = false "
    "end\n"
    "    end\n"
    "    local ok, cap = M(x, op == 17 and 'to_dlpack' or '__dlpack', opts)\n"
    "    if ok then\n"
    "      local _ = tostring(cap), cap.version, cap.device\n"
    "      if byte() % 4 == 0 then caps[#caps + 1] = cap\n"
    "      else\n"
    "        local ok2, y = pcall(dl.from_dlpack, cap)\n"
    "        if not ok2 then FAIL('re-importing our own export failed: ' .. code(y)) end\n"
    "        if not copying then\n"
    "          if not same(shape(x), shape(y)) or not same(get(x, 'strides'), get(y, 'strides')) "
    "or\n"
    "             get(x, 'dtype') ~= get(y, 'dtype') then FAIL('export + import changed the "
    "geometry') end\n"
    "          if get(x, 'readonly') and not get(y, 'readonly') then FAIL('export + import made a "
    "read-only array writable') end\n"
    "        end\n"
    "        consumed_again(cap, 'own export')\n"
    "        add(true, y)\n"
    "      end\n"
    "    end\n"
    "  elseif op == 19 then add(pcall(dl.from_dlpack, x))\n"
    "  elseif op == 20 then M(x, 'delete')\n"
    "  elseif op == 21 then collectgarbage()\n"
    "  elseif op == 22 then\n"
    "    if backed and small(x) then\n"
    "      local c = byte() % 3\n"
    "      if c == 0 then add(pcall(dl.array, x)) elseif c == 1 then add(M(x, 'to', 'cpu', {copy = "
    "true}))\n"
    "      else add(pcall(dl.device_put, x, 'cpu')) end\n"
    "    end\n"
    "  elseif op == 23 then\n"
    "    if #caps > 0 then\n"
    "      local k = byte() % #caps + 1\n"
    "      local cap = caps[k]\n"
    "      local _ = tostring(cap), cap.consumed\n"
    "      if byte() % 2 == 0 then add(pcall(dl.from_dlpack, cap)) else table.remove(caps, k) end\n"
    "    end\n"
    "  else\n"
    "    if #P > 1 then table.remove(P, byte() % #P + 1) end\n"
    "    collectgarbage('step')\n"
    "  end\n"
    "end\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_bytes b = {data, size};
  producer p;
  header h;
  geometry g;
  fuzz_heap heap;
  lua_State *L;
  int route, st, top;

  memset(&p, 0, sizeof p);
  build(&p, &b, &h, &g);
  current.p = &p;
  current.g = g;
  current.claimed = p.versioned ? p.v->dl_tensor : p.l->dl_tensor;
  current.major = p.versioned ? p.v->version.major : DLB_DLPACK_MAJOR;
  route = M_ROUTE(h.mode);
  /* a copy reads every element: only of memory we own, and not too many */
  if (route == 2 && (!p.backed || g.numel > 65536)) route = 1;

  L = fuzz_new_state(&heap);
  if (!L) fuzz_fail("lua_newstate failed");
  top = lua_gettop(L);

  /* The push, with Lua allocations failing from the alloc_fail-th on when asked. */
  lua_pushcfunction(L, l_push);
  lua_pushlightuserdata(L, &p);
  lua_pushinteger(L, route != 0);
  /* flags_sel 0x20: a host memory limit for arrays (the import counts against it) */
  if ((h.flags_sel & 0x20) && dlb_set_memory_limit(L, (size_t)h.pattern * 64 + 1) != DLB_OK)
    fuzz_fail("dlb_set_memory_limit failed on an open state");
  if (h.mode & M_FAIL_ALLOC) /* 1 to 3 failures in a row, or a dead heap */
    fuzz_heap_fail_after(&heap, h.alloc_fail % 16,
                         (h.alloc_fail >> 4) % 4 == 3 ? -1 : (h.alloc_fail >> 4) % 4 + 1);
  st = lua_pcall(L, 2, 2, 0);
  fuzz_heap_reset(&heap);
  if (st != LUA_OK) {
    /* Lua could not even push the error: the tensor must be back with its producer. */
    if (p.has_deleter && p.deleter_calls != 1)
      fuzz_fail("push raised (%d) and the deleter ran %d times", st, p.deleter_calls);
    lua_settop(L, top);
  } else if (lua_tointeger(L, -2) != DLB_OK) {
    if (fuzz_verbose())
      fprintf(stderr, "push failed: %s\n", dlb_status_name((dlb_status)lua_tointeger(L, -2)));
    if (!fuzz_is_dlb_error(L, -1)) fuzz_fail("a failed push left no dlbridge.Error");
    if (p.has_deleter && p.deleter_calls != 1)
      fuzz_fail("push failed and the deleter ran %d times", p.deleter_calls);
    lua_settop(L, top);
  } else {
    if (p.deleter_calls != 0) fuzz_fail("the deleter ran while the tensor is in use");
    if (route == 0) {
      check_acceptable(&p, &g, &current.claimed, current.major);
      check_geometry(L, &p, &g, &current.claimed);
    }
    /* exercise(dl, object, ops, backed, route, has_deleter, FAIL, DELCOUNT, ACCEPTED) */
    if (luaL_loadbuffer(L, exercise, sizeof exercise - 1, "=exercise") != LUA_OK)
      fuzz_fail("exercise does not load: %s", lua_tostring(L, -1));
    lua_insert(L, -3);
    lua_remove(L, -2); /* the status */
    lua_getglobal(L, "dl");
    lua_insert(L, -2);
    lua_pushlstring(L, (const char *)b.p, b.n);
    lua_pushboolean(L, p.backed);
    lua_pushinteger(L, route);
    lua_pushboolean(L, p.has_deleter);
    lua_pushcfunction(L, l_fail);
    lua_pushcfunction(L, l_delcount);
    lua_pushcfunction(L, l_accepted);
    if (fuzz_verbose()) lua_pushcfunction(L, l_trace);
    else lua_pushnil(L);
    if (lua_pcall(L, 10, 0, 0) != LUA_OK && fuzz_verbose())
      fprintf(stderr, "exercise: %s\n", luaL_tolstring(L, -1, NULL));
    lua_settop(L, top);
  }
  lua_close(L);
  if (p.has_deleter) {
    if (p.deleter_calls != 1)
      fuzz_fail("after lua_close the deleter had run %d times", p.deleter_calls);
  } else {
    release_memory(&p);
    free(p.v);
    free(p.l);
  }
  current.p = NULL;
  return 0;
}
