#pragma once
// What the cuDNN frontend baselines share (attention.baseline_cudnn, decode_attention's
// baseline_cudnn_paged): the status check, the process's handle, tensors described by dims and
// strides, and the build of a graph's plan with cuDNN's reason kept when it refuses. Host code
// only, for the .cpp files that include the frontend (sources.cmake: -isystem and
// CUDNN_FRONTEND_SKIP_JSON_LIB).
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "klab/core/cuda_check.hpp"
#include "klab/core/cudnn_check.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/family.hpp"

namespace klab::cudnn_graph {

namespace fe = cudnn_frontend;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

/// The process's cuDNN handle, created on first use and never destroyed: cudnnDestroy at
/// static-destruction time may run after the CUDA context is gone.
inline cudnnHandle_t handle() {
  static const cudnnHandle_t h = [] {
    cudnnHandle_t x = nullptr;
    KLAB_CUDNN_CHECK(cudnnCreate(&x));
    return x;
  }();
  return h;
}

/// A graph input with the given dims, strides (elements) and pointer alignment (bytes).
inline TensorPtr input(fe::graph::Graph& g, const char* name, int64_t uid, std::vector<int64_t> dim,
                       std::vector<int64_t> stride, int64_t alignment = 16) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim(std::move(dim))
                      .set_stride(std::move(stride))
                      .set_alignment(alignment));
}

/// Marks a node's result as a graph output with the given uid, dims, strides and alignment.
inline void output(const TensorPtr& x, int64_t uid, std::vector<int64_t> dim,
                   std::vector<int64_t> stride, int64_t alignment = 16) {
  x->set_output(true)
      .set_uid(uid)
      .set_dim(std::move(dim))
      .set_stride(std::move(stride))
      .set_alignment(alignment);
}

/// Validates and lowers g, chooses its plan by heuristic mode A (then the fallback list) and
/// builds it. False with the failing step and cuDNN's message in `error` when cuDNN refuses.
inline bool build_plan(fe::graph::Graph& g, int64_t& workspace_bytes, std::string& error) {
  auto failed = [&](const char* step, fe::error_t e) {  // get_message is not const
    if (e.is_good()) return false;
    error = std::string(step) + ": " + e.get_message();
    return true;
  };
  return !failed("validate", g.validate()) &&
         !failed("build_operation_graph", g.build_operation_graph(handle())) &&
         !failed("create_execution_plans",
                 g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK})) &&
         !failed("check_support", g.check_support(handle())) &&
         !failed("build_plans",
                 g.build_plans(handle(), fe::BuildPlanPolicy_t::HEURISTICS_CHOICE)) &&
         !failed("get_workspace_size", g.get_workspace_size(workspace_bytes));
}

/// Whether cuDNN can be asked at all: a GPU of the SM the baseline needs (otherwise the runner
/// reports the missing device or SM itself, and can_implement does not build plans).
inline bool device_can_plan(int min_sm) {
  const DeviceInfo& d = device_info();
  return d.present && d.sm() >= min_sm;
}

/// Enqueues g's plan on `stream`: the handle's stream set, the plan executed with the variant
/// pack's pointers and the workspace; no allocation, no synchronisation.
inline void execute(fe::graph::Graph& g, std::unordered_map<int64_t, void*>& pack, void* workspace,
                    Stream stream, const char* what) {
  KLAB_CUDNN_CHECK(cudnnSetStream(handle(), reinterpret_cast<cudaStream_t>(stream)));
  fe::error_t e = g.execute(handle(), pack, workspace);
  if (e.is_bad()) throw Error(std::string(what) + " execute: " + e.get_message());
  KLAB_CHECK_LAUNCH();
}

/// The plan of `key`, built by build(plan) on its first request and kept for the process, like
/// the handle, never destroyed: its descriptors' teardown at static-destruction time could run
/// after the CUDA context is gone. Plan has `graph` (null when cuDNN refused) and `error`; an
/// exception from the frontend (a missing library) is kept as the refusal's reason.
template <class Plan, class Key, class Build>
const Plan& cached_plan(const Key& key, Build&& build) {
  static std::mutex mu;
  static auto& cache = *new std::map<Key, std::unique_ptr<Plan>>;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return *it->second;
  auto plan = std::make_unique<Plan>();
  try {
    build(*plan);
  } catch (const std::exception& e) {
    plan->graph.reset();
    plan->error = e.what();
  }
  return *cache.emplace(key, std::move(plan)).first->second;
}

}  // namespace klab::cudnn_graph
