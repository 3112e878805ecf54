// torch_module.hpp -- what the host's scripts see of its inference runtime:
// the global table `torch` with torch.infer(batch [, opts]), torch.info() and
// torch.data_ptr(array).
//
// The model is a small torch::nn network (Conv2d + ReLU + pooling + Linear)
// with weights from a fixed seed, standing in for the engine's real one:
// N x 3 x H x W float32 images in, N x classes float32 logits out. The batch
// reaches LibTorch through DLPack without a copy, and the logits come back
// the same way (torch_bridge.hpp).
#ifndef DLB_EXAMPLE_TORCH_MODULE_HPP
#define DLB_EXAMPLE_TORCH_MODULE_HPP

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/functional/pooling.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <cstring>

#include "torch_bridge.hpp"

namespace tb {

// The classifier: 3 -> 8 channels (3x3), ReLU, 8x8 average pooling, Linear.
struct TinyNetImpl : torch::nn::Module {
  explicit TinyNetImpl(int64_t classes)
      : conv(register_module("conv",
                             torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3).padding(1)))),
        fc(register_module("fc", torch::nn::Linear(8 * 8 * 8, classes))) {}
  at::Tensor forward(const at::Tensor &x) {
    at::Tensor h = torch::relu(conv->forward(x));
    h = torch::adaptive_avg_pool2d(h, {8, 8});
    return fc->forward(h.flatten(1));
  }
  torch::nn::Conv2d conv;
  torch::nn::Linear fc;
};
TORCH_MODULE(TinyNet);

// The host's runtime: the model (and its copy on the GPU, made on first use),
// and the data pointers of the last call, for the checks.
struct runtime {
  int64_t classes;
  uint64_t seed;
  TinyNet model{nullptr};
  TinyNet cuda_model{nullptr};
  const void *last_input = nullptr;
  const void *last_output = nullptr;

  explicit runtime(int64_t n_classes = 10, uint64_t weight_seed = 0)
      : classes(n_classes), seed(weight_seed), model(make()) {}

  // The model with the seed's weights, in inference mode.
  TinyNet make() const {
    torch::manual_seed(seed);
    TinyNet m(classes);
    m->eval();
    return m;
  }
  // The model on the device of x (a second copy of the weights on cuda).
  TinyNet &model_for(const at::Tensor &x) {
    if (!x.is_cuda()) return model;
    if (!cuda_model) {
      cuda_model = make();
      cuda_model->to(x.device());
    }
    return cuda_model;
  }
};

// torch.infer's options: {fallback = "cpu"}. Raises ARGUMENT on anything else
// (called before any C++ object exists: it may raise).
static bool infer_fallback(lua_State *L, int idx) {
  bool fallback = false;
  if (lua_isnoneornil(L, idx)) return false;
  if (!lua_istable(L, idx))
    dlb_raise(L, DLB_E_ARGUMENT, "torch.infer", "torch.infer(batch [, {fallback = \"cpu\"}])",
              "options must be a table, not %s", luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : nullptr;
    if (!key || std::strcmp(key, "fallback") != 0)
      dlb_raise(L, DLB_E_ARGUMENT, "torch.infer", "the one option is fallback = \"cpu\"",
                "unknown option %s", key ? key : luaL_typename(L, -2));
    if (lua_type(L, -1) != LUA_TSTRING || std::strcmp(lua_tostring(L, -1), "cpu") != 0)
      dlb_raise(L, DLB_E_ARGUMENT, "torch.infer", "fallback = \"cpu\"", "fallback must be \"cpu\"");
    fallback = true;
    lua_pop(L, 1);
  }
  return fallback;
}

// torch.infer(batch [, opts]) -> logits: N x 3 x H x W float32 in, N x classes out.
static int torch_infer(lua_State *L) {
  runtime *rt = static_cast<runtime *>(lua_touserdata(L, lua_upvalueindex(1)));
  bool fallback = infer_fallback(L, 2);
  lua_settop(L, 1);
  return protect(L, "torch.infer", [&] {
    at::Tensor x = to_torch(L, 1, fallback);
    if (x.dim() != 4 || x.size(1) != 3)
      refuse(DLB_E_SHAPE, "a batch N x 3 x H x W (channels first)",
             "the model takes N x 3 x H x W images, not %d dims", (int)x.dim());
    if (x.scalar_type() != at::kFloat)
      refuse(DLB_E_DTYPE, "astype(\"float32\")", "the model computes in float32");
    c10::InferenceMode inference;
    at::Tensor y = rt->model_for(x)->forward(x); // may throw c10::Error: protect raises it
    rt->last_input = x.data_ptr();
    rt->last_output = y.data_ptr();
    push_tensor(L, y);
    return 1;
  });
}

// torch.data_ptr(array) -> the address of its first element, an integer (to
// compare with torch.info().last_input / last_output: the same memory).
static int torch_data_ptr(lua_State *L) {
  dlb_borrowed v;
  if (dlb_borrow(L, 1, &v) != DLB_OK) return lua_error(L);
  lua_Integer p = (lua_Integer)(intptr_t)(static_cast<char *>(v.data) + v.byte_offset);
  dlb_borrow_end(&v);
  lua_pushinteger(L, p);
  return 1;
}

// torch.info() -> {version =, cuda =, classes =, threads =, last_input =,
// last_output =}: the last two the data addresses LibTorch saw in the last
// torch.infer (integers; 0 before any).
static int torch_info(lua_State *L) {
  runtime *rt = static_cast<runtime *>(lua_touserdata(L, lua_upvalueindex(1)));
  lua_createtable(L, 0, 6);
  lua_pushstring(L, TORCH_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushboolean(L, device_usable(kDLCUDA));
  lua_setfield(L, -2, "cuda");
  lua_pushinteger(L, rt->classes);
  lua_setfield(L, -2, "classes");
  lua_pushinteger(L, at::get_num_threads());
  lua_setfield(L, -2, "threads");
  lua_pushinteger(L, (lua_Integer)(intptr_t)rt->last_input);
  lua_setfield(L, -2, "last_input");
  lua_pushinteger(L, (lua_Integer)(intptr_t)rt->last_output);
  lua_setfield(L, -2, "last_output");
  return 1;
}

// Sets the global `torch` of L; rt must outlive L.
inline void open_torch(lua_State *L, runtime *rt) {
  static const luaL_Reg fns[] = {{"infer", torch_infer},
                                 {"info", torch_info},
                                 {"data_ptr", torch_data_ptr},
                                 {nullptr, nullptr}};
  luaL_newlibtable(L, fns);
  lua_pushlightuserdata(L, rt);
  luaL_setfuncs(L, fns, 1);
  lua_setglobal(L, "torch");
}

} // namespace tb

#endif
