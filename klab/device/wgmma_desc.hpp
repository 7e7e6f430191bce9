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
//
// What LBO and SBO mean depends on the operand's major-ness (PTX ISA, "Shared Memory Matrix
// Layout"; CuTe's make_gmma_desc states the same canonical layouts), for the swizzled layouts
// (span S = 128, 64 or 32 bytes; atoms of 8 rows of S bytes, the TMA box layout of swizzle.hpp):
// - K-major: each row of the M (or N) dimension holds S bytes of K; 8-row atoms follow each other
//   SBO bytes apart along M/N. LBO is unused (one k16 slice, 32 bytes, lies inside one row); the
//   k-th slice of 16 elements starts 32 k bytes after the atom's start (the swizzle is applied to
//   the address bits, so the tile must start on an atom boundary).
// - MN-major: each row along K holds S bytes of M (or N); 8 K-rows form an atom. LBO: bytes
//   between atoms along M/N (the next S/2 elements of a 16-bit type), SBO: bytes between 8-row
//   groups along K (a k16 slice spans two of them).
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

/// The descriptor of the operand `bytes` (a multiple of 16) past the one `desc` encodes: its start
/// address field advanced, every other field as it was. Equal to encoding the address plus `bytes`
/// whenever that sum stays under 256 KiB (every shared-memory address on sm_90 does): the 14-bit
/// field then cannot carry into the bits above it. A kernel encodes a tile's descriptor once and
/// advances it per k-step with one 32-bit add on the low word, where re-encoding each step's
/// address costs ptxas four uniform instructions (add, mask, shift, or) before every wgmma.
KLAB_HOST_DEVICE constexpr uint64_t wgmma_desc_advance(uint64_t desc, uint32_t bytes) {
  return (desc & 0xFFFF'FFFF'0000'0000ull) | uint32_t(uint32_t(desc) + (bytes >> 4));
}

/// A descriptor's fields in bytes, as wgmma_desc_encode took them (start address modulo 256 KiB).
struct WgmmaDescFields {
  uint32_t start, lbo, sbo, base_offset;
  WgmmaSwizzle swizzle;
};

KLAB_HOST_DEVICE constexpr WgmmaDescFields wgmma_desc_decode(uint64_t desc) {
  return {uint32_t(desc & 0x3FFF) << 4, uint32_t(desc >> 16 & 0x3FFF) << 4,
          uint32_t(desc >> 32 & 0x3FFF) << 4, uint32_t(desc >> 49 & 7),
          WgmmaSwizzle(uint32_t(desc >> 62))};
}

/// The bytes of one row of the swizzle pattern (16 for none: one 16-byte core-matrix row).
KLAB_HOST_DEVICE constexpr uint32_t wgmma_swizzle_span(WgmmaSwizzle s) {
  return s == WgmmaSwizzle::b128  ? 128u
         : s == WgmmaSwizzle::b64 ? 64u
         : s == WgmmaSwizzle::b32 ? 32u
                                  : 16u;
}

/// Descriptor of a K-major swizzled operand at `smem_addr`: rows of wgmma_swizzle_span(s) bytes
/// of K, 8-row atoms `atom_stride` bytes apart along M/N (8 * span when packed, as a TMA box
/// with that inner extent lays them out). LBO is encoded as 16 bytes (unused).
KLAB_HOST_DEVICE constexpr uint64_t wgmma_desc_k_major(uint32_t smem_addr, WgmmaSwizzle s,
                                                       uint32_t atom_stride) {
  return wgmma_desc_encode(smem_addr, 16, atom_stride, s);
}

/// Descriptor of an MN-major swizzled operand at `smem_addr`: rows of wgmma_swizzle_span(s)
/// bytes of M/N, one per k; `mn_stride` bytes between atoms along M/N (LBO), `k_stride` bytes
/// between groups of 8 k-rows (SBO; 8 * span when the rows are packed).
KLAB_HOST_DEVICE constexpr uint64_t wgmma_desc_mn_major(uint32_t smem_addr, WgmmaSwizzle s,
                                                        uint32_t mn_stride, uint32_t k_stride) {
  return wgmma_desc_encode(smem_addr, mn_stride, k_stride, s);
}

/// Where wgmma reads element (mn, k) of a swizzled operand whose descriptor starts `start` bytes
/// after an atom-aligned base: a byte offset from that base, by the canonical layouts above
/// (16-bit elements; the swizzle acts on the address, start included). The model the CPU tests
/// hold the descriptor helpers and the TMA box layouts against.
KLAB_HOST_DEVICE constexpr uint32_t wgmma_swizzled_offset(WgmmaSwizzle s, bool mn_major,
                                                          uint32_t start, uint32_t lbo,
                                                          uint32_t sbo, uint32_t mn, uint32_t k) {
  const uint32_t span = wgmma_swizzle_span(s), per_row = span / 2;  // 16-bit elements a row
  const uint32_t linear =
      start + (mn_major ? (mn / per_row) * lbo + (k / 8) * sbo + (k % 8) * span + (mn % per_row) * 2
                        : (mn / 8) * sbo + (mn % 8) * span + k * 2);  // K-major: k < 16
  const uint32_t chunk_mask = (span / 16 - 1) << 4;
  return linear ^ ((linear >> 3) & chunk_mask);  // swizzle.hpp's swizzle<span>
}

}  // namespace klab::device
