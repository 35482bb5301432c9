#include "knn/PairsExchange.h"

#include "nearscape/core/Error.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace nearscape::knn {

PairsExchange::PairsExchange(int parts, bool gated)
    : m_offers(std::size_t(std::max(parts, 0))), m_in(std::size_t(std::max(parts, 0)), true),
      m_waited(std::size_t(std::max(parts, 0)), 0.0), m_active(parts), m_gated(gated),
      m_probeBeside(gated) {
  NEARSCAPE_EXPECTS(parts >= 1, "an exchange of " + std::to_string(parts) + " shares");
}

void PairsExchange::open(bool go) {
  const std::lock_guard lock(m_mutex);
  m_gated = false;
  m_go = go;
  m_changed.notify_all();
}

bool PairsExchange::gaveUp() {
  const std::lock_guard lock(m_mutex);
  return m_abandoned || (!m_gated && !m_go);
}

bool PairsExchange::awaitGo(const JobControl& job) {
  std::unique_lock lock(m_mutex);
  while (!m_changed.wait_for(lock, std::chrono::milliseconds(20), [&] { return !m_gated; })) {
    if (job.stopRequested()) {
      lock.unlock();
      job.check();
    }
  }
  return m_go;
}

void PairsExchange::releaseIfAllArrived() {
  if (m_arrived > 0 && m_arrived >= m_active) {
    m_arrived = 0;
    ++m_generation;
    m_changed.notify_all();
  }
}

bool PairsExchange::await(std::unique_lock<std::mutex>& lock, int part, const JobControl* job) {
  const std::uint64_t generation = m_generation;
  ++m_arrived;
  releaseIfAllArrived();
  const auto released = [&] { return m_generation != generation; };
  if (!job) {
    m_changed.wait(lock, released);
    return true;
  }
  while (!m_changed.wait_for(lock, std::chrono::milliseconds(20), released))
    if (job->stopRequested()) {
      // Not released, so nobody has read this round's offers: this one's may go.
      --m_arrived;
      m_in[std::size_t(part)] = false;
      m_offers[std::size_t(part)] = {};
      --m_active;
      releaseIfAllArrived();
      return false;
    }
  return true;
}

std::vector<PairsExchange::Offer> PairsExchange::meet(int part, Offer mine, const JobControl& job) {
  std::unique_lock lock(m_mutex);
  NEARSCAPE_EXPECTS(part >= 0 && std::size_t(part) < m_in.size() && m_in[std::size_t(part)],
                    "share " + std::to_string(part) + " is not in the exchange");
  std::vector<Offer> others;
  others.reserve(m_offers.size()); // nothing throws once the round is released
  mine.part = part;
  m_offers[std::size_t(part)] = mine;
  const auto arrived = std::chrono::steady_clock::now();
  const bool released = await(lock, part, &job);
  m_waited[std::size_t(part)] +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - arrived).count();
  if (!released) {
    lock.unlock();
    job.check();
    throw Cancelled(); // stopped, then un-stopped: gone from the exchange all the same
  }
  for (std::size_t p = 0; p < m_offers.size(); ++p)
    if (int(p) != part && m_in[p] && m_offers[p].data)
      others.push_back(m_offers[p]);
  return others;
}

void PairsExchange::doneReading(int part) {
  std::unique_lock lock(m_mutex);
  await(lock, part, nullptr); // the others met this round and are reading: they come
  // Read by everyone: nobody reads this round's offers again.
  m_offers[std::size_t(part)] = {};
}

double PairsExchange::waitedSeconds(int part) {
  const std::lock_guard lock(m_mutex);
  return part >= 0 && std::size_t(part) < m_waited.size() ? m_waited[std::size_t(part)] : 0.0;
}

void PairsExchange::leave(int part, bool withResult) {
  const std::lock_guard lock(m_mutex);
  if (!withResult)
    m_abandoned = true;
  if (part < 0 || std::size_t(part) >= m_in.size() || !m_in[std::size_t(part)])
    return;
  m_in[std::size_t(part)] = false;
  m_offers[std::size_t(part)] = {};
  --m_active;
  releaseIfAllArrived(); // the others may be waiting for this one alone
}

} // namespace nearscape::knn
