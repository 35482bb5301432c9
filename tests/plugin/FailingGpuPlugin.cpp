// A stand-in GPU whose every call fails, so that CI (which has no GPU) checks the fallback seam:
// it reports a usable device, then each method throws what NEARSCAPE_TEST_GPU_FAILURE names —
// "error" (DeviceError: a failed cuBLAS call or launch), "oom" (DeviceOutOfMemory) or
// "unsupported". The indexes' device copies are made and fail only when searched, as a search
// that runs out of scratch memory would. tst_plugin points NEARSCAPE_CUDA_PLUGIN at it; the
// real plugin's own sites are walked on a GPU by tests/gpu/fault-walk.sh. It offers every domain
// interface of gpu/Plugin.h; NEARSCAPE_TEST_STALE_DEVICE names one ("knn", "layout", …) that it
// then offers with the version before this program's, as a plugin of an older build would.
#include "analysis/AnalysisDevice.h"
#include "cluster/KMeansDevice.h"
#include "gpu/DeviceRuntime.h"
#include "gpu/Plugin.h"
#include "graph/GraphDevice.h"
#include "index/IndexDevice.h"
#include "knn/KnnDevice.h"
#include "layout/LayoutDevice.h"
#include "nearscape/core/Error.h"

#include <cstdlib>
#include <cstring>

namespace {

using namespace nearscape;

[[noreturn]] void fail(const char* what) {
  const char* kind = std::getenv("NEARSCAPE_TEST_GPU_FAILURE");
  const std::string message = std::string("test GPU: ") + what + " failed";
  if (kind && std::strcmp(kind, "oom") == 0)
    throw DeviceOutOfMemory(message);
  if (kind && std::strcmp(kind, "unsupported") == 0)
    throw Unsupported(message);
  throw DeviceError(message);
}

struct FailingClusters final : gpu::ClusterIndex {
  std::optional<KnnResult> search(const MatrixView<float>&, int, bool, JobControl&,
                                  double) const override {
    fail("cluster search");
  }
  double buildSeconds() const override { return 0; }
};

struct FailingResident final : gpu::ResidentIndex {
  KnnResult search(const MatrixView<float>&, int, JobControl&) const override {
    fail("resident search");
  }
};

struct FailingGraphSearcher final : gpu::GraphSearcher {
  void search(const MatrixView<float>&, int, int, int, int, std::int32_t*, float*,
              JobControl&) const override {
    fail("graph search");
  }
  std::uint64_t bytes() const override { return 0; }
};

struct FailingIvfSearcher final : gpu::IvfSearcher {
  void search(const MatrixView<float>&, int, int, std::int32_t*, float*,
              JobControl&) const override {
    fail("ivf search");
  }
  std::uint64_t bytes() const override { return 0; }
};

class FailingRuntime final : public gpu::DeviceRuntime {
public:
  DeviceInfo queryDevice(int ordinal) override {
    DeviceInfo info;
    info.compiledWithCuda = true;
    info.usable = ordinal == 0 || ordinal == 1; // two, for --devices
    info.name = "failing test GPU";
    info.totalMemory = info.freeMemory = std::uint64_t(8) << 30;
    info.computeCapability = 90;
    info.reason = info.usable ? "" : "no such device";
    return info;
  }
  int deviceCount() override { return 2; }
  void warmUp(const Context&, const std::atomic<bool>&) override { fail("warm-up"); }
  void rowNormsSquared(const MatrixView<float>&, float*, const Context&) override {
    fail("row norms");
  }
};

class FailingKnn final : public gpu::KnnDevice {
public:
  KnnResult exactSearch(const MatrixView<float>&, const MatrixView<float>&, int, Metric, bool,
                        const Context&, JobControl&, const ExactKnnParams&) override {
    fail("exact search");
  }
  std::optional<KnnResult> stepSearch(const MatrixView<float>&, const MatrixView<float>&, int, bool,
                                      const Context&, JobControl&, double) override {
    fail("STEP search");
  }
  std::optional<gpu::PairsShare> pairsShare(const MatrixView<float>&, int, Metric, int, int,
                                            const Context&, JobControl&, const ExactKnnParams&,
                                            knn::PairsExchange*) override {
    fail("paired sweeps' share");
  }
  std::unique_ptr<gpu::ClusterIndex> makeClusterIndex(const MatrixView<float>&,
                                                      const Context&) override {
    return std::make_unique<FailingClusters>();
  }
  std::unique_ptr<gpu::ResidentIndex> makeResidentIndex(const MatrixView<float>&, Metric,
                                                        const Context&) override {
    return std::make_unique<FailingResident>();
  }
  KnnResult gnndGraph(const MatrixView<float>&, int, Metric, const Context&, JobControl&,
                      const NnDescentParams&, const NnDescentProgress&, bool,
                      const gpu::GnndWarmStart&, const gpu::GnndClusters&) override {
    fail("GNND");
  }
  std::vector<float> gnndCodebook(const MatrixView<float>&, Metric, int, const Context&) override {
    fail("GNND codebook");
  }
};

class FailingIndex final : public gpu::IndexDevice {
public:
  std::vector<std::int32_t> optimiseSearchGraph(const MatrixView<std::int32_t>&, int,
                                                const Context&) override {
    fail("search graph");
  }
  std::vector<std::int32_t> pruneByDetours(const MatrixView<std::int32_t>&, int,
                                           const Context&) override {
    fail("graph pruning");
  }
  std::unique_ptr<gpu::GraphSearcher> makeGraphSearcher(const MatrixView<float>&,
                                                        const std::int32_t*, int,
                                                        const std::int32_t*, const std::int32_t*,
                                                        int, Metric, const Context&) override {
    return std::make_unique<FailingGraphSearcher>();
  }
  std::unique_ptr<gpu::IvfSearcher> makeIvfSearcher(const MatrixView<float>&, const std::int64_t*,
                                                    const std::int32_t*, const MatrixView<float>&,
                                                    Metric, const Context&) override {
    return std::make_unique<FailingIvfSearcher>();
  }
};

class FailingKMeans final : public gpu::KMeansDevice {
public:
  std::vector<std::int32_t> nearestCentroids(const MatrixView<float>&, const MatrixView<float>&,
                                             int, Metric, const Context&) override {
    fail("nearest centroids");
  }
};

class FailingGraph final : public gpu::GraphDevice {
public:
  gpu::DeviceForest boruvkaForest(const UndirectedGraph&, const Context&, JobControl&) override {
    fail("Boruvka");
  }
};

class FailingLayout final : public gpu::LayoutDevice {
public:
  void layoutEpochs(const layout::EpochStep&, int, float, int, float*, const Context&, JobControl&,
                    const std::function<void(int)>&) override {
    fail("layout epochs");
  }
};

class FailingAnalysis final : public gpu::AnalysisDevice {
public:
  std::unique_ptr<gpu::TileSearch>
  makeTileSearch(const MatrixView<float>&, const analysis::TilePlan&, const Context&) override {
    fail("tile search");
  }
};

/// `Device`'s slot: this build's version, or the one before where NEARSCAPE_TEST_STALE_DEVICE
/// names the domain.
template <typename Device> gpu::DeviceSlot<Device> slot(Device& device) {
  const char* stale = std::getenv("NEARSCAPE_TEST_STALE_DEVICE");
  const bool old = stale && std::strcmp(stale, gpu::DeviceSlotOf<Device>::name) == 0;
  return {&device, Device::kVersion - (old ? 1 : 0)};
}

gpu::PluginDevices makeDevices() {
  static FailingRuntime runtime;
  static FailingKnn knn;
  static FailingIndex index;
  static FailingKMeans kmeans;
  static FailingGraph graph;
  static FailingLayout layout;
  static FailingAnalysis analysis;
  return {slot<gpu::DeviceRuntime>(runtime),  slot<gpu::KnnDevice>(knn),
          slot<gpu::IndexDevice>(index),      slot<gpu::KMeansDevice>(kmeans),
          slot<gpu::GraphDevice>(graph),      slot<gpu::LayoutDevice>(layout),
          slot<gpu::AnalysisDevice>(analysis)};
}

} // namespace

extern "C" __attribute__((visibility("default"))) int nearscape_gpu_plugin_abi() {
  return nearscape::gpu::kPluginAbiVersion;
}
extern "C" __attribute__((visibility("default"))) const nearscape::gpu::PluginDevices*
nearscape_gpu_plugin_devices() {
  static const nearscape::gpu::PluginDevices devices = makeDevices();
  return &devices;
}
