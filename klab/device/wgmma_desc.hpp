#pragma once
// The 64-bit shared-memory matrix descriptor that wgmma takes for its A and B operands (PTX ISA,
// "Matrix Descriptor Format" of the asynchronous warpgroup-level matrix instructions). Plain
// constexpr arithmetic: the host compiler includes it too, so the CPU tests check every field.
//
//   bits  0-13  start address        (shared-memory byte address & 0x3FFFF) >> 4
//   bits 16-29  leading byte offset  (LBO) >> 4
//   bits 32-45  stride byte offset   (SBO) >> 4
//   bits 49-51  base offset          (0 when the swizzle pattern starts on its repeat boundary)
//   bits 62-63  layout / swizzle     0 none (interleave), 1 128-byte, 2 64-byte, 3 32-byte
// Other bits are zero. Addresses and offsets must be multiples of 16 bytes (the encoding drops
// the low 4 bits).
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::device {

/// The descriptor's layout field: how the operand's rows are swizzled (swizzle.hpp, and the
/// CU_TENSOR_MAP_SWIZZLE_* a TMA load laid it out with).
enum class WgmmaSwizzle : uint32_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

/// A 14-bit descriptor field: a byte address or offset in units of 16 bytes.
KLAB_HOST_DEVICE constexpr uint64_t wgmma_desc_field(uint32_t bytes) {
  return uint64_t((bytes & 0x3FFFFu) >> 4);
}

/// Encodes a descriptor for the operand at shared-memory address `smem_addr` (as smem_addr()
/// gives it), `lbo` and `sbo` bytes (leading and stride byte offsets), base offset 0..7.
KLAB_HOST_DEVICE constexpr uint64_t wgmma_desc_encode(uint32_t smem_addr, uint32_t lbo,
                                                      uint32_t sbo, WgmmaSwizzle swizzle,
                                                      uint32_t base_offset = 0) {
  return wgmma_desc_field(smem_addr) | wgmma_desc_field(lbo) << 16 | wgmma_desc_field(sbo) << 32 |
         uint64_t(base_offset & 7u) << 49 | uint64_t(swizzle) << 62;
}

}  // namespace klab::device
