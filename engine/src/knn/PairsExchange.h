#pragma once
// Where the shares of one exact graph split over devices (gpu::KnnDevice::pairsShare) meet: to
// hand each other the rows each uploaded (one slice each from the host, the rest device to
// device), then between their bands their rows' thresholds. A row's threshold on one
// device is the k-th upper estimate of k distinct candidates that device scored, so it bounds
// the row's k nearest over every device: each share may drop by the least of them (pruning by
// its own half of the pairs alone kept about 8% more candidates than one device does). Host
// logic only: the shares copy what they are offered themselves.

#include "nearscape/core/JobControl.h"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace nearscape::knn {

class PairsExchange {
public:
  /// What a share offers in a round: `data` on device `device` (nullptr: nothing); `part`, the
  /// share's, is filled in by meet.
  struct Offer {
    int device = -1;
    const void* data = nullptr;
    int part = -1;
  };

  /// `gated`: a cheaper way of building the graph is being tried beside the shares (STEP's
  /// probe); they go on meanwhile, give up at their next round once it pays (gaveUp), and wait
  /// for its verdict before handing in their result (awaitGo).
  explicit PairsExchange(int parts, bool gated = false);

  /// The verdict: the shares' result is wanted (`go`) or not. Once.
  void open(bool go);
  /// Whether a cheaper way is probed beside the shares (`gated` as made, whatever the verdict
  /// since): the first share, whose device the probe shares, then takes less of the work split
  /// before the first round.
  bool probeBeside() const { return m_probeBeside; }
  /// Whether the verdict came and was no, or a share left without its result: the shares stop
  /// where they are.
  bool gaveUp();
  /// Waits for the verdict (at once where none is awaited): false, give up. Throws Cancelled
  /// when `job` stops first.
  bool awaitGo(const JobControl& job);

  /// Share `part` offers `mine` for this round and waits for every share still in the exchange
  /// to offer; returns the others' offers of this round (none for a share that has left). `mine`
  /// must stay unchanged until doneReading returns. When `job` stops while it waits (a share
  /// that never started, a failure), leaves the exchange and throws Cancelled.
  std::vector<Offer> meet(int part, Offer mine, const JobControl& job);
  /// Share `part` has read this round's offers: waits for the others to have read them too.
  void doneReading(int part);
  /// Share `part` leaves (done, or failed): nobody waits for it any more. `withResult` false:
  /// it has none for the caller, so the others give up too (gaveUp). Not between meet and
  /// doneReading.
  void leave(int part, bool withResult = true);

  /// Seconds share `part` has waited in meet for the others so far: where the shares' work is
  /// uneven (the first GPU also runs STEP's probe), the faster one waits at each round.
  double waitedSeconds(int part);

private:
  /// Waits until every share still in has arrived at this barrier (under `lock`); false when
  /// `job` (may be null) stopped first, `part` then out of the exchange.
  bool await(std::unique_lock<std::mutex>& lock, int part, const JobControl* job);
  void releaseIfAllArrived();

  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<Offer> m_offers;  ///< this round's, per part
  std::vector<bool> m_in;       ///< per part: still exchanging
  std::vector<double> m_waited; ///< per part: seconds waited in meet
  int m_active;                 ///< parts still in
  int m_arrived = 0;            ///< at the current barrier
  std::uint64_t m_generation = 0;
  bool m_abandoned = false; ///< a share left without its result
  bool m_gated;
  const bool m_probeBeside;
  bool m_go = true;
};

} // namespace nearscape::knn
