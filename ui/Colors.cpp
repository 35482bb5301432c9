#include "Colors.h"

#include <cmath>

namespace nearscape::ui {

QColor labelColor(int index) {
  static const QRgb kPalette[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
                                  0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf, 0x393b79, 0xad494a,
                                  0x637939, 0xce6dbd, 0x8ca252, 0x6b6ecf, 0xe7ba52, 0x843c39};
  constexpr int kCount = int(sizeof(kPalette) / sizeof(kPalette[0]));
  if (index >= 0 && index < kCount)
    return QColor::fromRgb(kPalette[index]);
  // Beyond the palette: golden-angle hues, each lap of three at another saturation and value so
  // that neighbouring hues of different laps still differ (50 clusters, none folded away).
  const double hue = std::fmod(index * 0.618033988749895, 1.0);
  static const float kSaturation[] = {0.70f, 0.45f, 0.90f}, kValue[] = {0.85f, 0.95f, 0.65f};
  const int lap = (index / 3) % 3;
  return QColor::fromHsvF(float(hue), kSaturation[lap], kValue[lap]);
}

QColor unlabelledColor() {
  return QColor(70, 90, 140);
}

} // namespace nearscape::ui
