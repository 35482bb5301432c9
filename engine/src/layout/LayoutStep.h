#pragma once
// One node's move in one layout epoch, shared by the CPU loop and the CUDA kernel so that both
// backends run the same arithmetic on the same random stream (internal).

#include "util/Hash.h"

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define NEARSCAPE_HOST_DEVICE __host__ __device__
#else
#define NEARSCAPE_HOST_DEVICE
#endif

namespace nearscape::layout {

/// Everything an epoch reads and writes. Node i reads `current`, writes its own row of `next` and
/// its own edges' `nextSample`: nodes are independent within an epoch.
struct EpochStep {
  const float* current = nullptr;
  float* next = nullptr;
  std::int64_t nodes = 0;
  int dim = 2;
  const std::int64_t* offsets = nullptr; ///< CSR of the fuzzy graph
  const std::int32_t* targets = nullptr;
  const float* perSample = nullptr; ///< epochs between samples of each edge (inf: never)
  float* nextSample = nullptr;      ///< the epoch each edge is sampled next
  float a = 0, b = 0;               ///< the curve 1 / (1 + a·d^2b)
  float alpha = 0;                  ///< this epoch's learning rate
  int negativeSamples = 5;
  int epoch = 0;
  std::uint64_t seed = 0;
};

NEARSCAPE_HOST_DEVICE inline float clipGradient(float v) {
  return v < -4.0f ? -4.0f : (v > 4.0f ? 4.0f : v);
}

/// A node in [0, nodes) from 64 random bits, by the high half's product (Lemire) rather than a
/// 64-bit division; nodes < 2^32.
NEARSCAPE_HOST_DEVICE inline std::int64_t pickNode(std::uint64_t bits, std::int64_t nodes) {
  return std::int64_t(((bits >> 32) * std::uint64_t(nodes)) >> 32);
}

/// The seed of node i's negative samples this epoch (each sample: mixBits(stream + its count)),
/// shared by moveNode and its CPU twin (LayoutEpochCpu) so that both draw the same nodes.
NEARSCAPE_HOST_DEVICE inline std::uint64_t sampleStream(const EpochStep& s, std::int64_t i) {
  return mixBits(s.seed ^ mixBits(std::uint64_t(s.epoch) * 0x100000001b3ull ^ std::uint64_t(i)));
}

/// Adds to `move` the attraction of the node at `yi` toward `yj` along a sampled edge.
template <int Dim>
NEARSCAPE_HOST_DEVICE inline void attract(const EpochStep& s, const float* yi, const float* yj,
                                          float* move) {
  float d2 = 0;
  for (int c = 0; c < Dim; ++c)
    d2 += (yi[c] - yj[c]) * (yi[c] - yj[c]);
  if (d2 > 0) {
    // d^(2b − 2) = d^2b / d²: one powf where there were two, one division.
    const float p = powf(d2, s.b);
    const float coef = -2.0f * s.a * s.b * p / (d2 * (1.0f + s.a * p));
    for (int c = 0; c < Dim; ++c)
      move[c] += s.alpha * clipGradient(coef * (yi[c] - yj[c]));
  }
}

/// moveNode in `Dim` dimensions: the coordinates and the move stay in registers (with the
/// dimension a run-time value the move went through memory at every sample).
template <int Dim>
NEARSCAPE_HOST_DEVICE inline void moveNodeIn(const EpochStep& s, std::int64_t i) {
  float yi[Dim], move[Dim];
  for (int c = 0; c < Dim; ++c) {
    yi[c] = s.current[i * Dim + c];
    move[c] = 0;
  }
  const std::uint64_t stream = sampleStream(s, i);
  std::uint64_t drawn = 0;
  for (std::int64_t e = s.offsets[i]; e < s.offsets[i + 1]; ++e) {
    if (s.nextSample[e] > float(s.epoch + 1))
      continue;
    s.nextSample[e] += s.perSample[e];
    attract<Dim>(s, yi, s.current + std::int64_t(s.targets[e]) * Dim, move);
    for (int k = 0; k < s.negativeSamples; ++k) {
      const std::int64_t other = pickNode(mixBits(stream + ++drawn), s.nodes);
      if (other == i)
        continue;
      const float* yo = s.current + other * Dim;
      float o2 = 0;
      for (int c = 0; c < Dim; ++c)
        o2 += (yi[c] - yo[c]) * (yi[c] - yo[c]);
      const float coef =
          o2 > 0 ? 2.0f * s.b / ((0.001f + o2) * (1.0f + s.a * powf(o2, s.b))) : 0.0f;
      for (int c = 0; c < Dim; ++c)
        move[c] += s.alpha * (coef > 0 ? clipGradient(coef * (yi[c] - yo[c])) : 4.0f);
    }
  }
  for (int c = 0; c < Dim; ++c)
    s.next[i * Dim + c] = yi[c] + move[c];
}

/// Moves node i by its sampled edges (attraction) and, per edge, negative samples (repulsion).
/// Each negative sample's node comes from its own counter (the node's stream, then a count), not
/// from the previous sample's draw: the samples are independent work, not a chain of hashes.
NEARSCAPE_HOST_DEVICE inline void moveNode(const EpochStep& s, std::int64_t i) {
  if (s.dim == 2)
    moveNodeIn<2>(s, i);
  else
    moveNodeIn<3>(s, i);
}

} // namespace nearscape::layout
