#pragma once
/// @file Distributed.h
/// kNN graphs built by several processes (the ranks of an MPI job), each owning a slice of the
/// rows. The engine knows no MPI: it talks to the other ranks through `Ranks`, which
/// nearscape-cli implements over MPI (app/cli/MpiRanks.cpp). Failures are agreed on at the end
/// of every phase, so one rank's error ends every rank's call instead of leaving them waiting.

#include "nearscape/core/Error.h"
#include "nearscape/knn/NnDescent.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nearscape {

/// A rank that failed in a phase, as the others learn of it.
struct RankFailure {
  int rank = 0;        ///< 0-based
  std::string message; ///< its error's what()
};

/// The transport between the ranks of one job. Every call but `send`/`receive` is collective:
/// every rank makes it, in the same order. Transport errors end the job (MPI's default).
class Ranks {
public:
  virtual ~Ranks() = default;
  virtual int rank() const = 0; ///< this process, 0-based
  virtual int size() const = 0; ///< ranks in the job
  /// Ranks on this process's host (counting itself), which share its cores.
  virtual int ranksOnThisHost() const { return 1; }
  /// This process's place among the ranks on its host, 0-based (which of the host's GPUs it takes).
  virtual int rankOnThisHost() const { return 0; }
  /// Sends `bytes` to rank `to`; returns when the buffer may be reused.
  virtual void send(int to, std::span<const std::byte> bytes) = 0;
  /// Receives exactly `bytes.size()` bytes from rank `from`.
  virtual void receive(int from, std::span<std::byte> bytes) = 0;
  /// Sends `out` to `to` while receiving `in` from `from` (a ring step without deadlock).
  virtual void exchange(int to, std::span<const std::byte> out, int from,
                        std::span<std::byte> in) = 0;
  /// Collective: each rank passes its error ("" when it succeeded); returns the failure of the
  /// lowest failing rank, the same on every rank, or nothing when all succeeded.
  virtual std::optional<RankFailure> agree(const std::string& error) = 0;
};

/// Another rank failed; this one stops too. Its message names that rank and its error.
class RankFailed : public Error {
public:
  using Error::Error;
};

/// Runs `body` on every rank as phase `what` ("reading the data", …), then agrees on the outcome:
/// when this rank threw, its exception is rethrown (after every rank has learnt of it); when
/// another rank threw, RankFailed is thrown. The test hook NEARSCAPE_FAULT_RANK=R[:PHASE][:kill]
/// makes rank R throw (or kill itself with SIGKILL) on entering the first phase whose name
/// contains PHASE ("reading", "exact", "codebook", "building", "merging"; the first phase when
/// absent).
void runOnRanks(Ranks& ranks, const std::string& what, const std::function<void()>& body);

/// The first row of rank `rank`'s slice of n rows over `size` ranks (rank = size gives n):
/// slices differ by at most one row.
std::int64_t rankSliceBegin(std::int64_t n, int rank, int size);

/// What one rank did.
struct RankShare {
  std::int64_t rows = 0;   ///< rows of its slice
  double seconds = 0;      ///< its own compute time (graph, merges), without waiting for others
  double waitSeconds = 0;  ///< time spent sending, receiving and waiting for the others
  double buildSeconds = 0; ///< NN-Descent: its slice's own graph (part of `seconds`)
  double mergeSeconds = 0; ///< NN-Descent: GGM merges it ran and folds (part of `seconds`)
  int merges = 0;          ///< NN-Descent: GGM merges it ran
};

struct DistributedGraph {
  KnnResult graph;               ///< rank 0: n × k (global ids); other ranks: empty
  std::vector<RankShare> shares; ///< rank 0: one per rank; other ranks: their own only
};

/// The kNN graph of `data` (n × d, identical on every rank, e.g. one memory-mapped file) built
/// by all ranks, each owning rows [rankSliceBegin(r), rankSliceBegin(r + 1)) and touching only
/// those rows of `data` (plus rows whose float32 distances tie, re-read for the tie rule).
/// Exact: the slices travel round a ring; each rank keeps the top k of its rows against each
/// slice in turn, merged by (distance, id) as one process orders them, so the graph equals
/// knnGraph's. NN-Descent: each rank builds its slice's graph; then every pair of slices is
/// merged by GGM (GNND §5, as the engine's sharded NN-Descent) in a round-robin tournament —
/// in each round every rank meets one other, one of the two receives the other's rows and graph
/// and merges (no rank holds more than two slices), and both fold the result into their best k.
/// Needs every slice to hold more than k rows (NN-Descent) or one row (exact). Collective;
/// throws as knnGraph / nnDescentGraph, and RankFailed when another rank failed.
DistributedGraph distributedKnnGraph(const MatrixView<float>& data, int k, Metric metric,
                                     GraphMethod method, const Context& context, Ranks& ranks,
                                     JobControl& job = noJobControl(),
                                     const NnDescentParams& params = {});

struct DistributedSearch {
  KnnResult result;              ///< rank 0: queries × k (base ids); other ranks: empty
  std::vector<RankShare> shares; ///< rank 0: one per rank; other ranks: their own only
};

/// The exact k nearest rows of `base` for each row of `queries` (both identical on every rank),
/// the base split among the ranks: each rank searches every query in its slice of the base, and
/// the lists are merged up a binomial tree by (distance, id) as one process orders them, so the
/// result equals knnSearch's. Each rank holds queries × k results; rank 0 gets the merged ones.
/// Collective; throws as knnSearch, and RankFailed when another rank failed.
DistributedSearch distributedKnnSearch(const MatrixView<float>& queries,
                                       const MatrixView<float>& base, int k, Metric metric,
                                       const Context& context, Ranks& ranks,
                                       JobControl& job = noJobControl());

} // namespace nearscape
