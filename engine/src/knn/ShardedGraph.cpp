// GNND §5's shards: data beyond the memory budget, or spread over several GPUs, built in shards
// whose every pair is merged by GGM, each row's best k kept in host memory.
#include "knn/ShardedGraph.h"

#include "gpu/Dispatch.h"
#include "gpu/MultiDevice.h"
#include "knn/DescendPiece.h"
#include "knn/KnnDevice.h"
#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nearscape::knn {
namespace {

/// An event that happens once; fire() again is harmless.
struct OneShot {
  std::promise<void> promise;
  std::shared_future<void> fired = promise.get_future().share();
  std::once_flag once;
  void fire() {
    std::call_once(once, [this] { promise.set_value(); });
  }
};

/// Runs `action` when the scope ends, however it ends.
struct OnExit {
  std::function<void()> action;
  ~OnExit() { action(); }
};

/// Folds a merge's list of one row into its best k so far: both sorted by (distance, id) with
/// exact distances, so an id found twice comes with (nearly) the same distance.
void foldInto(std::int32_t* ids, float* dists, const std::int32_t* moreIds, const float* moreDists,
              std::int64_t idOffset0, std::int64_t split, std::int64_t idOffset1, int k) {
  thread_local std::vector<std::int32_t> outIds;
  thread_local std::vector<float> outDists;
  outIds.clear();
  outDists.clear();
  auto global = [&](std::int32_t m) {
    return std::int32_t(m < split ? m + idOffset0 : m - split + idOffset1);
  };
  int a = 0, b = 0;
  while (int(outIds.size()) < k && (a < k || b < k)) {
    const bool hasA = a < k && ids[a] >= 0, hasB = b < k && moreIds[b] >= 0;
    if (!hasA && !hasB)
      break;
    const std::int32_t idB = hasB ? global(moreIds[b]) : -1;
    const bool takeA =
        hasA && (!hasB || dists[a] < moreDists[b] || (dists[a] == moreDists[b] && ids[a] <= idB));
    const std::int32_t id = takeA ? ids[a] : idB;
    const float dist = takeA ? dists[a] : moreDists[b];
    takeA ? ++a : ++b;
    if (!hasA)
      a = k;
    if (!hasB)
      b = k;
    // An id found twice: the same exact distance up to the summation order of the backend
    // that computed it, so it sits among the last few kept.
    bool seen = false;
    for (std::size_t c = outIds.size();
         c-- > 0 && !seen && outDists[c] >= dist - 1e-5f * std::abs(dist);)
      seen = outIds[c] == id;
    if (seen)
      continue;
    outIds.push_back(id);
    outDists.push_back(dist);
  }
  std::copy(outIds.begin(), outIds.end(), ids);
  std::copy(outDists.begin(), outDists.end(), dists);
  std::fill(ids + outIds.size(), ids + k, -1);
}

/// Round-robin rounds of every pair of `count` shards (the circle method): the pairs of one
/// round are disjoint, so that as many merges as there are GPUs can run at once.
std::vector<std::pair<std::int64_t, std::int64_t>> roundRobinPairs(std::int64_t count) {
  const std::int64_t players = count + count % 2; // an odd count gets a bye each round
  std::vector<std::int64_t> seat(static_cast<std::size_t>(players));
  for (std::int64_t i = 0; i < players; ++i)
    seat[std::size_t(i)] = i;
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for (std::int64_t round = 0; round + 1 < players; ++round) {
    for (std::int64_t i = 0; i < players / 2; ++i) {
      const std::int64_t a = seat[std::size_t(i)], b = seat[std::size_t(players - 1 - i)];
      if (a < count && b < count)
        pairs.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::rotate(seat.begin() + 1, seat.end() - 1, seat.end()); // seat 0 stays
  }
  return pairs;
}

/// The shards' builds and merges spread over several GPUs (shardedGraph's steps 1 and 2): each
/// GPU builds the next shard not yet taken; then merges the next pair in round-robin order and
/// folds its lists while it merges the one after. `steps` counts builds and merges for the
/// job's progress.
template <typename Build, typename Merge, typename Fold, typename Note>
void spreadOverDevices(const std::vector<int>& devices, const Context& context, JobControl& job,
                       std::int64_t shards, double steps, const Build& buildShard,
                       const Merge& mergePair, const Fold& foldMerge, const Note& noteReport) {
  std::atomic<int> done{0}; // builds and merges finished
  // A step's own progress as a share of the whole, told to `job` directly (each step already
  // knows the whole, so the parts' mean would undercount), never going back.
  std::mutex progressMutex;
  double shown = 0;
  auto stepJob = [&](JobControl& deviceJob, const std::string& what) {
    return std::make_unique<JobControl>(deviceJob, [&, what](double fraction, const std::string&) {
      const double whole = (done.load() + fraction) / steps;
      const std::lock_guard lock(progressMutex);
      if (whole > shown) {
        shown = whole;
        job.progress(whole, "NN-Descent: " + what);
      }
    });
  };
  std::atomic<std::int64_t> nextShard{0};
  gpu::onEachDevice(devices, context, job, [&](int, const Context& on, JobControl& deviceJob) {
    LogLaps lap(on, "sharded, GPU " + std::to_string(on.device) + ":");
    for (std::int64_t s; (s = nextShard++) < shards;) {
      const auto shardJob =
          stepJob(deviceJob, "shard " + std::to_string(s + 1) + " of " + std::to_string(shards) +
                                 " (GPU " + std::to_string(on.device) + ")");
      buildShard(s, on, *shardJob);
      lap("shard " + std::to_string(s + 1));
      ++done;
    }
  });

  // A merge reads only the shards' own graphs, never the best lists, so merges need no order:
  // each GPU takes the next pair. Folds write the best lists of the pair's rows: two folds that
  // share a shard take turns (a lock a shard). A GPU's fold runs on a host thread while its next
  // merge works, begun once that merge's rows are uploaded (as on one GPU: both are bound by the
  // host's memory). Round-robin order keeps the pairs that run at once disjoint.
  const std::vector<std::pair<std::int64_t, std::int64_t>> pairs = roundRobinPairs(shards);
  std::atomic<std::size_t> nextPair{0};
  std::vector<std::mutex> foldLocks(static_cast<std::size_t>(shards));
  gpu::onEachDevice(devices, context, job, [&](int, const Context& on, JobControl& deviceJob) {
    LogLaps lap(on, "sharded, GPU " + std::to_string(on.device) + ":");
    auto uploaded = std::make_shared<OneShot>(); // the running merge's rows are on the device
    std::future<void> folding;                   // the previous merge's fold
    const OnExit settle{[&] {                    // on a throw: the fold is let go and waited for
      uploaded->fire();
      if (folding.valid())
        folding.wait();
    }};
    for (std::size_t t; (t = nextPair++) < pairs.size();) {
      const auto [a, b] = pairs[t];
      const auto mergeJob = stepJob(deviceJob, "merge of shards " + std::to_string(a + 1) +
                                                   " and " + std::to_string(b + 1) + " (GPU " +
                                                   std::to_string(on.device) + ")");
      KnnResult merged = mergePair(a, b, on, *mergeJob, [signal = uploaded] { signal->fire(); });
      uploaded->fire(); // the CPU's merge calls no one
      noteReport(merged);
      lap("merge " + std::to_string(a + 1) + "+" + std::to_string(b + 1));
      if (folding.valid())
        folding.get();
      lap("fold wait");
      uploaded = std::make_shared<OneShot>();
      folding = std::async(
          std::launch::async, [&, merged = std::move(merged), a = a, b = b, wait = uploaded] {
            wait->fired.wait();
            const std::scoped_lock lock(foldLocks[std::size_t(a)], foldLocks[std::size_t(b)]);
            foldMerge(merged, a, b);
            ++done;
          });
    }
    uploaded->fire();
    if (folding.valid())
      folding.get();
    lap("last fold");
  });
}

} // namespace

} // namespace nearscape::knn

namespace nearscape {

std::uint64_t nnDescentBytesPerItem(std::int64_t d, int k, int listSize) {
  // The vector, lists of up to 2k or listSize (id, distance), NEW/OLD samples and their
  // reverses, proposals.
  const int lists = listSize > 0 ? std::max(k, listSize) : 2 * k;
  return std::uint64_t(d) * 4 + std::uint64_t(lists) * 8 + 4ull * 32 * 4 + 64ull * 8;
}

} // namespace nearscape

namespace nearscape::knn {

bool buildsInShards(std::int64_t n, std::int64_t d, int k, const Context& context, int listSize) {
  return context.memoryBudget > 0 &&
         nnDescentBytesPerItem(d, k, listSize) * std::uint64_t(n) > context.memoryBudget;
}

std::vector<float> sharedCodebook(const MatrixView<float>& data, std::int64_t pieceRows,
                                  Metric metric, const Context& context, int& count) {
  const std::int64_t n = data.rows;
  const int clusters = int(std::clamp<std::int64_t>(pieceRows / 1024, 1, 4096));
  const std::int64_t m = std::min<std::int64_t>(n, std::int64_t(clusters) * 64);
  std::vector<float> sample(static_cast<std::size_t>(m * data.cols));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i)
    std::copy_n(data.row(i * n / m), data.cols, sample.data() + i * data.cols);
  std::vector<float> centroids;
  count = 0;
  gpu::tryOptionalGpuPath([&] {
    centroids = gpu::requireDevice<gpu::KnnDevice>().gnndCodebook({sample.data(), m, data.cols},
                                                                  metric, clusters, context);
    count = clusters;
  });
  return centroids;
}

/// GNND §5 for data beyond the budget: shards of half the budget's items, built one at a time;
/// then every pair of shards merged by GGM with only those two shards' rows in working memory
/// (so no step exceeds the budget, as the paper's out-of-memory scheme), each merge's lists
/// (exact distances) folded into every row's best k so far in host memory. On several GPUs,
/// as many shards as GPUs at least (a multiple of their count); each GPU builds the next shard,
/// then merges the next pair and folds it beside its next merge (spreadOverDevices).
KnnResult shardedGraph(const MatrixView<float>& data, int k, Metric metric, Backend backend,
                       const Context& context, JobControl& job, const NnDescentParams& params,
                       const NnDescentProgress& progress) {
  const auto started = std::chrono::steady_clock::now();
  const std::int64_t n = data.rows;
  const std::uint64_t perItem = nnDescentBytesPerItem(data.cols, k, params.listSize);
  const std::vector<int> devices = gpu::spreadDevices(context);
  const bool overBudget =
      context.memoryBudget > 0 && perItem * std::uint64_t(n) > context.memoryBudget;
  std::int64_t shards = 1;
  if (overBudget) {
    const std::int64_t budgetRows = std::int64_t(context.memoryBudget / perItem) / 2;
    NEARSCAPE_EXPECTS(
        budgetRows >= 2 * (k + 1),
        "the memory budget (" + std::to_string(context.memoryBudget) +
            " bytes) holds fewer than 4(k + 1) items of NN-Descent's working memory (" +
            std::to_string(perItem) + " bytes each): two shards of 2(k + 1) must fit");
    shards = (n + budgetRows - 1) / budgetRows;
  }
  if (devices.size() > 1) { // every GPU busy in every round of builds and merges, where the
    // shards stay as large as one GPU's would (2(k + 1) rows at least) and within the limit
    const auto d = std::int64_t(devices.size());
    const std::int64_t rounded = (std::max(shards, d) + d - 1) / d * d;
    if (n / rounded >= 2 * (std::int64_t(k) + 1) && rounded <= 64)
      shards = rounded;
  }
  // Every pair of shards is merged, so the work grows with the square of their count: beyond
  // kMaxShards a tiny budget would run for hours. Refuse, saying which budget would do.
  constexpr std::int64_t kMaxShards = 64;
  if (shards > kMaxShards)
    throw InvalidArgument(
        "the memory budget (" + std::to_string(context.memoryBudget) +
        " bytes) would split NN-Descent into " + std::to_string(shards) + " shards (" +
        std::to_string(shards * (shards - 1) / 2) + " pairwise merges); give at least " +
        std::to_string(2 * perItem * std::uint64_t((n + kMaxShards - 1) / kMaxShards)) +
        " bytes (at most " + std::to_string(kMaxShards) + " shards)");
  const std::int64_t shardRows = (n + shards - 1) / shards;
  auto bound = [&](std::int64_t s) { return n * s / shards; };
  auto rows = [&](std::int64_t s) {
    return MatrixView<float>{data.row(bound(s)), bound(s + 1) - bound(s), data.cols};
  };
  Context inner = context;
  inner.memoryBudget = 0;
  inner.devices.clear();
  // Shards and merges finish in float64 (on the GPU, where the rows are): the folded lists then
  // compare exact distances, and no pass over all rows' neighbours is needed at the end (on the
  // host it cost 2.9 s for manifold 10M × 96: random reads of every neighbour's row).
  NnDescentParams partial = params;
  partial.exactFinish = true;
  const double steps = double(shards + shards * (shards - 1) / 2);
  int step = 0;
  LogLaps lap(context, "sharded"); // where the host's time goes, at the log's debug level
  // Each shard and merge is a stage of the job: its own iterations' progress stays inside it.
  auto stage = [&](const std::string& what) {
    job.progress(double(step) / steps, "NN-Descent: " + what);
    ++step;
    return job.sub(double(step - 1) / steps, double(step) / steps);
  };

  // 0. On the GPU, one k-means codebook for all (sharedCodebook: a merge's head start needs its
  // rows' clusters in one clustering; its own k-means took 85 ms of a 1.1 s merge of 5.2M rows).
  gpu::GnndClusters shared;
  std::vector<float> centroids;
  std::vector<std::int32_t> labels;
  if (backend == Backend::Cuda) {
    int count = 0;
    centroids = sharedCodebook(data, shardRows, metric, inner, count);
    if (count > 0) { // else each step clusters on its own
      labels.resize(static_cast<std::size_t>(n));
      shared.centroids = &centroids;
      shared.count = count;
    }
    lap("codebook");
  }
  auto sharedFor = [&](std::int64_t a, std::int64_t b) {
    gpu::GnndClusters c = shared;
    if (c.centroids) {
      if (b < 0) {
        c.labelsOut = labels.data() + bound(a);
      } else {
        c.labels = labels.data() + bound(a);
        c.secondLabels = labels.data() + bound(b);
      }
    }
    return c;
  };

  // 1. Each shard's graph (global ids): the merges' starting lists, and the first best k. The
  // buffers are left uninitialised, first touched by the threads that fill them (zero-filling
  // 3 × 400 MB on one thread took 0.5 s of manifold 10M × 96).
  const std::size_t entries = std::size_t(n) * std::size_t(k);
  const std::unique_ptr<std::int32_t[]> own(new std::int32_t[entries]);
  const std::shared_ptr<std::int32_t[]> best(new std::int32_t[entries]);
  const std::shared_ptr<float[]> bestDist(new float[entries]);
  std::mutex reportMutex; // guards `last` and `lastBackend` when several GPUs work
  RunReport last;         // the last shard's or merge's: where the work ran
  Backend lastBackend = Backend::Cpu;
  auto noteReport = [&](const KnnResult& r) {
    const std::lock_guard lock(reportMutex);
    last = r.report;
    lastBackend = r.backend;
  };
  auto buildShard = [&](std::int64_t s, const Context& on, JobControl& shardJob) {
    const KnnResult g = descendPiece(rows(s), k, metric, on, shardJob, partial, {}, nullptr, 0,
                                     nullptr, sharedFor(s, -1));
    noteReport(g);
    const std::int64_t offset = bound(s);
#pragma omp parallel for schedule(static)
    for (std::int64_t e = 0; e < g.ids.rows() * k; ++e) {
      const std::int32_t id = g.ids.data()[e];
      const std::size_t at = std::size_t(offset * k + e);
      own[at] = best[at] = id < 0 ? -1 : id + std::int32_t(offset);
      bestDist[at] = g.distances.data()[e];
    }
  };
  // A merge's starting lists: each row's own shard's graph, ids local to the pair (a, b).
  auto initialFor = [&](std::int64_t a, std::int64_t b) {
    const std::int64_t split = bound(a + 1) - bound(a), m = split + bound(b + 1) - bound(b);
    std::unique_ptr<std::int32_t[]> initial(new std::int32_t[std::size_t(m * k)]); // no zero fill
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < m; ++r) {
      const bool inFirst = r < split;
      const std::int64_t global = inFirst ? bound(a) + r : bound(b) + r - split;
      const std::int64_t local0 = inFirst ? bound(a) : bound(b) - split;
      for (int c = 0; c < k; ++c) {
        const std::int32_t id = own[std::size_t(global * k + c)];
        initial[std::size_t(r * k + c)] = id < 0 ? -1 : std::int32_t(id - local0);
      }
    }
    return initial;
  };
  // A merge's lists folded into the best k of the rows of shards a and b.
  auto foldMerge = [&, best, bestDist](const KnnResult& merged, std::int64_t a, std::int64_t b) {
    const std::int64_t split = bound(a + 1) - bound(a), m = merged.ids.rows();
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t r = 0; r < m; ++r) {
      const std::int64_t global = r < split ? bound(a) + r : bound(b) + r - split;
      foldInto(best.get() + global * k, bestDist.get() + global * k, merged.ids.row(r),
               merged.distances.row(r), bound(a), split, bound(b), k);
    }
  };
  auto mergePair = [&](std::int64_t a, std::int64_t b, const Context& on, JobControl& mergeJob,
                       const std::function<void()>& uploaded) {
    const MatrixView<float> first = rows(a), second = rows(b);
    const std::unique_ptr<std::int32_t[]> initial = initialFor(a, b);
    const MatrixView<std::int32_t> initialView{initial.get(), first.rows + second.rows, k};
    return descendPiece(first, k, metric, on, mergeJob, partial, {}, &initialView, first.rows,
                        &second, sharedFor(a, b), uploaded);
  };

  if (devices.size() > 1) {
    spreadOverDevices(devices, inner, job, shards, steps, buildShard, mergePair, foldMerge,
                      noteReport);
    lap("devices");
  } else {
    for (std::int64_t s = 0; s < shards; ++s) {
      JobControl shardJob =
          stage("shard " + std::to_string(s + 1) + " of " + std::to_string(shards));
      buildShard(s, inner, shardJob);
      lap("shard");
    }

    // 2. Every pair of shards, each row's best k folded in after each merge — on a host thread
    // while the next merge runs on the device (a merge reads only the shards' own graphs), begun
    // once that merge's rows are uploaded: both are bound by the host's memory (folding during
    // the upload made it 3× slower).
    std::future<void> folding;
    auto nextUploaded = std::make_shared<OneShot>();
    const OnExit releaseFold{[&] { nextUploaded->fire(); }}; // before `folding` waits, on a throw
    for (std::int64_t a = 0; a < shards; ++a)
      for (std::int64_t b = a + 1; b < shards; ++b) {
        JobControl mergeJob =
            stage("merge of shards " + std::to_string(a + 1) + " and " + std::to_string(b + 1));
        KnnResult merged =
            mergePair(a, b, inner, mergeJob, [signal = nextUploaded] { signal->fire(); });
        nextUploaded->fire(); // the CPU's merge calls no one
        noteReport(merged);
        lap("merge");
        if (folding.valid())
          folding.get();
        lap("fold wait");
        const bool lastMerge = a == shards - 2;
        nextUploaded = std::make_shared<OneShot>();
        folding = std::async(std::launch::async, [&, merged = std::move(merged), a, b,
                                                  wait = lastMerge ? nullptr : nextUploaded] {
          if (wait)
            wait->fired.wait();
          foldMerge(merged, a, b);
        });
      }
    if (folding.valid())
      folding.get();
    lap("last fold");
  }

  if (progress)
    progress(int(steps), 0.0);
  job.progress(1.0, "NN-Descent: done");
  KnnResult result;
  result.ids = Matrix<std::int32_t>(best.get(), n, k, best);
  result.distances = Matrix<float>(bestDist.get(), n, k, bestDist);
  result.backend = lastBackend;
  result.report = last;
  result.report.setMethod(lastBackend == Backend::Cuda ? KnnMethod::Gnnd : KnnMethod::NnDescent);
  result.report.iterations = 0; // each shard and merge ran its own
  result.report.shards = int(shards);
  result.report.detail = "at most " + std::to_string(shardRows) + " items a shard" +
                         (overBudget ? " (memory budget)" : "");
  if (devices.size() > 1 && lastBackend == Backend::Cuda) {
    result.report.device = describeBackend(context);
    result.report.detail +=
        ", built and merged on " + std::to_string(devices.size()) + " GPUs at once";
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

} // namespace nearscape::knn
