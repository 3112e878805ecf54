// libtorch_overhead.cpp -- the per-call cost of handing a Lua array to LibTorch
// and its result back (examples/libtorch_host/torch_bridge.hpp), against
// LibTorch-only baselines measured in the same run:
//   exchange  = export + at::fromDLPack (to_torch) + the result's way back
//               (push_tensor: dlb_push_external on the tensor's memory, the
//               array collected by Lua's GC; also with a:delete() instead)
//   baseline  = at::fromDLPack(at::toDLPack(t)): LibTorch's own DLPack round
//               trip; and at::from_blob with a deleter (wrapping memory at all)
//   infer     = torch.infer(batch) called from Lua, against model->forward(x)
//               on the same memory in C++.
// Medians of BENCH_REPS (15) repetitions; one LibTorch thread on both sides.
// Built by tests/libtorch/run.sh (tests/libtorch/CMakeLists.txt); run with
// bench/libtorch_run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <lualib.h>

#include "torch_module.hpp"

// The median over reps of the ns per call of iters calls of f.
static double median_ns(int reps, int iters, const std::function<void()> &f) {
  std::vector<double> v;
  for (int r = 0; r < reps; r++) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; i++) f();
    auto t1 = std::chrono::steady_clock::now();
    v.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / iters);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  at::set_num_threads(1);
  int reps = std::getenv("BENCH_REPS") ? std::atoi(std::getenv("BENCH_REPS")) : 15;
  tb::runtime rt;
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  dlb_preload(L);
  tb::open_torch(L, &rt);
  if (luaL_dostring(L, "dl = require 'dlbridge' "
                       "small = dl.ones{1, 3, 32, 32}:astype('float32') "
                       "batch = (dl.arange(4 * 3 * 120 * 160) % 255):astype('float32'):view{4, 3, "
                       "120, 160} / 255 "
                       "infer = torch.infer") != LUA_OK) {
    std::fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return 1;
  }
  lua_getglobal(L, "small"); // stack 1: the array handed over
  at::Tensor held = tb::to_torch(L, 1);

  double in = median_ns(reps, 20000, [&] { at::Tensor t = tb::to_torch(L, 1); });
  double out = median_ns(reps, 20000, [&] {
    tb::push_tensor(L, held);
    lua_pop(L, 1);
  });
  double out_deleted = median_ns(reps, 20000, [&] {
    tb::push_tensor(L, held);
    lua_getfield(L, -1, "delete"); // a:delete(): freed now, not by the collector
    lua_insert(L, -2);
    lua_call(L, 1, 0);
  });
  double both = median_ns(reps, 20000, [&] {
    at::Tensor t = tb::to_torch(L, 1);
    tb::push_tensor(L, t);
    lua_pop(L, 1);
  });
  double both_deleted = median_ns(reps, 20000, [&] {
    at::Tensor t = tb::to_torch(L, 1);
    tb::push_tensor(L, t);
    lua_getfield(L, -1, "delete");
    lua_insert(L, -2);
    lua_call(L, 1, 0);
  });
  double torch_to = median_ns(reps, 20000, [&] {
    DLManagedTensor *t = at::toDLPack(held);
    t->deleter(t);
  });
  double torch_rt =
      median_ns(reps, 20000, [&] { at::Tensor t = at::fromDLPack(at::toDLPack(held)); });
  float blob[4];
  double torch_blob =
      median_ns(reps, 20000, [&] { at::Tensor t = at::from_blob(blob, {4}, [](void *) {}); });
  std::printf("exchange of a 1x3x32x32 float32 array (ns per call, median of %d):\n", reps);
  std::printf("  to_torch (export + at::fromDLPack + release)   %8.0f\n", in);
  std::printf("  push_tensor (dlb_push_external), collected     %8.0f\n", out);
  std::printf("  push_tensor, then a:delete() (no collector)    %8.0f\n", out_deleted);
  std::printf("  both ways, collected                           %8.0f\n", both);
  std::printf("  both ways, a:delete()                          %8.0f\n", both_deleted);
  std::printf("  LibTorch only: toDLPack(t) + its deleter       %8.0f\n", torch_to);
  std::printf("  LibTorch only: fromDLPack(toDLPack(t))         %8.0f\n", torch_rt);
  std::printf("  LibTorch only: from_blob with a deleter        %8.0f\n", torch_blob);
  std::printf(
      "ratio to LibTorch's own round trip: both ways collected %.2fx, with a:delete() %.2fx\n",
      both / torch_rt, both_deleted / torch_rt);

  for (const char *name : {"small", "batch"}) {
    lua_settop(L, 0);
    lua_getglobal(L, name);
    at::Tensor x = tb::to_torch(L, 1);
    int iters = x.size(0) == 1 ? 200 : 10;
    double lua_side = median_ns(reps, iters, [&] {
      lua_getglobal(L, "infer");
      lua_pushvalue(L, 1);
      if (lua_pcall(L, 1, 1, 0) != LUA_OK) std::abort();
      lua_pop(L, 1);
    });
    double cxx_side = median_ns(reps, iters, [&] {
      c10::InferenceMode guard;
      at::Tensor y = rt.model->forward(x);
    });
    std::printf(
        "torch.infer(%s %ldx3x%ldx%ld) from Lua %10.0f ns, model->forward in C++ %10.0f ns: "
        "ratio %.3fx (%+.0f ns)\n",
        name, (long)x.size(0), (long)x.size(2), (long)x.size(3), lua_side, cxx_side,
        lua_side / cxx_side, lua_side - cxx_side);
  }
  held = at::Tensor();
  lua_close(L);
  return 0;
}
