#include "StudyChart.h"

#include <QFontMetricsF>
#include <QLocale>
#include <QPainter>
#include <QPainterPath>
#include <QPolygonF>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

namespace nearscape::ui {

namespace {

constexpr double kOneGap = 0.6; ///< nines between the last whole nine and the column of recall 1
constexpr double kMaxNines = 6; ///< the axis ends here (a million queries × k would need 7)
constexpr double kPad = 10;     ///< pixels between the frame and the outermost points
constexpr double kDot = 4.5;    ///< radius of a point
constexpr double kLeft = 64, kRight = 16, kTop = 30, kBottom = 42;

bool isOne(double recall) {
  return recall >= 1.0 - 1e-9;
}

double nines(double recall) {
  return -std::log10(std::max(1.0 - recall, 1e-9));
}

/// A number for people: 12,345 (or 0.123 below 10).
QString plain(double value) {
  static const QLocale english(QLocale::English);
  return value >= 10 ? english.toString(value, 'f', 0) : english.toString(value, 'g', 3);
}

QString axisValue(double value, bool throughput) {
  if (throughput)
    return value >= 1e6   ? QStringLiteral("%1M").arg(value / 1e6)
           : value >= 1e3 ? QStringLiteral("%1k").arg(value / 1e3)
                          : QString::number(value);
  return value >= 1e3 ? QStringLiteral("%1 s").arg(value / 1e3) : QString::number(value);
}

QString ms(double value) {
  return StudyChart::formatMs(value);
}

/// For each row, whether no other row of `rows` has recall ≥ and a better value (≥ when higher
/// is better, else ≤) with one of them strictly better. Rows `skip` marks take no part.
std::vector<bool> frontOf(const std::vector<SweepRow>& rows, bool higherIsBetter,
                          double (*value)(const SweepRow&), const std::vector<bool>& skip) {
  std::vector<bool> front(rows.size(), false);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (skip[i])
      continue;
    front[i] = true;
    for (std::size_t j = 0; j < rows.size() && front[i]; ++j) {
      if (j == i || skip[j])
        continue;
      const double a = value(rows[i]), b = value(rows[j]);
      const bool asGood = higherIsBetter ? b >= a : b <= a;
      const bool better = higherIsBetter ? b > a : b < a;
      if (rows[j].recall >= rows[i].recall && asGood && (rows[j].recall > rows[i].recall || better))
        front[i] = false;
    }
  }
  return front;
}

} // namespace

QColor StudyChart::runColour(int slot) {
  static const QColor colours[] = {QColor(230, 159, 0), QColor(0, 114, 178),
                                   QColor(0, 158, 115), QColor(204, 121, 167),
                                   QColor(213, 94, 0),  QColor(86, 180, 233)};
  const int n = int(std::size(colours));
  return colours[((slot % n) + n) % n];
}

QColor StudyChart::referenceColour() {
  return QColor(40, 40, 40);
}

QString StudyChart::formatMs(double value) {
  return QString::number(value, 'f', value >= 100 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3);
}

QString StudyChart::formatBytes(std::uint64_t bytes) {
  const double b = double(bytes);
  if (b < 1e3)
    return QObject::tr("%1 bytes").arg(bytes);
  if (b < 1e6)
    return QObject::tr("%1 KB").arg(b / 1e3, 0, 'f', 1);
  if (b < 1e9)
    return QObject::tr("%1 MB").arg(b / 1e6, 0, 'f', 1);
  return QObject::tr("%1 GB").arg(b / 1e9, 0, 'f', 2);
}

QString StudyChart::describe(const SweepRun& run, const SweepRow& row) {
  const QString setting = QString::fromStdString(formatParameters(row.params));
  return QObject::tr("%1 · %2\nrecall %3 · %4 queries/s · batch-1 p50 %5 ms, p99 %6 ms\n"
                     "built in %7 s · %8")
      .arg(QString::fromStdString(run.label()),
           setting.isEmpty() ? QObject::tr("defaults") : setting)
      .arg(row.recall, 0, 'f', 4)
      .arg(plain(row.qps))
      .arg(ms(row.p50Ms))
      .arg(ms(row.p99Ms))
      .arg(row.buildSeconds, 0, 'f', 2)
      .arg(formatBytes(row.bytes));
}

void StudyChart::setStudy(std::shared_ptr<const SweepStudy> study, std::vector<QColor> colours) {
  m_study = std::move(study);
  m_colours = std::move(colours);
  m_front.clear();
  if (m_study)
    for (const SweepRun& run : m_study->runs) {
      std::vector<bool> skip(run.rows.size(), false);
      for (std::size_t i = 0; i < run.rows.size(); ++i)
        skip[i] = m_measure == Measure::Latency && !(run.rows[i].p50Ms > 0);
      m_front.push_back(
          m_measure == Measure::Throughput
              ? frontOf(
                    run.rows, true, [](const SweepRow& r) { return r.qps; }, skip)
              : frontOf(
                    run.rows, false, [](const SweepRow& r) { return r.p50Ms; }, skip));
    }
  updateRanges();
}

void StudyChart::setRect(const QRectF& rect) {
  m_rect = rect;
}

bool StudyChart::drawn(int run, int row) const {
  if (!m_study || run < 0 || run >= int(m_study->runs.size()))
    return false;
  const auto& rows = m_study->runs[std::size_t(run)].rows;
  if (row < 0 || row >= int(rows.size()))
    return false;
  return valueOf(rows[std::size_t(row)]) > 0;
}

bool StudyChart::onFront(int run, int row) const {
  return drawn(run, row) && m_front[std::size_t(run)][std::size_t(row)];
}

double StudyChart::valueOf(const SweepRow& row) const {
  return m_measure == Measure::Throughput ? row.qps : row.p50Ms;
}

void StudyChart::updateRanges() {
  double lowest = std::numeric_limits<double>::infinity(), highest = -lowest;
  double yLo = lowest, yHi = -lowest;
  bool one = false;
  auto take = [&](const SweepRow& r) {
    if (!(valueOf(r) > 0))
      return;
    if (isOne(r.recall)) {
      one = true;
    } else {
      lowest = std::min(lowest, nines(r.recall));
      highest = std::max(highest, nines(r.recall));
    }
    const double v = std::log10(valueOf(r));
    yLo = std::min(yLo, v);
    yHi = std::max(yHi, v);
    if (m_measure == Measure::Latency && r.p99Ms > 0)
      yHi = std::max(yHi, std::log10(r.p99Ms));
  };
  if (m_study) {
    for (const SweepRun& run : m_study->runs)
      for (const SweepRow& r : run.rows)
        take(r);
    if (m_study->exact)
      take(*m_study->exact);
  }
  m_oneColumn = one;
  if (std::isfinite(lowest)) {
    // From the whole nine or the half (0.5, 0.95 …) below the lowest recall.
    const double whole = std::max(0.0, std::floor(lowest));
    m_ninesLo = lowest >= whole + std::log10(2.0) - 1e-9 ? whole + std::log10(2.0) : whole;
    m_ninesHi = std::max(std::ceil(highest - 1e-9), std::floor(m_ninesLo) + 1);
    m_ninesHi = std::min(kMaxNines, m_ninesHi);
    m_ninesLo = std::min(m_ninesLo, m_ninesHi - 1);
  } else {
    m_ninesLo = 0;
    m_ninesHi = 1;
  }
  if (std::isfinite(yLo)) {
    // From the 1, 2 or 5 × 10^e at or below the smallest value to the one at or above the
    // largest, so that the points fill the height.
    const double steps[] = {0, std::log10(2.0), std::log10(5.0)};
    m_logLo = std::floor(yLo);
    for (const double step : steps)
      if (std::floor(yLo) + step <= yLo + 1e-9)
        m_logLo = std::floor(yLo) + step;
    m_logHi = std::ceil(yHi - 1e-9);
    for (int i = 2; i >= 0; --i)
      if (std::floor(yHi) + steps[i] >= yHi - 1e-9)
        m_logHi = std::floor(yHi) + steps[i];
    if (m_logHi <= m_logLo + 1e-9)
      m_logHi = m_logLo + std::log10(2.5); // one value: 1 → 2.5, 2 → 5, 5 → 12.5
  } else {
    m_logLo = 0;
    m_logHi = 1;
  }
}

QRectF StudyChart::plotArea() const {
  return QRectF(m_rect.left() + kLeft, m_rect.top() + kTop,
                std::max(10.0, m_rect.width() - kLeft - kRight),
                std::max(10.0, m_rect.height() - kTop - kBottom));
}

double StudyChart::xUnits(double recall) const {
  if (isOne(recall))
    return m_ninesHi + kOneGap;
  return std::clamp(nines(recall), m_ninesLo, m_ninesHi);
}

double StudyChart::xOf(double recall) const {
  const QRectF a = plotArea();
  const double span = m_ninesHi - m_ninesLo + (m_oneColumn ? kOneGap : 0);
  return a.left() + kPad + (xUnits(recall) - m_ninesLo) / span * (a.width() - 2 * kPad);
}

double StudyChart::yOf(double value) const {
  const QRectF a = plotArea();
  const double f = (std::log10(std::max(value, 1e-12)) - m_logLo) / (m_logHi - m_logLo);
  return a.bottom() - kPad - std::clamp(f, 0.0, 1.0) * (a.height() - 2 * kPad);
}

QPointF StudyChart::position(int run, int row) const {
  const SweepRow& r = m_study->runs[std::size_t(run)].rows[std::size_t(row)];
  return {xOf(r.recall), yOf(valueOf(r))};
}

QPointF StudyChart::referencePosition() const {
  return {xOf(1.0), yOf(valueOf(*m_study->exact))};
}

std::pair<int, int> StudyChart::pointAt(const QPointF& pos, double radius) const {
  std::pair<int, int> best{-1, -1};
  double bestDistance = radius;
  if (!m_study)
    return best;
  for (int run = 0; run < int(m_study->runs.size()); ++run)
    for (int row = 0; row < int(m_study->runs[std::size_t(run)].rows.size()); ++row) {
      if (!drawn(run, row))
        continue;
      const QPointF p = position(run, row);
      const double d = std::hypot(p.x() - pos.x(), p.y() - pos.y());
      if (d <= bestDistance) {
        bestDistance = d;
        best = {run, row};
      }
    }
  return best;
}

void StudyChart::paint(QPainter& p, const QFont& font) const {
  p.save();
  p.setRenderHint(QPainter::Antialiasing);
  p.setFont(font);
  const QRectF area = plotArea();
  const QColor grid(226, 226, 226), axis(95, 95, 95);
  const bool throughput = m_measure == Measure::Throughput;
  p.fillRect(area, Qt::white);
  const int k = m_study ? m_study->k : 10;

  // Title.
  QFont bold = font;
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(QColor(30, 30, 30));
  p.drawText(QRectF(m_rect.left() + 8, m_rect.top() + 4, m_rect.width() - 16, kTop - 8),
             Qt::AlignLeft | Qt::AlignVCenter,
             throughput ? QObject::tr("Queries per second against recall")
                        : QObject::tr("Batch-1 latency against recall (dot: p50, whisker: p99)"));
  p.setFont(font);

  // The recall axis: each whole nine (0, 0.9, 0.99 …), the halves between (0.5, 0.95 …)
  // fainter, and recall 1 in its own column past a break.
  const double span = m_ninesHi - m_ninesLo;
  for (double e = std::floor(m_ninesLo + 1e-9); e <= m_ninesHi + 1e-9; e += 1) {
    for (const double at : {e, e + std::log10(2.0)}) {
      if (at > m_ninesHi + 1e-9 || at < m_ninesLo - 1e-9)
        continue;
      const double recall = 1.0 - std::pow(10.0, -at);
      const double x = xOf(recall);
      p.setPen(QPen(at == e ? grid : grid.lighter(104), 1));
      p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
      if (at != e && span > 3)
        continue; // the halves' labels only where there is room
      const int digits = at == e ? int(std::lround(e)) : int(std::lround(std::ceil(at)));
      p.setPen(axis);
      p.drawText(QRectF(x - 40, area.bottom() + 3, 80, 16), Qt::AlignHCenter | Qt::AlignTop,
                 recall <= 0 ? QStringLiteral("0") : QString::number(recall, 'f', digits));
    }
  }
  if (m_oneColumn) {
    const double x = xOf(1.0);
    p.setPen(QPen(grid, 1));
    p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    p.setPen(axis);
    p.drawText(QRectF(x - 40, area.bottom() + 3, 80, 16), Qt::AlignHCenter | Qt::AlignTop,
               QStringLiteral("1"));
    // A break on the axis: recall 1 lies beyond every finite number of nines.
    const double xb = (xOf(1.0 - std::pow(10.0, -m_ninesHi)) + x) / 2;
    p.setPen(QPen(axis, 1.2));
    for (const double dx : {-3.0, 3.0})
      p.drawLine(QPointF(xb + dx - 3, area.bottom() + 5), QPointF(xb + dx + 3, area.bottom() - 5));
  }
  // The vertical axis: every decade, with 2 and 5 between where there is room.
  const double decades = m_logHi - m_logLo;
  for (double e = std::floor(m_logLo + 1e-9); e <= m_logHi + 1e-9; e += 1)
    for (const double m : {1.0, 2.0, 5.0}) {
      const double at = e + std::log10(m);
      if ((m != 1 && decades > 3) || at < m_logLo - 1e-9 || at > m_logHi + 1e-9)
        continue;
      const double value = m * std::pow(10.0, e);
      const double y = yOf(value);
      p.setPen(QPen(m == 1 ? grid : grid.lighter(104), 1));
      p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
      if (m != 1 && decades > 2)
        continue;
      p.setPen(axis);
      p.drawText(QRectF(m_rect.left(), y - 8, kLeft - 6, 16), Qt::AlignRight | Qt::AlignVCenter,
                 axisValue(value, throughput));
    }
  p.setPen(axis);
  p.setBrush(Qt::NoBrush);
  p.drawRect(area);
  p.drawText(QRectF(area.left(), m_rect.bottom() - 20, area.width(), 18), Qt::AlignHCenter,
             QObject::tr("recall@%1 (nines: 0.9, 0.99, 0.999 evenly apart)").arg(k));
  p.save();
  p.translate(m_rect.left() + 12, area.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-110, -9, 220, 18), Qt::AlignHCenter,
             throughput ? QObject::tr("queries / s (log)") : QObject::tr("latency, ms (log)"));
  p.restore();

  const bool empty = !m_study || (!m_study->exact &&
                                  std::all_of(m_study->runs.begin(), m_study->runs.end(),
                                              [](const SweepRun& r) { return r.rows.empty(); }));
  if (empty) {
    p.drawText(area, Qt::AlignCenter | Qt::TextWordWrap,
               QObject::tr("Run a sweep: each run's settings appear here, one colour per run"));
    p.restore();
    return;
  }

  // The exact search: a dashed line across at its value, a diamond at recall 1; its label is
  // drawn over the runs' points.
  QString referenceLabel;
  QRectF referenceBox;
  if (m_study->exact && valueOf(*m_study->exact) > 0) {
    const SweepRow& exact = *m_study->exact;
    const QColor ref = referenceColour();
    const double y = std::round(yOf(valueOf(exact))); // crisp: two whole rows of pixels
    p.setPen(QPen(ref, 2, Qt::DashLine));
    p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
    QString label = throughput ? QObject::tr("exact search: %1 queries/s").arg(plain(exact.qps))
                               : QObject::tr("exact search: p50 %1 ms").arg(ms(exact.p50Ms));
    if (!throughput && exact.p99Ms > exact.p50Ms) {
      const double y99 = std::round(yOf(exact.p99Ms));
      p.setPen(QPen(ref, 1, Qt::DotLine));
      p.drawLine(QPointF(area.left(), y99 + 0.5), QPointF(area.right(), y99 + 0.5));
      label += QObject::tr(" (dotted: p99 %1 ms)").arg(ms(exact.p99Ms));
    }
    const bool roomAbove = y - area.top() > 22;
    referenceLabel = label;
    referenceBox = QRectF(area.left() + 6, roomAbove ? y - 19 : y + 3,
                          QFontMetricsF(font).horizontalAdvance(label) + 8, 16);
    const QPointF c = referencePosition();
    QPolygonF diamond(
        {c + QPointF(0, -7), c + QPointF(7, 0), c + QPointF(0, 7), c + QPointF(-7, 0)});
    p.setPen(Qt::NoPen);
    p.setBrush(ref);
    p.drawPolygon(diamond);
  }

  // Each run: its front joined, latency whiskers, then its points (filled on the front).
  for (int run = 0; run < int(m_study->runs.size()); ++run) {
    const auto& rows = m_study->runs[std::size_t(run)].rows;
    const QColor c = run < int(m_colours.size()) ? m_colours[std::size_t(run)] : runColour(run);
    std::vector<int> front;
    for (int i = 0; i < int(rows.size()); ++i)
      if (onFront(run, i))
        front.push_back(i);
    std::sort(front.begin(), front.end(), [&rows](int a, int b) {
      return rows[std::size_t(a)].recall < rows[std::size_t(b)].recall;
    });
    if (front.size() >= 2) {
      QPainterPath line(position(run, front[0]));
      for (std::size_t i = 1; i < front.size(); ++i)
        line.lineTo(position(run, front[i]));
      p.setPen(QPen(c, 2));
      p.setBrush(Qt::NoBrush);
      p.drawPath(line);
    }
    for (int i = 0; i < int(rows.size()); ++i) {
      if (!drawn(run, i))
        continue;
      const QPointF at = position(run, i);
      if (!throughput && rows[std::size_t(i)].p99Ms > rows[std::size_t(i)].p50Ms) {
        const double y99 = yOf(rows[std::size_t(i)].p99Ms);
        p.setPen(QPen(c, 1.2));
        p.drawLine(at, QPointF(at.x(), y99));
        p.drawLine(QPointF(at.x() - 3.5, y99), QPointF(at.x() + 3.5, y99));
      }
      if (onFront(run, i)) {
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawEllipse(at, kDot, kDot);
      } else {
        p.setPen(QPen(c, 1.8));
        p.setBrush(Qt::white);
        p.drawEllipse(at, kDot - 0.5, kDot - 0.5);
      }
    }
  }
  if (!referenceLabel.isEmpty()) {
    p.fillRect(referenceBox, QColor(255, 255, 255, 215));
    p.setPen(referenceColour());
    p.drawText(referenceBox.adjusted(4, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, referenceLabel);
  }
  if (drawn(m_hovered.first, m_hovered.second)) {
    p.setPen(QPen(QColor(120, 120, 120), 1.2));
    p.setBrush(Qt::NoBrush);
    p.drawEllipse(position(m_hovered.first, m_hovered.second), kDot + 4, kDot + 4);
  }
  if (drawn(m_chosen.first, m_chosen.second)) {
    p.setPen(QPen(Qt::black, 2));
    p.setBrush(Qt::NoBrush);
    p.drawEllipse(position(m_chosen.first, m_chosen.second), kDot + 4.5, kDot + 4.5);
  }
  p.restore();
}

QImage renderStudyFigure(const SweepStudy& study, const std::vector<QColor>& colours,
                         const QSize& size, const QString& subtitle) {
  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  QFont font;
  font.setPixelSize(13);
  QFont title = font;
  title.setPixelSize(17);
  title.setBold(true);
  p.setFont(title);
  p.setPen(QColor(30, 30, 30));
  p.drawText(QRectF(16, 8, size.width() - 32, 24), Qt::AlignLeft | Qt::AlignVCenter,
             QObject::tr("Index trade-offs") + (subtitle.isEmpty() ? QString() : " · " + subtitle));

  // The legend: a swatch and a label per run, then the reference, wrapping as needed.
  p.setFont(font);
  const QFontMetricsF metrics(font);
  double x = 16, y = 40;
  auto entry = [&](const QString& text, const std::function<void(const QRectF&)>& swatch) {
    const double w = 22 + metrics.horizontalAdvance(text) + 22;
    if (x + w > size.width() - 16 && x > 16) {
      x = 16;
      y += 20;
    }
    swatch(QRectF(x, y + 3, 14, 14));
    p.setPen(QColor(40, 40, 40));
    p.drawText(QRectF(x + 20, y, w - 20, 20), Qt::AlignLeft | Qt::AlignVCenter, text);
    x += w;
  };
  for (std::size_t r = 0; r < study.runs.size(); ++r) {
    const QColor c = r < colours.size() ? colours[r] : StudyChart::runColour(int(r));
    entry(QString::fromStdString(study.runs[r].label()), [&](const QRectF& box) {
      p.setPen(Qt::NoPen);
      p.setBrush(c);
      p.drawEllipse(box.center(), 6, 6);
    });
  }
  if (study.exact)
    entry(QObject::tr("exact search (reference): %1 queries/s, p50 %2 ms")
              .arg(plain(study.exact->qps))
              .arg(ms(study.exact->p50Ms)),
          [&](const QRectF& box) {
            p.setPen(QPen(StudyChart::referenceColour(), 1.6, Qt::DashLine));
            p.drawLine(QPointF(box.left(), box.center().y()),
                       QPointF(box.right(), box.center().y()));
          });
  const double top = y + 28;

  auto shared = std::make_shared<const SweepStudy>(study);
  const double split = std::round(size.width() * 0.56);
  StudyChart throughput(StudyChart::Measure::Throughput), latency(StudyChart::Measure::Latency);
  throughput.setStudy(shared, colours);
  latency.setStudy(shared, colours);
  throughput.setRect(QRectF(8, top, split - 12, size.height() - top - 8));
  latency.setRect(QRectF(split + 4, top, size.width() - split - 12, size.height() - top - 8));
  throughput.paint(p, font);
  latency.paint(p, font);
  return image;
}

} // namespace nearscape::ui
