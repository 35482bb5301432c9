// kNN graphs built by the ranks of a distributed job (knn/Distributed.h).
#include "nearscape/knn/Distributed.h"

#include "knn/DescendPiece.h"
#include "knn/KnnDevice.h"
#include "knn/NnDescentCpu.h"
#include "knn/ShardedGraph.h"
#include "nearscape/gpu/Devices.h"

#include "nearscape/core/Error.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>

namespace nearscape {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

template <typename T> std::span<const std::byte> bytesOf(const T* data, std::size_t count) {
  return {reinterpret_cast<const std::byte*>(data), count * sizeof(T)};
}
template <typename T> std::span<std::byte> bytesOf(T* data, std::size_t count) {
  return {reinterpret_cast<std::byte*>(data), count * sizeof(T)};
}

/// runOnRanks with its body's time added to share.seconds (and to `part`, when given) and the
/// wait for the other ranks' outcome to share.waitSeconds.
void timedPhase(Ranks& ranks, const std::string& what, RankShare& share, double* part,
                const std::function<void()>& body);

/// NEARSCAPE_FAULT_RANK=R[:PHASE][:kill], for tests: rank R fails on entering PHASE.
void injectFault(int rank, const std::string& what) {
  const char* text = std::getenv("NEARSCAPE_FAULT_RANK");
  if (!text || !*text)
    return;
  std::string spec(text), phase;
  bool kill = false;
  const auto colon = spec.find(':');
  const int faulty = std::atoi(spec.substr(0, colon).c_str());
  if (colon != std::string::npos) {
    phase = spec.substr(colon + 1);
    if (phase == "kill" || (phase.size() > 5 && phase.ends_with(":kill"))) {
      kill = true;
      phase = phase == "kill" ? "" : phase.substr(0, phase.size() - 5);
    }
  }
  if (rank != faulty || what.find(phase) == std::string::npos)
    return;
  if (kill)
    std::raise(SIGKILL);
  throw Error("fault injected by NEARSCAPE_FAULT_RANK while " + what);
}

/// One row's best k (global ids, −1 padding last), kept in the order one process gives:
/// ascending float64 distance, then id.
class RowMerger {
public:
  RowMerger(const MatrixView<float>& queries, const MatrixView<float>& base, Metric metric, int k)
      : m_queries(queries), m_base(base), m_metric(metric), m_k(k), m_ids(std::size_t(k)),
        m_dists(std::size_t(k)) {}

  /// Merges `ids`/`dists` (k entries, sorted as above) into `bestIds`/`bestDists` (k entries,
  /// sorted) for the query row `row` of `queries` (ids are rows of `base`). Equal float32 distances
  /// are ordered by their float64 distances, recomputed, so that the order matches one process's
  /// (finishRow's).
  void merge(std::int64_t row, std::int32_t* bestIds, float* bestDists, const std::int32_t* ids,
             const float* dists) {
    int a = 0, b = 0, out = 0;
    while (out < m_k) {
      const bool aLeft = a < m_k && bestIds[a] >= 0, bLeft = b < m_k && ids[b] >= 0;
      if (!aLeft && !bLeft)
        break;
      bool takeA = !bLeft;
      if (aLeft && bLeft) {
        if (bestIds[a] == ids[b]) { // the same neighbour from both lists
          ++b;
          continue;
        }
        takeA = before(row, bestIds[a], bestDists[a], ids[b], dists[b]);
      }
      const std::int32_t id = takeA ? bestIds[a] : ids[b];
      const float dist = takeA ? bestDists[a] : dists[b];
      (takeA ? a : b)++;
      if (seen(id, out))
        continue;
      m_ids[std::size_t(out)] = id;
      m_dists[std::size_t(out)] = dist;
      ++out;
    }
    std::copy_n(m_ids.begin(), out, bestIds);
    std::copy_n(m_dists.begin(), out, bestDists);
    std::fill(bestIds + out, bestIds + m_k, -1);
    std::fill(bestDists + out, bestDists + m_k, std::numeric_limits<float>::infinity());
  }

private:
  bool before(std::int64_t row, std::int32_t idA, float distA, std::int32_t idB, float distB) {
    if (distA != distB)
      return distA < distB;
    const float* query = m_queries.row(row);
    const double exactA = exactDistance(query, m_base.row(idA), m_base.cols, m_metric);
    const double exactB = exactDistance(query, m_base.row(idB), m_base.cols, m_metric);
    return exactA != exactB ? exactA < exactB : idA < idB;
  }
  bool seen(std::int32_t id, int count) const {
    for (int c = count; c-- > 0;)
      if (m_ids[std::size_t(c)] == id)
        return true;
    return false;
  }

  MatrixView<float> m_queries, m_base;
  Metric m_metric;
  int m_k;
  std::vector<std::int32_t> m_ids;
  std::vector<float> m_dists;
};

/// One rank's rows and their best k so far (global ids).
struct Slice {
  std::int64_t begin = 0, rows = 0;
  std::vector<std::int32_t> ids;
  std::vector<float> dists;
  RunReport report; ///< how its last piece of work ran
  Backend backend = Backend::Cpu;

  Slice(std::int64_t b, std::int64_t r, int k)
      : begin(b), rows(r), ids(std::size_t(r * k), -1),
        dists(std::size_t(r * k), std::numeric_limits<float>::infinity()) {}
};

/// Folds `found` (rows × kc, ids relative to `offset`) into `slice`'s best k.
void foldResult(Slice& slice, const KnnResult& found, std::int64_t offset,
                const MatrixView<float>& data, Metric metric, int k, int threads) {
  slice.report = found.report;
  slice.backend = found.backend;
  const std::int64_t kc = found.ids.cols();
#pragma omp parallel num_threads(threads)
  {
    RowMerger merger(data, data, metric, k);
    std::vector<std::int32_t> ids(static_cast<std::size_t>(k));
    std::vector<float> dists(static_cast<std::size_t>(k));
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < slice.rows; ++r) {
      for (int c = 0; c < k; ++c) {
        const std::int32_t id = c < kc ? found.ids.row(r)[c] : -1;
        ids[std::size_t(c)] = id < 0 ? -1 : std::int32_t(id + offset);
        dists[std::size_t(c)] =
            id < 0 ? std::numeric_limits<float>::infinity() : found.distances.row(r)[c];
      }
      merger.merge(slice.begin + r, slice.ids.data() + r * k, slice.dists.data() + r * k,
                   ids.data(), dists.data());
    }
  }
}

/// Exact: slice s travels round the ring (rank r holds slice (r + step) mod N at each step); each
/// rank folds the top k of its rows against every slice into its best k.
void exactRing(const MatrixView<float>& data, int k, Metric metric, const Context& context,
               Ranks& ranks, JobControl& job, Slice& mine, RankShare& share) {
  const int size = ranks.size(), rank = ranks.rank();
  const std::int64_t n = data.rows, d = data.cols;
  const MatrixView<float> queries{data.row(mine.begin), mine.rows, d};
  std::vector<float> held, incoming;
  MatrixView<float> chunk = queries; // step 0: its own slice, straight from `data`
  int holding = rank;
  for (int step = 0; step < size; ++step) {
    timedPhase(ranks, "exact search", share, nullptr, [&] {
      JobControl part = job.sub(double(step) / size, double(step + 1) / size);
      const std::int64_t offset = rankSliceBegin(n, holding, size);
      if (holding == rank) {
        if (mine.rows > 1)
          foldResult(mine,
                     knnGraph(queries, int(std::min<std::int64_t>(k, mine.rows - 1)), metric,
                              context, part),
                     offset, data, metric, k, effectiveThreads(context));
      } else {
        foldResult(mine,
                   knnSearch(queries, chunk, int(std::min<std::int64_t>(k, chunk.rows)), metric,
                             context, part),
                   offset, data, metric, k, effectiveThreads(context));
      }
    });
    if (step + 1 == size)
      break;
    // Pass the slice held on to the previous rank; take the next rank's.
    const auto t = Clock::now();
    const int next = (holding + 1) % size;
    const std::int64_t nextRows = rankSliceBegin(n, next + 1, size) - rankSliceBegin(n, next, size);
    incoming.resize(std::size_t(nextRows * d));
    ranks.exchange((rank + size - 1) % size, bytesOf(chunk.data, chunk.size()), (rank + 1) % size,
                   bytesOf(incoming.data(), incoming.size()));
    held.swap(incoming);
    chunk = {held.data(), nextRows, d};
    holding = next;
    share.waitSeconds += since(t);
  }
}

/// The rank that `rank` meets in round `round` of a round-robin tournament (the circle method:
/// one position fixed, the others turning), or −1 for a bye when the count is odd.
int partnerOf(int rank, int round, int size) {
  const int players = size + size % 2, turning = players - 1;
  auto at = [&](int position) { // who stands at position 0 … players − 1 in this round
    return position == turning ? turning : (position + round) % turning;
  };
  for (int i = 0; i < players / 2; ++i) {
    const int a = at(i), b = at(players - 1 - i);
    const int partner = a == rank ? b : b == rank ? a : -2;
    if (partner != -2)
      return partner < size ? partner : -1;
  }
  return -1;
}

/// One k-means codebook on the GPU for every slice and merge.
struct Codebook {
  std::vector<float> centroids;
  int count = 0; ///< 0: none (each slice and merge clusters on its own)
};

/// The slices' and merges' codebook, as one process's shards share one (knn/ShardedGraph.h): rank
/// 0's, sent to the others, so that a merge reads both slices' clusters rather than clustering
/// the pair itself (manifold 10M × 96 on 2 ranks: recall 0.986 with a merge's own clusters,
/// 0.990 for one process's shards; docs/benchmarks.md, session 26). None on the CPU, where a
/// slice is itself built in shards (the memory budget: those cluster on their own), or where a
/// slice is below GNND's head start (4,096 rows: its rows would get no clusters). Made in its
/// own phase, so that a failure there ends every rank at the agreement; sent after it, outside
/// any phase's body, as the tournament's exchanges are.
Codebook shareCodebook(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                       Ranks& ranks, const NnDescentParams& params, RankShare& share) {
  const int size = ranks.size();
  const std::int64_t n = data.rows, d = data.cols;
  const std::int64_t largest = rankSliceBegin(n, 1, size), smallest = n / size;
  Codebook book;
  timedPhase(ranks, "making the codebook", share, nullptr, [&] {
    if (ranks.rank() == 0 && resolveBackend(context) == Backend::Cuda && smallest >= 4096 &&
        !knn::buildsInShards(largest, d, k, context, params.listSize))
      book.centroids = knn::sharedCodebook(data, largest, metric, context, book.count);
  });
  const auto t = Clock::now();
  if (ranks.rank() == 0) {
    for (int other = 1; other < size; ++other) {
      ranks.send(other, bytesOf(&book.count, 1));
      if (book.count > 0)
        ranks.send(other, bytesOf(book.centroids.data(), book.centroids.size()));
    }
  } else {
    ranks.receive(0, bytesOf(&book.count, 1));
    book.centroids.resize(std::size_t(book.count) * std::size_t(d));
    if (book.count > 0)
      ranks.receive(0, bytesOf(book.centroids.data(), book.centroids.size()));
  }
  share.waitSeconds += since(t);
  return book;
}

/// NN-Descent: each rank's slice graph, then GGM merges of every pair of slices (GNND §5.1), a
/// round of the tournament at a time; the host of a pair alternates so that each rank runs
/// about half of its merges.
void nnDescentTournament(const MatrixView<float>& data, int k, Metric metric,
                         const Context& context, Ranks& ranks, JobControl& job,
                         const NnDescentParams& params, Slice& mine, RankShare& share) {
  const int size = ranks.size(), rank = ranks.rank();
  const std::int64_t n = data.rows, d = data.cols;
  const MatrixView<float> rows{data.row(mine.begin), mine.rows, d};
  const int rounds = size - 1 + size % 2;
  NnDescentParams partial = params;
  partial.exactFinish = true; // folded lists compare exact distances
  // A row of two slices meets one merge only: it runs until its updates fall below delta, as a
  // build does. The merges' bound was set on four shards, three merges a row; with two ranks it
  // left manifold 10M × 96 at recall 0.987 against one process's 0.992 (docs/benchmarks.md,
  // session 26).
  if (size == 2)
    partial.mergeIterations = std::max(partial.mergeIterations, partial.maxIterations);
  const int threads = effectiveThreads(context);
  auto part = [&](int step) {
    return job.sub(double(step) / (rounds + 1), double(step + 1) / (rounds + 1));
  };

  const Codebook shared = shareCodebook(data, k, metric, context, ranks, params, share);
  std::vector<std::int32_t> labels; // the slice's rows' clusters
  const int count = shared.count;
  const gpu::GnndClusters book{&shared.centroids, count};

  KnnResult own; // the slice's own graph (slice-local ids): every merge starts from it
  timedPhase(ranks, "building the slice's graph", share, &share.buildSeconds, [&] {
    JobControl sub = part(0);
    if (count > 0) {
      knn::validateGraphInput(rows, k); // as nnDescentGraph does
      labels.resize(std::size_t(mine.rows));
      gpu::GnndClusters mineOut = book;
      mineOut.labelsOut = labels.data();
      own = knn::descendPiece(rows, k, metric, context, sub, partial, {}, nullptr, 0, nullptr,
                              mineOut);
    } else {
      own = nnDescentGraph(rows, k, metric, context, sub, partial);
    }
    foldResult(mine, own, mine.begin, data, metric, k, threads);
  });

  for (int round = 0; round < rounds; ++round) {
    const int partner = partnerOf(rank, round, size);
    const int low = std::min(rank, partner), high = std::max(rank, partner);
    const bool host = partner >= 0 && ((low + high) % 2 == 1 ? low == rank : high == rank);
    const std::int64_t theirBegin = partner < 0 ? 0 : rankSliceBegin(n, partner, size);
    const std::int64_t theirRows =
        partner < 0 ? 0 : rankSliceBegin(n, partner + 1, size) - theirBegin;
    // The guest sends its rows and its own graph; the host holds the two slices.
    auto t = Clock::now();
    std::vector<float> theirVectors;
    std::vector<std::int32_t> theirGraph, theirLabels;
    if (partner >= 0 && host) {
      theirVectors.resize(std::size_t(theirRows * d));
      theirGraph.resize(std::size_t(theirRows * k));
      ranks.receive(partner, bytesOf(theirVectors.data(), theirVectors.size()));
      ranks.receive(partner, bytesOf(theirGraph.data(), theirGraph.size()));
      if (count > 0) {
        theirLabels.resize(std::size_t(theirRows));
        ranks.receive(partner, bytesOf(theirLabels.data(), theirLabels.size()));
      }
    } else if (partner >= 0) {
      ranks.send(partner, bytesOf(rows.data, rows.size()));
      ranks.send(partner, bytesOf(own.ids.data(), std::size_t(mine.rows * k)));
      if (count > 0)
        ranks.send(partner, bytesOf(labels.data(), labels.size()));
    }
    share.waitSeconds += since(t);

    std::vector<std::int32_t> backIds; // the guest's rows of the merged graph (global ids)
    std::vector<float> backDists;
    timedPhase(ranks, "merging slices", share, &share.mergeSeconds, [&] {
      if (!host)
        return;
      // [low's rows; high's rows], each graph with ids local to its own slice (GGM's input).
      const bool first = rank == low;
      const std::int64_t split = first ? mine.rows : theirRows, m = mine.rows + theirRows;
      const float* lowRows = first ? rows.data : theirVectors.data();
      const float* highRows = first ? theirVectors.data() : rows.data;
      const MatrixView<std::int32_t> ownView = own.ids.view(),
                                     theirView{theirGraph.data(), theirRows, k};
      JobControl sub = part(round + 1);
      KnnResult merged;
      if (count > 0) { // both slices' clusters of the one codebook
        const MatrixView<std::int32_t>& lowGraph = first ? ownView : theirView;
        const MatrixView<std::int32_t>& highGraph = first ? theirView : ownView;
        const knn::PairLists lists = knn::pairStartingLists(lowGraph, highGraph, threads);
        const MatrixView<std::int32_t> initialView = lists.view();
        const MatrixView<float> low{lowRows, split, d}, high{highRows, m - split, d};
        gpu::GnndClusters pair = book;
        pair.labels = first ? labels.data() : theirLabels.data();
        pair.secondLabels = first ? theirLabels.data() : labels.data();
        merged = knn::descendPiece(low, k, metric, context, sub, partial, {}, &initialView, split,
                                   &high, pair);
      } else {
        std::vector<float> both(std::size_t(m * d));
        std::copy_n(lowRows, std::size_t(split * d), both.begin());
        std::copy_n(highRows, std::size_t((m - split) * d), both.begin() + split * d);
        merged = mergeKnnGraphs({both.data(), m, d}, split, first ? ownView : theirView,
                                first ? theirView : ownView, k, metric, context, sub, partial);
      }
      const std::int64_t lowBegin = rankSliceBegin(n, low, size);
      const std::int64_t highBegin = rankSliceBegin(n, high, size);
      // Global ids for both halves; this rank's half folded here, the other's sent back.
      std::vector<std::int32_t> mineIds(std::size_t(mine.rows * k));
      std::vector<float> mineDists(std::size_t(mine.rows * k));
      backIds.resize(std::size_t(theirRows * k));
      backDists.resize(std::size_t(theirRows * k));
      for (std::int64_t r = 0; r < m; ++r) {
        const bool inLow = r < split;
        const std::int64_t at = (inLow ? r : r - split) * k;
        std::int32_t* ids = (inLow == first ? mineIds.data() : backIds.data()) + at;
        float* dists = (inLow == first ? mineDists.data() : backDists.data()) + at;
        for (int c = 0; c < k; ++c) {
          const std::int32_t id = merged.ids.row(r)[c];
          ids[c] = id < 0 ? -1 : std::int32_t(id < split ? lowBegin + id : highBegin + id - split);
          dists[c] = merged.distances.row(r)[c];
        }
      }
      KnnResult minePart;
      minePart.ids = Matrix<std::int32_t>(std::move(mineIds), mine.rows, k);
      minePart.distances = Matrix<float>(std::move(mineDists), mine.rows, k);
      minePart.report = merged.report;
      minePart.backend = merged.backend;
      foldResult(mine, minePart, 0, data, metric, k, threads);
      ++share.merges;
    });

    t = Clock::now();
    if (partner >= 0 && host) {
      ranks.send(partner, bytesOf(backIds.data(), backIds.size()));
      ranks.send(partner, bytesOf(backDists.data(), backDists.size()));
    } else if (partner >= 0) {
      KnnResult back;
      std::vector<std::int32_t> ids(std::size_t(mine.rows * k));
      std::vector<float> dists(std::size_t(mine.rows * k));
      ranks.receive(partner, bytesOf(ids.data(), ids.size()));
      ranks.receive(partner, bytesOf(dists.data(), dists.size()));
      share.waitSeconds += since(t);
      t = Clock::now();
      back.ids = Matrix<std::int32_t>(std::move(ids), mine.rows, k);
      back.distances = Matrix<float>(std::move(dists), mine.rows, k);
      back.report = mine.report;
      back.backend = mine.backend;
      foldResult(mine, back, 0, data, metric, k, threads);
      share.seconds += since(t);
      share.mergeSeconds += since(t);
      continue;
    }
    share.waitSeconds += since(t);
  }
}

/// Rank 0 collects every slice's rows and every rank's share.
DistributedGraph gather(Ranks& ranks, Slice& mine, const RankShare& share, std::int64_t n, int k) {
  DistributedGraph out;
  const int size = ranks.size(), rank = ranks.rank();
  if (rank != 0) {
    ranks.send(0, bytesOf(mine.ids.data(), mine.ids.size()));
    ranks.send(0, bytesOf(mine.dists.data(), mine.dists.size()));
    ranks.send(0, bytesOf(&share, 1));
    out.shares = {share};
    return out;
  }
  std::vector<std::int32_t> ids(std::size_t(n * k));
  std::vector<float> dists(std::size_t(n * k));
  std::copy(mine.ids.begin(), mine.ids.end(), ids.begin());
  std::copy(mine.dists.begin(), mine.dists.end(), dists.begin());
  out.shares.push_back(share);
  for (int r = 1; r < size; ++r) {
    const std::int64_t begin = rankSliceBegin(n, r, size), end = rankSliceBegin(n, r + 1, size);
    const std::size_t count = std::size_t((end - begin) * k);
    ranks.receive(r, bytesOf(ids.data() + begin * k, count));
    ranks.receive(r, bytesOf(dists.data() + begin * k, count));
    RankShare theirs;
    ranks.receive(r, bytesOf(&theirs, 1));
    out.shares.push_back(theirs);
  }
  out.graph.ids = Matrix<std::int32_t>(std::move(ids), n, k);
  out.graph.distances = Matrix<float>(std::move(dists), n, k);
  return out;
}

} // namespace

DistributedSearch distributedKnnSearch(const MatrixView<float>& queries,
                                       const MatrixView<float>& base, int k, Metric metric,
                                       const Context& context, Ranks& ranks, JobControl& job) {
  const auto started = Clock::now();
  const int size = ranks.size(), rank = ranks.rank();
  const std::int64_t nq = queries.rows, n = base.rows;
  runOnRanks(ranks, "checking the slices", [&] {
    NEARSCAPE_EXPECTS(k >= 1 && k <= n,
                      "k must lie in [1, base rows] (" + std::to_string(n) + " base rows)");
    NEARSCAPE_EXPECTS(queries.cols == base.cols, "the queries' dimension must be the data's");
    if (n / size < 1)
      throw InvalidArgument(std::to_string(size) + " ranks for " + std::to_string(n) +
                            " base rows leave a rank without rows");
  });
  const std::int64_t begin = rankSliceBegin(n, rank, size), end = rankSliceBegin(n, rank + 1, size);
  RankShare share;
  share.rows = end - begin;
  // Every query against this rank's slice of the base.
  Slice found(0, nq, k);
  timedPhase(ranks, "exact search", share, nullptr, [&] {
    const KnnResult part =
        knnSearch(queries, {base.row(begin), end - begin, base.cols},
                  int(std::min<std::int64_t>(k, end - begin)), metric, context, job);
    found.report = part.report;
    found.backend = part.backend;
    const std::int64_t kc = part.ids.cols();
#pragma omp parallel for schedule(static) num_threads(effectiveThreads(context))
    for (std::int64_t q = 0; q < nq; ++q)
      for (std::int64_t c = 0; c < kc; ++c) {
        const std::int32_t id = part.ids.row(q)[c];
        found.ids[std::size_t(q * k + c)] = id < 0 ? -1 : std::int32_t(id + begin);
        found.dists[std::size_t(q * k + c)] =
            id < 0 ? std::numeric_limits<float>::infinity() : part.distances.row(q)[c];
      }
  });
  // The top k merged up a binomial tree: in step s, rank r + 2^s sends its lists to rank r.
  std::vector<std::int32_t> ids(found.ids.size());
  std::vector<float> dists(found.dists.size());
  for (int step = 1; step < size; step *= 2) {
    if (rank % (2 * step) == step) {
      const auto t = Clock::now();
      ranks.send(rank - step, bytesOf(found.ids.data(), found.ids.size()));
      ranks.send(rank - step, bytesOf(found.dists.data(), found.dists.size()));
      share.waitSeconds += since(t);
      break;
    }
    if (rank % (2 * step) != 0 || rank + step >= size)
      continue;
    auto t = Clock::now();
    ranks.receive(rank + step, bytesOf(ids.data(), ids.size()));
    ranks.receive(rank + step, bytesOf(dists.data(), dists.size()));
    share.waitSeconds += since(t);
    t = Clock::now();
#pragma omp parallel num_threads(effectiveThreads(context))
    {
      RowMerger merger(queries, base, metric, k);
#pragma omp for schedule(static)
      for (std::int64_t q = 0; q < nq; ++q)
        merger.merge(q, found.ids.data() + q * k, found.dists.data() + q * k, ids.data() + q * k,
                     dists.data() + q * k);
    }
    share.seconds += since(t);
  }
  DistributedSearch out;
  if (rank != 0) {
    ranks.send(0, bytesOf(&share, 1));
    out.shares = {share};
    return out;
  }
  out.shares.push_back(share);
  for (int r = 1; r < size; ++r) {
    RankShare theirs;
    ranks.receive(r, bytesOf(&theirs, 1));
    out.shares.push_back(theirs);
  }
  out.result.ids = Matrix<std::int32_t>(std::move(found.ids), nq, k);
  out.result.distances = Matrix<float>(std::move(found.dists), nq, k);
  out.result.backend = found.backend;
  out.result.report = found.report;
  out.result.report.detail = std::to_string(size) + " ranks, each a slice of the base";
  out.result.seconds = since(started);
  return out;
}

namespace {

void timedPhase(Ranks& ranks, const std::string& what, RankShare& share, double* part,
                const std::function<void()>& body) {
  const auto started = Clock::now();
  double inside = 0;
  runOnRanks(ranks, what, [&] {
    const auto t = Clock::now();
    try {
      body();
    } catch (...) {
      inside = since(t);
      throw;
    }
    inside = since(t);
  });
  share.seconds += inside;
  if (part)
    *part += inside;
  share.waitSeconds += since(started) - inside;
}

} // namespace

void runOnRanks(Ranks& ranks, const std::string& what, const std::function<void()>& body) {
  std::exception_ptr error;
  std::string message;
  try {
    injectFault(ranks.rank(), what);
    body();
  } catch (const std::exception& e) {
    error = std::current_exception();
    message = e.what();
  } catch (...) {
    error = std::current_exception();
    message = "unknown error";
  }
  const std::optional<RankFailure> failure = ranks.agree(error ? message : std::string());
  if (error)
    std::rethrow_exception(error);
  if (failure)
    throw RankFailed("rank " + std::to_string(failure->rank) + " of " +
                     std::to_string(ranks.size()) + " failed while " + what + ": " +
                     failure->message);
}

std::int64_t rankSliceBegin(std::int64_t n, int rank, int size) {
  return n / size * rank + std::min<std::int64_t>(rank, n % size);
}

DistributedGraph distributedKnnGraph(const MatrixView<float>& data, int k, Metric metric,
                                     GraphMethod method, const Context& context, Ranks& ranks,
                                     JobControl& job, const NnDescentParams& params) {
  const auto started = Clock::now();
  const int size = ranks.size(), rank = ranks.rank();
  const std::int64_t n = data.rows;
  const GraphMethod resolved =
      resolveGraphMethod(method, n, data.cols, k, context) == GraphMethod::Exact
          ? GraphMethod::Exact
          : GraphMethod::NnDescent;
  runOnRanks(ranks, "checking the slices", [&] {
    NEARSCAPE_EXPECTS(k >= 1 && k < n, "k must lie in [1, n − 1] (n = " + std::to_string(n) + ")");
    const std::int64_t smallest = n / size; // the last slices hold the fewest rows
    if (resolved == GraphMethod::NnDescent && smallest <= k)
      throw InvalidArgument(std::to_string(size) + " ranks leave " + std::to_string(smallest) +
                            " rows to a rank; NN-Descent needs more than k = " + std::to_string(k) +
                            " rows a rank");
    if (smallest < 1)
      throw InvalidArgument(std::to_string(size) + " ranks for " + std::to_string(n) +
                            " rows leave a rank without rows");
  });
  Slice mine(rankSliceBegin(n, rank, size),
             rankSliceBegin(n, rank + 1, size) - rankSliceBegin(n, rank, size), k);
  RankShare share;
  share.rows = mine.rows;
  if (resolved == GraphMethod::Exact)
    exactRing(data, k, metric, context, ranks, job, mine, share);
  else
    nnDescentTournament(data, k, metric, context, ranks, job, params, mine, share);
  DistributedGraph out = gather(ranks, mine, share, n, k);
  if (rank == 0) {
    out.graph.backend = mine.backend;
    out.graph.report = mine.report;
    out.graph.report.iterations = 0; // each slice and merge ran its own
    out.graph.report.shards = resolved == GraphMethod::Exact || size == 1 ? 0 : size;
    out.graph.report.detail =
        std::to_string(size) + " ranks" +
        (resolved == GraphMethod::Exact ? ", slices passed round a ring" : "");
    out.graph.seconds = since(started);
  }
  return out;
}

} // namespace nearscape
