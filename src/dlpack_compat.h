/*
 * dlpack_compat.h -- DLPack 1.x declarations on top of whatever <dlpack/dlpack.h>
 * the system ships (Debian 12: DLPack 0.6, DLPACK_VERSION 60).
 *
 * Everything here has the exact 1.x layout (dlpack v1.3). Each declaration is
 * added only where the system header lacks it; the static assertions below
 * check every offset and size the ABI fixes, whichever header supplied them.
 */
#ifndef DLBRIDGE_DLPACK_COMPAT_H
#define DLBRIDGE_DLPACK_COMPAT_H

#include <stddef.h>
#include <stdint.h>
#include <dlpack/dlpack.h>

/* The DLPack version dlbridge produces and understands (major must match). */
#define DLB_DLPACK_MAJOR 1
#define DLB_DLPACK_MINOR 3

/* Values added to DLDeviceType / DLDataTypeCode after 0.6. Enumerators of a
 * newer system header have the same names and values; plain macros here keep
 * a 0.6 header usable without redeclaring its enums. */
#if !defined(DLPACK_MAJOR_VERSION)
#define kDLOneAPI 14
#define kDLWebGPU 15
#define kDLHexagon 16
#define kDLMAIA 17
#define kDLTrn 18
#define kDLBool 6
#endif

#if !defined(DLPACK_MAJOR_VERSION)
/* The version a versioned tensor carries; major differs => incompatible ABI. */
typedef struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/* Bits of DLManagedTensorVersioned.flags. */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/* The 1.x managed tensor. The DLTensor is the LAST member here and the FIRST
 * in the legacy DLManagedTensor: never cast one to the other. */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#elif DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION < 2
/* 1.0 and 1.1 declare the struct without a typedef. */
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;
#endif

/* The x86-64 / LP64 layout of DLPack 1.x (static_assert: C11's keyword is
 * spelled differently in C++). */
#ifdef __cplusplus
#define DLB_STATIC_ASSERT static_assert
#else
#define DLB_STATIC_ASSERT _Static_assert
#endif
DLB_STATIC_ASSERT(sizeof(DLDevice) == 8, "DLDevice is 8 bytes");
DLB_STATIC_ASSERT(offsetof(DLDevice, device_id) == 4, "DLDevice.device_id at +4");
DLB_STATIC_ASSERT(sizeof(DLDataType) == 4, "DLDataType is 4 bytes");
DLB_STATIC_ASSERT(offsetof(DLDataType, bits) == 1, "DLDataType.bits at +1");
DLB_STATIC_ASSERT(offsetof(DLDataType, lanes) == 2, "DLDataType.lanes at +2");
DLB_STATIC_ASSERT(sizeof(DLTensor) == 48, "DLTensor is 48 bytes");
DLB_STATIC_ASSERT(offsetof(DLTensor, data) == 0, "DLTensor.data at +0");
DLB_STATIC_ASSERT(offsetof(DLTensor, device) == 8, "DLTensor.device at +8");
DLB_STATIC_ASSERT(offsetof(DLTensor, ndim) == 16, "DLTensor.ndim at +16");
DLB_STATIC_ASSERT(offsetof(DLTensor, dtype) == 20, "DLTensor.dtype at +20");
DLB_STATIC_ASSERT(offsetof(DLTensor, shape) == 24, "DLTensor.shape at +24");
DLB_STATIC_ASSERT(offsetof(DLTensor, strides) == 32, "DLTensor.strides at +32");
DLB_STATIC_ASSERT(offsetof(DLTensor, byte_offset) == 40, "DLTensor.byte_offset at +40");
DLB_STATIC_ASSERT(sizeof(DLManagedTensor) == 64, "DLManagedTensor is 64 bytes");
DLB_STATIC_ASSERT(offsetof(DLManagedTensor, dl_tensor) == 0, "legacy tensor first");
DLB_STATIC_ASSERT(offsetof(DLManagedTensor, manager_ctx) == 48, "legacy manager_ctx at +48");
DLB_STATIC_ASSERT(offsetof(DLManagedTensor, deleter) == 56, "legacy deleter at +56");
DLB_STATIC_ASSERT(sizeof(DLPackVersion) == 8, "DLPackVersion is 8 bytes");
DLB_STATIC_ASSERT(sizeof(DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned is 80 bytes");
DLB_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, version) == 0, "version at +0");
DLB_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, manager_ctx) == 8, "manager_ctx at +8");
DLB_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, deleter) == 16, "deleter at +16");
DLB_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, flags) == 24, "flags at +24");
DLB_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, dl_tensor) == 32,
                  "versioned tensor last, at +32");

#endif
