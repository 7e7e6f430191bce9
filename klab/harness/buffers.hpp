#pragma once
// The tensors of one problem: their specs, host copies and the pointers a variant launches on.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "klab/core/dtype.hpp"
#include "klab/core/rng.hpp"

namespace klab {

enum class Role : uint8_t {
  input,   ///< read only
  output,  ///< written only: poisoned before each checked run
  inout,   ///< read and written (saxpy's y, gemm's C with beta != 0)
};

class Buffers;
struct Tensor;

struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  int64_t numel = 0;
  Role role = Role::input;
  /// Optional fixed distribution for this tensor (e.g. a scalar operand); otherwise the run's.
  bool fixed_dist = false;
  Dist dist = Dist::normal;
  /// Optional: an input the family builds itself from the seed (a valid page table, sorted
  /// expert offsets, scales), after every random input is drawn and in the order of the specs,
  /// so it may read the tensors before it (the host copies).
  std::function<void(const Buffers&, Tensor&, uint64_t seed)> build = nullptr;
};

struct Tensor {
  TensorSpec spec;
  std::vector<unsigned char> host;  ///< host copy: generated inputs, or outputs read back
  void* data = nullptr;             ///< what the variant uses: device pointer (gpu) or host (cpu)

  int64_t bytes() const { return spec.numel * dtype_size(spec.dtype); }
  double host_at(int64_t i) const { return load_as_double(host.data(), spec.dtype, i); }
  bool is_output() const { return spec.role != Role::input; }
};

class Buffers {
 public:
  std::vector<Tensor> tensors;
  void* workspace = nullptr;  ///< device scratch of Variant::workspace_bytes (nullptr if none)
  size_t workspace_bytes = 0;

  Tensor& operator[](std::string_view name);
  const Tensor& operator[](std::string_view name) const;

  /// Typed pointer for the variant's device (device memory for gpu variants, host for cpu).
  template <class T>
  T* ptr(std::string_view name) {
    return static_cast<T*>((*this)[name].data);
  }
  template <class T>
  const T* host(std::string_view name) const {
    return reinterpret_cast<const T*>((*this)[name].host.data());
  }
  /// Bytes of every tensor together (the working set of one run).
  int64_t total_bytes() const;
};

}  // namespace klab
