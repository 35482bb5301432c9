#pragma once
// Work spread over several GPUs of one host (Context::devices). Each device gets a host thread
// and its own share — query rows, shards, a replica's queries — and everything travels through
// host memory: the inputs are there already, each share's result comes back there, and the
// merges (top-k rows, GGM's folds) are host work. No device-to-device traffic is needed, so
// neither NCCL nor peer copies are used (docs/design.md, "Several GPUs").

#include "gpu/Dispatch.h"
#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace nearscape::gpu {

/// The GPUs `context` spreads its work over: context.devices when it names two or more and the
/// context resolves to the GPU; else none (one device, context.device, does the work).
std::vector<int> spreadDevices(const Context& context);

/// `context` narrowed to one device: device = `ordinal`, devices cleared (no further split).
Context onDevice(const Context& context, int ordinal);

/// Runs `work(part, partJob)` for part = 0 … parts − 1 at once, each on its own thread. A part's
/// job stops with `job` and with the first part that fails; `job` is told the mean of the parts'
/// progress. Returns when every part has ended; then rethrows the first failure (one other than
/// the stop it caused).
void runParts(std::size_t parts, JobControl& job,
              const std::function<void(int part, JobControl&)>& work);

/// Runs `work(part, partContext, partJob)` for part = 0 … devices.size() − 1 at once, each on its
/// own thread with `onDevice(context, devices[part])` (runParts).
void onEachDevice(const std::vector<int>& devices, const Context& context, JobControl& job,
                  const std::function<void(int part, const Context&, JobControl&)>& work);

/// The first row of part `part` when `rows` are split into `parts` contiguous, even parts.
inline std::int64_t partBegin(std::int64_t rows, std::size_t parts, std::size_t part) {
  return rows * std::int64_t(part) / std::int64_t(parts);
}

/// `context` on the first GPU of its split (devices[0]) where it has one, else as it is: where an
/// index's first device copy lives.
inline Context primaryDevice(const Context& context) {
  const std::vector<int> devices = spreadDevices(context);
  return devices.empty() ? context : onDevice(context, devices.front());
}

/// An index's device copies beyond its first (primaryDevice): one on each further GPU of
/// context.devices, made by `make(onDevice(context, ordinal))` — replicas, as Faiss's
/// IndexReplicas, each searching a share of a batch's queries. A GPU that cannot hold its copy
/// (out of memory, a device error) is left out.
template <typename Searcher, typename Make>
std::vector<std::unique_ptr<Searcher>> makeReplicas(const Context& context, const Make& make) {
  std::vector<std::unique_ptr<Searcher>> replicas;
  const std::vector<int> devices = spreadDevices(context);
  for (std::size_t i = 1; i < devices.size(); ++i)
    tryOptionalGpuPath([&] { replicas.push_back(make(onDevice(context, devices[i]))); });
  return replicas;
}

/// Fewest queries a replica's share holds (below, the first copy searches the batch alone).
constexpr std::int64_t kMinReplicaRows = 1024;

/// `search(searcher, firstRow, endRow, job)` over `rows` queries: by `first` alone, or split over
/// it and its replicas at once when the batch gives each kMinReplicaRows. Throws what a search
/// throws (gpu::tryOnDevice then falls back to the host copy).
template <typename Searcher, typename Search>
void searchOnReplicas(const Searcher& first, const std::vector<std::unique_ptr<Searcher>>& replicas,
                      std::int64_t rows, JobControl& job, const Search& search) {
  const std::size_t parts = 1 + replicas.size();
  if (parts == 1 || rows < kMinReplicaRows * std::int64_t(parts)) {
    search(first, std::int64_t(0), rows, job);
    return;
  }
  runParts(parts, job, [&](int part, JobControl& partJob) {
    const Searcher& searcher = part == 0 ? first : *replicas[std::size_t(part) - 1];
    search(searcher, partBegin(rows, parts, std::size_t(part)),
           partBegin(rows, parts, std::size_t(part) + 1), partJob);
  });
}

} // namespace nearscape::gpu
