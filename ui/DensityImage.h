#pragma once
// The map's density view: every visible point is counted into the framebuffer pixel it falls
// on; a pixel's colour is the mean of its points' colours (labels mixed by count) and its strength
// follows how many points share it, histogram-equalised (datashader's eq_hist), so that millions
// of overlapping points read as densities instead of one opaque blob. CPU only (OpenMP); no Qt,
// no VTK.

#include <cstdint>
#include <vector>

namespace nearscape::ui {

/// Where map coordinates land on the framebuffer (a parallel camera): its screen axes in world
/// space (unit vectors), the view-plane coordinates (along right and up) of the framebuffer's
/// centre, and how many framebuffer pixels one world unit spans.
struct ScreenMapping {
  double right[3] = {1, 0, 0}, up[3] = {0, 1, 0};
  double centreRight = 0, centreUp = 0;
  double pixelsPerUnit = 1;
  int width = 0, height = 0; ///< framebuffer pixels
};

/// The points to count: `count` × `dim` positions (dim 2 or 3) and `count` × 3 colours (host
/// memory), which of them are shown (`visible`: empty or null for all), and how many points each
/// one stands for (`weight` = n / count when they are a sample of n).
struct DensityPoints {
  const float* positions = nullptr;
  int dim = 2;
  const std::uint8_t* rgb = nullptr;
  std::int64_t count = 0;
  const std::vector<bool>* visible = nullptr;
  double weight = 1;
};

class DensityImage {
public:
  /// The strength's floor: the sparsest covered pixels at this share of their colour.
  static constexpr double kFaintest = 0.3;

  /// Counts `points` into a `mapping.width` × `mapping.height` image, each point spread over a
  /// `footprint` × `footprint` square (the size points are drawn at), and measures crowding().
  void accumulate(const DensityPoints& points, const ScreenMapping& mapping, int footprint);

  /// The mean, over the points on screen, of how many points (counting each sampled one as
  /// `weight`) fall on the same pixel: 1 when no two overlap. Sampling noise is corrected for.
  double crowding() const { return m_crowding; }
  /// How many points fell inside the image (sampled ones counted as `weight`).
  double pointsOnScreen() const { return m_onScreen; }
  int width() const { return m_width; }
  int height() const { return m_height; }

  /// The picture into `rgb`, width × height × 3 bytes, bottom row first (as VTK images are): each
  /// covered pixel is `background` moved toward the mean colour of its points by its strength;
  /// uncovered pixels are `background`. `density` ∈ [0, 1] blends from plain points (0: every
  /// covered pixel at its full mean colour) to density shading (1: strengths from kFaintest for the
  /// sparsest pixels to 1 for the densest, equalised over the covered pixels' counts).
  void shade(const std::uint8_t background[3], double density, std::uint8_t* rgb) const;

private:
  int m_width = 0, m_height = 0;
  /// width × height × 4: the count, then the sums of red, green and blue.
  std::vector<float> m_cells;
  std::vector<float> m_rows;                ///< the box filter's rows pass
  mutable std::vector<std::int16_t> m_bins; ///< shade's bin of each pixel (−1: uncovered)
  double m_crowding = 1, m_onScreen = 0;
};

} // namespace nearscape::ui
