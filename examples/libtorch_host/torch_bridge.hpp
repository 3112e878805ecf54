// torch_bridge.hpp -- dlbridge arrays <-> LibTorch tensors, zero-copy, with
// LibTorch 1.13's hazards met in this one place.
//
//   at::Tensor t = tb::to_torch(L, idx);         // a Lua array as a tensor
//   tb::push_tensor(L, r);                       // a tensor as a Lua array
//   return tb::protect(L, "torch.f", [&] { ... });  // C++ failures -> dlbridge.Error
//
// What LibTorch 1.13 (Debian's libtorch-dev, DLPack 0.6, legacy tensors only)
// does, and what this file does about it:
// - bool: at::fromDLPack has no bool dtype (and at::toDLPack throws on bool
//   tensors). bool goes in relabelled as uint8 and viewed as bool
//   (t.view(at::kBool), same bytes); the way back does not use at::toDLPack
//   but dlb_push_external on the tensor's memory: both zero-copy.
// - uint16, uint32, uint64: LibTorch 1.13 has no such types. Refused with a
//   coded DTYPE error before LibTorch sees anything (the export is dropped at
//   once: nothing to leak), with a hint to astype a signed type.
// - Negative strides: LibTorch aborts the process on them (no exception to
//   catch). Every export asks for DLB_LAYOUT_NONNEGATIVE, so such a view is
//   copied first, by dlbridge.
// - Size 0: LibTorch never calls the deleter of a tensor whose data is NULL;
//   dlbridge's exports never carry NULL (a static block), so the deleter runs.
//   LibTorch's own size-0 tensors have NULL data; dlbridge takes them (through
//   dlb_push_external here, through dlb_push_legacy from at::toDLPack) and
//   releases them.
// - Read-only arrays (a loaded file's view, an overlapping broadcast): a
//   legacy DLPack tensor has no read-only flag, so dlb_export_legacy copies
//   them; LibTorch may then write to its tensor freely.
// - Devices: a kDLCUDA array needs a LibTorch built with CUDA
//   (DLB_TORCH_CUDA); otherwise DEVICE_UNAVAILABLE, with a hint to
//   device_put to "cpu" (the export dropped at once). Arrays of a backend that cannot
//   export (BACKEND_INCOMPATIBLE) move with opts.fallback_cpu or device_put.
// - C++ exceptions (c10::Error and friends): protect() catches them inside
//   the lua_CFunction and raises the dlbridge.Error only after every C++
//   object of the body is destroyed (docs/manual/hosts.md's C++ pattern): tensors drop
//   their DLPack tensors, whose deleters run, before Lua's longjmp.
// Anything LibTorch would still refuse in at::fromDLPack is checked here
// first, because a throw from inside it would drop the tensor undeleted.
#ifndef DLB_EXAMPLE_TORCH_BRIDGE_HPP
#define DLB_EXAMPLE_TORCH_BRIDGE_HPP

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <cstdio>
#include <exception>
#include <new>

#include <lua.hpp>
#include <dlbridge.h>

#ifndef DLB_TORCH_CUDA
#define DLB_TORCH_CUDA 0
#endif
#if DLB_TORCH_CUDA // c10's CUDA headers and the CUDA runtime's: no cuBLAS & co. headers needed
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace tb {

// A dlb_* call failed and pushed its dlbridge.Error.
struct dlbridge_failed {};
// A refusal of this file: code, hint and message, raised by protect().
struct refused {
  dlb_status code;
  const char *hint;
  char message[200];
};

inline void check(dlb_status st) {
  if (st != DLB_OK) throw dlbridge_failed{};
}

template <class... Args>
[[noreturn]] inline void refuse(dlb_status code, const char *hint, const char *fmt, Args... args) {
  refused r{code, hint, ""};
  if constexpr (sizeof...(Args) == 0) std::snprintf(r.message, sizeof r.message, "%s", fmt);
  else std::snprintf(r.message, sizeof r.message, fmt, args...);
  throw r;
}

// Runs body (every C++ object lives in it) and turns what it throws into a
// dlbridge.Error raised after the body's destructors have run.
template <class Body> int protect(lua_State *L, const char *op, Body body) {
  dlb_status code = DLB_OK;
  const char *hint = nullptr;
  char message[256] = "";
  bool pushed = false;
  try {
    return body();
  } catch (const dlbridge_failed &) {
    pushed = true;
  } catch (const refused &r) {
    code = r.code;
    hint = r.hint;
    std::snprintf(message, sizeof message, "%s", r.message);
  } catch (const c10::Error &e) { // LibTorch's: what() carries a C++ backtrace
    code = DLB_E_BACKEND_FAILURE;
    hint = "LibTorch refused the input: see the message";
    std::snprintf(message, sizeof message, "LibTorch: %s", e.what_without_backtrace());
  } catch (const std::bad_alloc &) {
    code = DLB_E_OUT_OF_MEMORY;
    std::snprintf(message, sizeof message, "LibTorch could not allocate");
  } catch (const std::exception &e) {
    code = DLB_E_BACKEND_FAILURE;
    std::snprintf(message, sizeof message, "%s", e.what());
  }
  if (pushed) return lua_error(L); // destructors have run; nothing left to skip
  return dlb_raise(L, code, op, hint, "%s", message);
}

// Whether this LibTorch can compute on tensors of device type t.
inline bool device_usable(int32_t t) {
  if (t == kDLCPU) return true;
#if DLB_TORCH_CUDA
  return t == kDLCUDA && c10::cuda::device_count() > 0;
#else
  return false;
#endif
}

// What LibTorch 1.13's fromDLPack takes: nullptr, or the hint to a dtype it has.
inline const char *dtype_refusal(DLDataType d) {
  if (d.lanes != 1) return "astype a scalar dtype";
  switch (d.code) {
    case kDLBool: return d.bits == 8 ? nullptr : "astype(\"uint8\")";
    case kDLUInt:
      return d.bits == 8 ? nullptr : "astype(\"int64\") (LibTorch 1.13 has no uint16/32/64)";
    case kDLInt:
      return d.bits == 8 || d.bits == 16 || d.bits == 32 || d.bits == 64 ? nullptr
                                                                         : "astype(\"int64\")";
    case kDLFloat:
      return d.bits == 16 || d.bits == 32 || d.bits == 64 ? nullptr : "astype(\"float32\")";
    case kDLBfloat: return d.bits == 16 ? nullptr : "astype(\"float32\")";
    case kDLComplex: return d.bits == 64 || d.bits == 128 ? nullptr : "astype(\"complex64\")";
    default: return "astype(\"float32\")";
  }
}

// Drops a DLPack tensor not (yet) handed to LibTorch.
struct legacy_owner {
  DLManagedTensor *t = nullptr;
  ~legacy_owner() {
    if (t && t->deleter) t->deleter(t);
  }
  DLManagedTensor *release() {
    DLManagedTensor *p = t;
    t = nullptr;
    return p;
  }
};

// The options every export to LibTorch uses: legacy DLPack (all 1.13
// reads), no negative strides; fallback_cpu for arrays of a backend that
// cannot export. stream: the consumer's CUDA stream (DLPack's values).
inline dlb_export_options export_options(bool fallback_cpu, bool has_stream = false,
                                         int64_t stream = 0) {
  dlb_export_options o;
  dlb_export_options_init(&o);
  o.max_version_major = 0;
  o.layout = DLB_LAYOUT_NONNEGATIVE;
  o.fallback_cpu = fallback_cpu ? 1 : 0;
  o.has_stream = has_stream ? 1 : 0;
  o.stream = stream;
  return o;
}

// The DLPack stream value of LibTorch's current stream on device id.
inline int64_t torch_stream_value(int id) {
#if DLB_TORCH_CUDA
  cudaStream_t s = c10::cuda::getCurrentCUDAStream((c10::DeviceIndex)id).stream();
  return s ? (int64_t)(intptr_t)s : 1; // the legacy default stream is 1
#else
  (void)id;
  return 1;
#endif
}

// The array at idx as an at::Tensor sharing its memory (a copy only where
// the notes above say). Throws dlbridge_failed / refused; nothing leaks.
inline at::Tensor to_torch(lua_State *L, int idx, bool fallback_cpu = false) {
  DLDevice device{kDLCPU, 0};
  dlb_borrowed view; // the device, to pick the export's stream (no copy, no export)
  if (dlb_borrow(L, idx, &view) == DLB_OK) {
    device = view.device;
    dlb_borrow_end(&view);
  } else {
    lua_pop(L, 1); // not addressable (the export below says why, or falls back)
  }
  bool cuda = device.device_type == kDLCUDA && device_usable(kDLCUDA);
  dlb_export_options opts =
      export_options(fallback_cpu, cuda, cuda ? torch_stream_value(device.device_id) : 0);
  legacy_owner owner;
  check(dlb_export_legacy(L, idx, &opts, &owner.t));
  const DLTensor &x = owner.t->dl_tensor;
  if (const char *hint = dtype_refusal(x.dtype))
    refuse(DLB_E_DTYPE, hint, "LibTorch 1.13 has no dtype for DLPack code %d, %d bits",
           (int)x.dtype.code, (int)x.dtype.bits);
  if (!device_usable(x.device.device_type))
    refuse(DLB_E_DEVICE_UNAVAILABLE, "dl.device_put(x, \"cpu\") first",
           "this LibTorch cannot compute on DLPack device type %d (built without CUDA, or no GPU)",
           (int)x.device.device_type);
  bool is_bool = x.dtype.code == kDLBool;
  if (is_bool) owner.t->dl_tensor.dtype.code = kDLUInt; // same bytes, a dtype 1.13 knows
  at::Tensor t = at::fromDLPack(owner.t);               // checked above: it cannot refuse
  owner.release();                                      // t's deleter owns it now
  return is_bool ? t.view(at::kBool) : t;
}

// The DLPack dtype of a LibTorch scalar type (at::getDLDataType throws on bool).
inline DLDataType dl_dtype(const at::Tensor &r) {
  if (r.scalar_type() == at::kBool) return DLDataType{kDLBool, 8, 1};
  return at::getDLDataType(r);
}

// Pushes r as a Lua array sharing its memory: dlb_push_external on r's data,
// holding a reference to r until the array and its views are gone (then
// released on whatever thread drops the last, after lua_close too). Cheaper
// than at::toDLPack (which runs an as_strided through LibTorch's dispatcher)
// and takes bool as it is. Throws dlbridge_failed (the reference is dropped).
inline void push_tensor(lua_State *L, const at::Tensor &r) {
  DLDevice device{kDLCPU, 0};
#if DLB_TORCH_CUDA
  if (r.is_cuda()) { // dlbridge's queue waits for LibTorch's stream, on the device
    device = DLDevice{kDLCUDA, (int32_t)r.get_device()};
    void *queue = nullptr;
    check(dlb_device_queue(L, kDLCUDA, r.get_device(), &queue));
    if (queue) {
      c10::cuda::CUDAGuard on(r.device());
      cudaEvent_t done;
      cudaError_t e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
      if (e == cudaSuccess) {
        e = cudaEventRecord(done, c10::cuda::getCurrentCUDAStream(r.get_device()).stream());
        if (e == cudaSuccess) e = cudaStreamWaitEvent(static_cast<cudaStream_t>(queue), done, 0);
        cudaEventDestroy(done); // released once the wait is satisfied
      }
      if (e != cudaSuccess)
        refuse(DLB_E_BACKEND_FAILURE, nullptr, "ordering after LibTorch's stream: %s",
               cudaGetErrorString(e));
      // LibTorch's caching allocator must not hand the memory out again while
      // work dlbridge queued on it (a device_put, say) may still run.
      r.record_stream(
          c10::cuda::getStreamFromExternal(static_cast<cudaStream_t>(queue), r.get_device()));
    }
  }
#endif
  if (!r.device().is_cpu() && device.device_type == kDLCPU)
    refuse(DLB_E_UNSUPPORTED, "a cpu tensor", "this host returns cpu (or cuda) tensors only");
  int64_t strides[DLB_MAX_NDIM];
  int32_t ndim = (int32_t)r.dim();
  if (ndim > DLB_MAX_NDIM) refuse(DLB_E_SHAPE, nullptr, "%d dims: at most 32", (int)ndim);
  for (int32_t i = 0; i < ndim; i++) strides[i] = r.stride(i);
  DLDataType dtype = dl_dtype(r);
  at::Tensor *hold = new at::Tensor(r);
  check(dlb_push_external(
      L, hold->data_ptr(), dtype, ndim, hold->sizes().data(), strides, device, 0,
      [](void *ctx) { delete static_cast<at::Tensor *>(ctx); },
      hold)); // on failure hold is already deleted
}

} // namespace tb

#endif
