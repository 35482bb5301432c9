#pragma once
/// @file DeviceWarmUp.h
/// The device started early, beside a program's reading of its input (docs/design.md, "Starting
/// the device early").

#include "nearscape/core/Context.h"

#include <atomic>
#include <memory>
#include <thread>

namespace nearscape {

/// Starts the GPU that `context` resolves to on a background thread — the CUDA plugin loaded, the
/// device initialised, a cuBLAS handle made and pooled — so that a program's first GPU call does
/// not wait for that (docs/benchmarks.md, session 18) while it reads its input. Does nothing for
/// the CPU backend; errors are left for the work that follows to report. The destructor waits for
/// the start to end: keep the object while the work runs and let it go before the program exits.
class DeviceWarmUp {
public:
  explicit DeviceWarmUp(const Context& context);
  ~DeviceWarmUp();
  DeviceWarmUp(const DeviceWarmUp&) = delete;
  DeviceWarmUp& operator=(const DeviceWarmUp&) = delete;

  /// The work needs no float16 GEMM through cuBLAS (a search the fused kernel takes:
  /// gpuSearchIsFused): the warm-up leaves out its last step, the float16 GEMM, unless it has
  /// begun it, and the program's end does not wait for it (a cold CLI search waited for it at
  /// its end: docs/benchmarks.md, session 21). Told once the data's shape is known.
  void leaveOutFloat16Gemm() { m_float16Gemm->store(false); }

private:
  Context m_context; ///< its log level: the destructor's wait is a debug lap
  std::shared_ptr<std::atomic<bool>> m_float16Gemm = std::make_shared<std::atomic<bool>>(true);
  std::thread m_thread;
};

} // namespace nearscape
