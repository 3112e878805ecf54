// headers.cpp -- the installed headers (dlbridge.h, which brings
// dlpack_compat.h and Debian's dlpack.h) compile as C++ with -Wall -Wextra
// -Werror -pedantic; built once per standard (C++11, C++17, C++20) by
// tests/CMakeLists.txt, then run: the declarations link against libdlbridge.
#include <dlbridge.h>

#include <cstdio>
#include <cstring>

// Every entry point, taken by address: a declaration C++ cannot use fails here.
static const void *const entry_points[] = {
    reinterpret_cast<const void *>(&dlb_status_name),
    reinterpret_cast<const void *>(&dlb_export_options_init),
    reinterpret_cast<const void *>(&dlb_export_versioned),
    reinterpret_cast<const void *>(&dlb_export_legacy),
    reinterpret_cast<const void *>(&dlb_push_versioned),
    reinterpret_cast<const void *>(&dlb_push_legacy),
    reinterpret_cast<const void *>(&dlb_push_capsule_versioned),
    reinterpret_cast<const void *>(&dlb_push_capsule_legacy),
    reinterpret_cast<const void *>(&dlb_capsule_take),
    reinterpret_cast<const void *>(&dlb_raise),
    reinterpret_cast<const void *>(&dlb_register_backend),
    reinterpret_cast<const void *>(&dlb_set_memory_limit),
    reinterpret_cast<const void *>(&luaopen_dlbridge_core),
    reinterpret_cast<const void *>(&dlb_preload),
};

int main() {
  dlb_export_options opts;
  dlb_backend_ops ops = dlb_backend_ops();
  DLManagedTensorVersioned tensor = DLManagedTensorVersioned();
  int failures = 0;
  dlb_export_options_init(&opts);
  ops.version = DLB_BACKEND_OPS_VERSION;
  tensor.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  for (const void *p : entry_points) failures += p == nullptr;
  failures += std::strcmp(dlb_status_name(DLB_E_SHAPE), "SHAPE") != 0;
  failures += opts.copy != -1;
  failures += ops.version != DLB_BACKEND_OPS_VERSION;
  failures += tensor.flags != DLPACK_FLAG_BITMASK_READ_ONLY;
  failures += sizeof(DLManagedTensorVersioned) != 80;
  std::printf("%s: %d failed\n", __FILE__, failures);
  return failures != 0;
}
