#pragma once
// The XOR swizzles of shared-memory tiles, on byte offsets, as the TMA lays boxes out with
// CU_TENSOR_MAP_SWIZZLE_128B / _64B / _32B and as wgmma reads them (WgmmaSwizzle in
// wgmma_desc.hpp). A kB-byte swizzle works on atoms of 8 x kB bytes (1024 / 512 / 256): bits 4..
// of an offset (the 16-byte chunk within a kB-byte span) are XORed with as many bits from 7 up
// (the offset's 128-byte row within the atom). 128B: chunk (0..7) ^ row (0..7); 64B: chunk
// (0..3) ^ row (0..3); 32B: chunk (0..1) ^ row (0..1). Inside a chunk nothing moves, and each
// atom maps onto itself. The tile (or the TMA box) must start on an atom boundary.
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::device {

/// Bytes of the repeating pattern of the kSpan-byte swizzle: 8 rows of kSpan bytes.
template <uint32_t kSpan>
inline constexpr uint32_t kSwizzleAtomBytes = 8 * kSpan;

/// The byte offset at which the kSpan-byte swizzle (128, 64 or 32) stores byte `offset` of the
/// unswizzled tile (an involution: applying it twice gives `offset` back).
template <uint32_t kSpan>
KLAB_HOST_DEVICE constexpr uint32_t swizzle(uint32_t offset) {
  static_assert(kSpan == 128 || kSpan == 64 || kSpan == 32, "the TMA's swizzle spans");
  constexpr uint32_t kChunkBits = (kSpan / 16 - 1) << 4;  // the chunk within a span
  return offset ^ ((offset >> 3) & kChunkBits);           // bits 7.. onto bits 4..
}

KLAB_HOST_DEVICE constexpr uint32_t swizzle_128b(uint32_t offset) { return swizzle<128>(offset); }
KLAB_HOST_DEVICE constexpr uint32_t swizzle_64b(uint32_t offset) { return swizzle<64>(offset); }
KLAB_HOST_DEVICE constexpr uint32_t swizzle_32b(uint32_t offset) { return swizzle<32>(offset); }

/// swizzle_128b of chunk `chunk` (0..7) of 128-byte row `row`, in the chunk form kernels index
/// with: row * 128 + (chunk ^ (row % 8)) * 16 (the same value; the CPU tests check it).
KLAB_HOST_DEVICE constexpr uint32_t swizzle_128b_chunk(int row, int chunk) {
  return uint32_t(row) * 128u + uint32_t((chunk ^ (row & 7)) * 16);
}

}  // namespace klab::device
