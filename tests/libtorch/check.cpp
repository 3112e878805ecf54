// check.cpp -- the LibTorch engine host (examples/libtorch_host) end to end,
// against LibTorch itself: values against the same model run on a private
// copy, the same data pointer both ways, deleters exactly once, lua_close
// while LibTorch holds a tensor, release on another thread, and the hazards
// torch_bridge.hpp handles (dtypes, negative strides, size 0, read-only,
// C++ exceptions). Prints one line per check; exit 0 when all pass.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <lualib.h>

#include "torch_module.hpp"

extern "C" {
#include "engine.h"
}

static int passed = 0, failed = 0;

#define EXPECT(cond)                                                                               \
  do {                                                                                             \
    if (cond) {                                                                                    \
      passed++;                                                                                    \
    } else {                                                                                       \
      failed++;                                                                                    \
      std::fprintf(stderr, "FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);                       \
    }                                                                                              \
  } while (0)

// A state as the host makes it: dlbridge, the engine backend, torch.
static lua_State *new_state(tb::runtime *rt) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  dlb_preload(L);
  if (luaL_dostring(L, "dl = require 'dlbridge'") != LUA_OK || engine_register(L) != 0) {
    std::fprintf(stderr, "setup: %s\n", luaL_tolstring(L, -1, nullptr));
    std::exit(1);
  }
  tb::open_torch(L, rt);
  return L;
}

// Runs Lua code; a failure is a failed check (with its message).
static bool run(lua_State *L, const char *code) {
  if (luaL_dostring(L, code) == LUA_OK) return true;
  std::fprintf(stderr, "FAILED lua: %s\n  in: %s\n", luaL_tolstring(L, -1, nullptr), code);
  lua_settop(L, 0);
  failed++;
  return false;
}

// Runs Lua code returning a boolean, as a check.
static bool lua_true(lua_State *L, const char *code) {
  if (!run(L, code)) return false;
  bool ok = lua_toboolean(L, -1);
  lua_settop(L, 0);
  if (!ok) std::fprintf(stderr, "FAILED lua check: %s\n", code);
  (ok ? passed : failed)++;
  return ok;
}

// The data pointer of the global array `name`.
static const void *data_of(lua_State *L, const char *name) {
  lua_getglobal(L, name);
  dlb_borrowed v;
  const void *p = nullptr;
  if (dlb_borrow(L, -1, &v) == DLB_OK) {
    p = static_cast<const char *>(v.data) + v.byte_offset;
    dlb_borrow_end(&v);
  }
  lua_settop(L, 0);
  return p;
}

// Host memory with a release that counts: the deleter chain's end.
struct counted {
  std::vector<char> bytes;
  std::atomic<int> released{0};
  explicit counted(size_t n) : bytes(n ? n : 1) {}
  static void release(void *ctx) { static_cast<counted *>(ctx)->released++; }
};

// Pushes m's bytes as a float32 array of shape (flags: DLB_EXTERNAL_READ_ONLY).
static void push_counted(lua_State *L, counted &m, std::vector<int64_t> shape, DLDataType dt,
                         uint32_t flags = 0) {
  if (dlb_push_external(L, m.bytes.data(), dt, (int32_t)shape.size(), shape.data(), nullptr,
                        DLDevice{kDLCPU, 0}, flags, counted::release, &m) != DLB_OK) {
    std::fprintf(stderr, "push_external: %s\n", luaL_tolstring(L, -1, nullptr));
    std::exit(1);
  }
}

static const DLDataType F32{kDLFloat, 32, 1};

// to_torch on the top of the stack, the refusal's code (DLB_OK: no refusal).
static dlb_status try_to_torch(lua_State *L, at::Tensor *out) {
  try {
    *out = tb::to_torch(L, -1);
    return DLB_OK;
  } catch (const tb::refused &r) {
    return r.code;
  } catch (const tb::dlbridge_failed &) {
    return dlb_last_error(nullptr);
  }
}

// 1. torch.infer on a Lua-prepared batch: values and both data pointers.
static void check_infer(tb::runtime &rt) {
  lua_State *L = new_state(&rt);
  run(L, "local f = {} for k = 1, 3 do "
         "  f[k] = ((dl.arange(24 * 32 * 4) * k) % 256):astype('uint8'):view{24, 32, 4}"
         "         :narrow(3, 1, 3):permute{3, 1, 2}:astype('float32') / 255 end "
         "batch = dl.stack(f) logits = torch.infer(batch)");
  const void *in = data_of(L, "batch"), *out = data_of(L, "logits");
  EXPECT(in != nullptr && in == rt.last_input);    // LibTorch read the batch's memory
  EXPECT(out != nullptr && out == rt.last_output); // and Lua got LibTorch's memory
  // The same model on a private copy of the batch.
  std::vector<float> copy(3 * 3 * 24 * 32);
  std::memcpy(copy.data(), in, copy.size() * sizeof(float));
  at::Tensor expected;
  {
    c10::InferenceMode guard;
    expected = rt.make()->forward(at::from_blob(copy.data(), {3, 3, 24, 32}));
  }
  at::Tensor got = at::from_blob(const_cast<void *>(out), {3, rt.classes});
  EXPECT(at::allclose(got, expected, 1e-6, 1e-7));
  std::printf(
      "infer: logits equal the model on a private copy (max |diff| %g), zero-copy both ways\n",
      (got - expected).abs().max().item<double>());
  // Softmax and argmax in dlbridge agree with LibTorch's.
  lua_getglobal(L, "logits");
  lua_pop(L, 1);
  run(L, "local e = dl.exp(logits - logits:max{dim = 2, keepdims = true}) "
         "probs = e / e:sum{dim = 2, keepdims = true} classes = probs:argmax(2)");
  at::Tensor want = at::softmax(expected, 1).argmax(1);
  lua_getglobal(L, "classes");
  at::Tensor cls = tb::to_torch(L, -1);
  lua_settop(L, 0);
  EXPECT(at::equal(cls, want + 1));                                               // 1-based
  EXPECT(lua_true(L, "return torch.infer(batch:narrow(1, 1, 0)).shape[1] == 0")); // an empty batch
  lua_close(L);
}

// 2-4. Deleters exactly once; lua_close while LibTorch holds; other threads.
static void check_lifetimes(tb::runtime &rt) {
  counted m(6 * sizeof(float));
  lua_State *L = new_state(&rt);
  push_counted(L, m, {2, 3}, F32);
  float *f = reinterpret_cast<float *>(m.bytes.data());
  for (int i = 0; i < 6; i++) f[i] = (float)i;
  at::Tensor t = tb::to_torch(L, -1);
  EXPECT(t.data_ptr() == m.bytes.data());
  lua_settop(L, 0);
  lua_gc(L, LUA_GCCOLLECT, 0);
  EXPECT(m.released == 0); // LibTorch still holds it
  lua_close(L);
  EXPECT(m.released == 0); // ... after lua_close too
  EXPECT(t.sum().item<double>() == 15.0);
  std::thread([u = std::move(t)]() mutable {
    u = at::Tensor();
  }).join(); // the last holder, elsewhere
  EXPECT(m.released == 1);

  // The way back: a LibTorch tensor with a counting deleter, into Lua and out again.
  std::atomic<int> freed{0};
  std::vector<float> store(8, 2.0f);
  lua_State *L2 = new_state(&rt);
  at::Tensor t2;
  {
    at::Tensor r = at::from_blob(store.data(), {8}, [&freed](void *) { freed++; });
    tb::push_tensor(L2, r);
    lua_setglobal(L2, "y");
  }
  EXPECT(data_of(L2, "y") == store.data());
  EXPECT(lua_true(L2, "return y:sum() == 16"));
  lua_getglobal(L2, "y");
  t2 = tb::to_torch(L2, -1); // Lua's view of LibTorch's memory, to LibTorch again
  lua_settop(L2, 0);
  EXPECT(t2.data_ptr() == store.data());
  lua_close(L2);
  EXPECT(freed == 0);
  std::thread([u = std::move(t2)]() mutable { u = at::Tensor(); }).join();
  EXPECT(freed == 1);
  std::printf("lifetimes: deleters once, after lua_close, on another thread\n");
}

// 5. Every dtype LibTorch 1.13 has, both ways zero-copy; those it lacks refused.
static void check_dtypes(tb::runtime &rt) {
  lua_State *L = new_state(&rt);
  static const char *const kinds[] = {"int8",    "int16",     "int32",      "int64",
                                      "uint8",   "float16",   "bfloat16",   "float32",
                                      "float64", "complex64", "complex128", "bool"};
  for (const char *dt : kinds) {
    char code[256];
    std::snprintf(code, sizeof code, "x = (dl.arange(6) %% 5):astype('%s'):view{2, 3}", dt);
    if (!run(L, code)) continue;
    lua_getglobal(L, "x");
    at::Tensor t;
    dlb_status st = try_to_torch(L, &t);
    lua_settop(L, 0);
    EXPECT(st == DLB_OK);
    if (st != DLB_OK) continue;
    EXPECT(t.data_ptr() == data_of(L, "x"));
    if (!t.is_complex()) {
      at::Tensor want = at::remainder(at::arange(6, at::kDouble), 5).view({2, 3});
      EXPECT(at::equal(t.to(at::kDouble),
                       std::string(dt) == "bool" ? (want != 0).to(at::kDouble) : want));
    }
    tb::push_tensor(L, t);
    lua_setglobal(L, "y");
    EXPECT(data_of(L, "y") == t.data_ptr());
    EXPECT(lua_true(L, "return y.dtype == x.dtype and dl.equal(x, y):all()"));
  }
  for (const char *dt : {"uint16", "uint32", "uint64"}) {
    counted m(4 * 8);
    push_counted(L, m, {4},
                 DLDataType{kDLUInt,
                            (uint8_t)(std::string(dt) == "uint16"   ? 16
                                      : std::string(dt) == "uint32" ? 32
                                                                    : 64),
                            1});
    at::Tensor t;
    EXPECT(try_to_torch(L, &t) == DLB_E_DTYPE);
    lua_settop(L, 0);
    lua_gc(L, LUA_GCCOLLECT, 0);
    EXPECT(m.released == 1); // the refused export was dropped: nothing holds the memory
  }
  EXPECT(lua_true(L, "local ok, e = pcall(torch.infer, dl.zeros{1, 3, 4, 4}:astype('uint32')) "
                     "return not ok and e.code == 'DTYPE' and e.hint:find('int64') ~= nil"));
  lua_close(L);
  std::printf("dtypes: 12 both ways zero-copy (bool as LibTorch's bool), uint16/32/64 DTYPE\n");
}

// 6-8. Negative strides, size 0, read-only arrays.
static void check_layouts(tb::runtime &rt) {
  lua_State *L = new_state(&rt);
  run(L, "base = dl.arange(12):astype('float32'):view{3, 4} x = base:slice(2, -1, 1, -1)");
  lua_getglobal(L, "x");
  at::Tensor t = tb::to_torch(L, -1); // would abort LibTorch as it is
  lua_settop(L, 0);
  bool nonneg = true;
  for (int64_t s : t.strides()) nonneg = nonneg && s >= 0;
  EXPECT(nonneg);
  tb::push_tensor(L, t);
  lua_setglobal(L, "y");
  EXPECT(lua_true(L, "return dl.equal(x, y):all()"));
  EXPECT(lua_true(L, "return torch.infer(dl.ones{1, 3, 8, 8}:astype('float32'):slice(3, -1, 1, "
                     "-1)).shape[2] == 10"));

  // Size 0: this side's export carries data, so LibTorch's deleter runs.
  counted z(0);
  push_counted(L, z, {0, 3}, F32);
  at::Tensor e = tb::to_torch(L, -1);
  lua_settop(L, 0);
  EXPECT(e.numel() == 0 && e.size(1) == 3);
  e = at::Tensor();
  lua_gc(L, LUA_GCCOLLECT, 0);
  EXPECT(z.released == 1);
  // ... and LibTorch's own size-0 tensors (data NULL) come back and are freed.
  struct wrap {
    DLManagedTensor outer;
    DLManagedTensor *inner;
    std::atomic<int> *count;
  };
  std::atomic<int> deleted{0};
  DLManagedTensor *inner = at::toDLPack(at::empty({0, 3}));
  EXPECT(inner->dl_tensor.data == nullptr);
  wrap *w = new wrap{{inner->dl_tensor, nullptr, nullptr}, inner, &deleted};
  w->outer.manager_ctx = w;
  w->outer.deleter = [](DLManagedTensor *self) {
    wrap *me = static_cast<wrap *>(self->manager_ctx);
    me->inner->deleter(me->inner);
    (*me->count)++;
    delete me;
  };
  EXPECT(dlb_push_legacy(L, &w->outer) == DLB_OK);
  lua_setglobal(L, "empty");
  EXPECT(lua_true(L, "return empty.size == 0 and empty.shape[2] == 3"));
  run(L, "empty = nil collectgarbage() collectgarbage()");
  EXPECT(deleted == 1);

  // ... and through push_tensor (dlb_push_external on NULL data).
  tb::push_tensor(L, at::empty({0, 3}));
  lua_setglobal(L, "e0");
  EXPECT(lua_true(L, "return e0.size == 0 and e0.shape[2] == 3 and e0.dtype == 'float32'"));
  run(L, "e0 = nil collectgarbage()");

  // Read-only: copied, so LibTorch may write its tensor without touching it.
  counted ro(4 * sizeof(float));
  push_counted(L, ro, {4}, F32, DLB_EXTERNAL_READ_ONLY);
  at::Tensor c = tb::to_torch(L, -1);
  lua_settop(L, 0);
  EXPECT(c.data_ptr() != ro.bytes.data());
  c.fill_(7);
  EXPECT(reinterpret_cast<float *>(ro.bytes.data())[0] == 0.0f);
  lua_close(L);
  EXPECT(ro.released == 1 && z.released == 1);
  c = at::Tensor();
  std::printf("layouts: negative strides copied (no abort), size 0 both ways, read-only copied\n");
}

// 9-10. A C++ exception from LibTorch, and the seed's backend.
static void check_failures(tb::runtime &rt) {
  lua_State *L = new_state(&rt);
  counted m(3 * 8 * sizeof(float));
  push_counted(L, m, {1, 3, 0, 8}, F32); // LibTorch's conv throws on an empty image
  lua_setglobal(L, "bad");
  EXPECT(lua_true(L, "local ok, e = pcall(torch.infer, bad) "
                     "return not ok and getmetatable(e) ~= nil and e.code == 'BACKEND_FAILURE' "
                     "and e.message:find('LibTorch') ~= nil and e.message:find('frame #') == nil"));
  run(L, "bad = nil collectgarbage() collectgarbage()");
  EXPECT(m.released == 1); // the tensor LibTorch held was destroyed before the raise
  EXPECT(lua_true(L, "local ok, e = pcall(torch.infer, dl.zeros{2, 3}:astype('float32')) "
                     "return not ok and e.code == 'SHAPE'"));
  EXPECT(lua_true(L, "local ok, e = pcall(torch.infer, dl.zeros{1, 3, 4, 4}, {fallbak = 'cpu'}) "
                     "return not ok and e.code == 'ARGUMENT'"));
  EXPECT(lua_true(L, "local x = dl.ones{1, 3, 8, 8}:astype('float32') "
                     "local g = dl.device_put(x, 'engine') local ok, e = pcall(torch.infer, g) "
                     "return not ok and e.code == 'BACKEND_INCOMPATIBLE' "
                     "and dl.equal(torch.infer(g, {fallback = 'cpu'}), torch.infer(x)):all() "
                     "and dl.equal(torch.infer(dl.device_put(g, 'cpu')), torch.infer(x)):all()"));
  EXPECT(
      lua_true(L, "local ok, e = pcall(torch.infer, 42) return not ok and e.code == 'ARGUMENT'"));
  lua_close(L);
  std::printf("failures: LibTorch's exception as BACKEND_FAILURE after destructors, SHAPE, "
              "ARGUMENT, the engine's BACKEND_INCOMPATIBLE and its two recoveries\n");
}

int main() {
  at::set_num_threads(1);
  tb::runtime rt;
  check_infer(rt);
  check_lifetimes(rt);
  check_dtypes(rt);
  check_layouts(rt);
  check_failures(rt);
  std::printf("libtorch: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
