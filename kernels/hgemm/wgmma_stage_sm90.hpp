#pragma once
// The shared-memory stage of the wgmma rungs (v10, v11) and the descriptors that read it. One
// stage holds one k-tile of 64: A's (kBlockM, 64) box, K-major, 128-byte rows; B's (64, kBlockN)
// as kBlockN / 64 panels of (64 k-rows, 64 n) boxes, one after the other: B is row-major (K x N,
// N contiguous), so each k-row of a panel is 128 bytes of N: an MN-major operand ("transposed
// B"). Both as the TMA lays boxes out with CU_TENSOR_MAP_SWIZZLE_128B (swizzle.hpp), every box
// on a 1024-byte boundary. Host-and-device constexpr: the CPU tests decode these descriptors and
// check, element by element, that wgmma reads each operand where the TMA put it.
#include <cstdint>

#include "klab/device/swizzle.hpp"
#include "klab/device/wgmma_desc.hpp"

namespace klab::hgemm {

template <int kBlockM_, int kBlockN_>
struct WgmmaStage {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_, kBlockK = 64;  // 128-byte rows
  static constexpr int kPanelCols = 64;                                       // n per panel
  static constexpr int kPanels = kBlockN / kPanelCols;
  static constexpr uint32_t kRowBytes = 128, kAtomBytes = 8 * kRowBytes;
  static constexpr uint32_t kPanelBytes = kBlockK * kRowBytes;  // one (64 k, 64 n) box of B
  static constexpr uint32_t kBytesA = kBlockM * kRowBytes, kBytesB = kPanels * kPanelBytes;
  static constexpr uint32_t kBytes = kBytesA + kBytesB;
  static constexpr auto kSwizzle = device::WgmmaSwizzle::b128;
  static_assert(kBlockM % 64 == 0 && kBlockN % kPanelCols == 0);

  /// Where the TMA puts A(row, k) and B(k, n) of the stage (bytes from A's or B's start).
  static constexpr uint32_t offset_a(int row, int k) {
    return device::swizzle_128b(uint32_t(row) * kRowBytes + uint32_t(k) * 2);
  }
  static constexpr uint32_t offset_b(int k, int n) {
    return uint32_t(n / kPanelCols) * kPanelBytes +
           device::swizzle_128b(uint32_t(k) * kRowBytes + uint32_t(n % kPanelCols) * 2);
  }

  /// A's rows 64 m64 .. 64 m64 + 63, k 16 kk .. 16 kk + 15 (a_addr: A's shared-memory address):
  /// 8-row atoms packed; the k16 slice is 32 bytes into each 128-byte row.
  static constexpr uint64_t desc_a(uint32_t a_addr, int m64, int kk) {
    return device::wgmma_desc_k_major(a_addr + uint32_t(m64) * 64 * kRowBytes + uint32_t(kk) * 32,
                                      kSwizzle, kAtomBytes);
  }
  /// B's k-rows 16 kk .. 16 kk + 15, n from panel p on (b_addr: B's shared-memory address): the
  /// next 64 n are a panel further (LBO), the next 8 k-rows an atom further (SBO).
  static constexpr uint64_t desc_b(uint32_t b_addr, int kk, int p = 0) {
    return device::wgmma_desc_mn_major(
        b_addr + uint32_t(p) * kPanelBytes + uint32_t(kk) * 16 * kRowBytes, kSwizzle, kPanelBytes,
        kAtomBytes);
  }
};

}  // namespace klab::hgemm
