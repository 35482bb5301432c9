#include "Thumbnailer.h"

#include <QBuffer>
#include <QDateTime>
#include <QFileInfo>
#include <QIcon>
#include <QImageReader>
#include <QPainter>
#include <QPixmap>
#include <QPointer>

#include <algorithm>
#include <chrono>

namespace nearscape::ui {
namespace {

/// Files larger than this are not decoded: a thumbnail needs no more (and a huge file would
/// hold a thread for seconds).
constexpr qint64 kMaxFileBytes = 64LL << 20;
/// Images with more pixels than this are refused before decoding.
constexpr qint64 kMaxPixels = 100'000'000;

/// Decodes `path` at thumbnail size; a null image when it cannot.
QImage decodeThumbnail(const QString& path) {
  const QFileInfo info(path);
  if (!info.isFile() || info.size() > kMaxFileBytes)
    return {};
  QImageReader reader(path);
  reader.setAutoTransform(true); // EXIF orientation
  const QSize size = reader.size();
  if (!size.isValid() || qint64(size.width()) * size.height() > kMaxPixels)
    return {};
  if (size.width() > Thumbnailer::kSize || size.height() > Thumbnailer::kSize)
    reader.setScaledSize(size.scaled(Thumbnailer::kSize, Thumbnailer::kSize, Qt::KeepAspectRatio));
  QImage image = reader.read();
  return image.isNull() ? QImage() : image.convertToFormat(QImage::Format_ARGB32_Premultiplied);
}

/// What names a file's thumbnail in the disk cache: the file as it is now.
std::string diskKey(const QFileInfo& info) {
  return "thumbnail\n" + info.absoluteFilePath().toStdString() + "\n" +
         std::to_string(info.size()) + "\n" +
         std::to_string(info.lastModified().toMSecsSinceEpoch()) + "\n" +
         std::to_string(Thumbnailer::kSize);
}

/// The thumbnail of `file`: from the disk cache when it holds it, else decoded (and stored).
QImage loadThumbnail(const QString& file, const ArtefactCache* disk, bool& fromDisk) {
  fromDisk = false;
  const QFileInfo info(file);
  if (!disk || !info.isFile())
    return decodeThumbnail(file);
  const std::string key = diskKey(info);
  if (const std::optional<std::string> bytes = disk->loadBlob(key)) {
    QImage image;
    if (image.loadFromData(reinterpret_cast<const uchar*>(bytes->data()), int(bytes->size()),
                           "PNG")) {
      fromDisk = true;
      return image.convertToFormat(QImage::Format_ARGB32_Premultiplied);
    }
  }
  const QImage image = decodeThumbnail(file);
  if (!image.isNull()) {
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (image.save(&buffer, "PNG"))
      disk->storeBlob(key, png.toStdString());
  }
  return image;
}

/// An IDX thumbnail held in the file, as an image (a copy: the data may go away).
QImage heldThumbnail(const Thumbnails& t, std::int64_t item) {
  const QImage image(t.image(item), t.width, t.height, t.width * t.channels,
                     t.channels == 3 ? QImage::Format_RGB888 : QImage::Format_Grayscale8);
  return image.copy();
}

} // namespace

Thumbnailer::Thumbnailer(QObject* parent) : QObject(parent) {
  m_pool.setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
  m_cache.setMaxCost(256 * 1024); // 256 MiB of decoded thumbnails (about 16,000 at 128 × 128)
}

Thumbnailer::~Thumbnailer() {
  if (m_stopCheck)
    *m_stopCheck = true;
  m_pool.clear();
  m_pool.waitForDone();
}

void Thumbnailer::setDataset(std::shared_ptr<const Dataset> dataset) {
  ++m_generation;
  m_pool.clear(); // queued decodes of the previous data; running ones are dropped on delivery
  m_cache.clear();
  m_pending.clear();
  m_loaded = m_failed = m_fromDisk = 0;
  m_checked = m_unreadable = 0;
  if (m_stopCheck)
    *m_stopCheck = true;
  m_stopCheck.reset();
  m_dataset = std::move(dataset);
  emit countsChanged(0, 0);
  if (m_dataset && m_dataset->thumbnails.empty() && m_dataset->imageColumn >= 0)
    checkFiles();
}

void Thumbnailer::checkFiles() {
  // Decoding counts only the files shown so far (2 of 5 broken files, issue 42): every item's
  // file is checked once, up front, in the background — cheap (a stat and a header read), and
  // reported in batches so that the count grows as "n of m checked".
  auto stop = std::make_shared<std::atomic<bool>>(false);
  m_stopCheck = stop;
  const quint64 generation = m_generation;
  const std::shared_ptr<const Dataset> dataset = m_dataset;
  QPointer<Thumbnailer> self(this);
  m_pool.start([self, generation, dataset, stop] {
    const auto total = int(dataset->size());
    int checked = 0, unreadable = 0;
    auto report = [&] {
      QMetaObject::invokeMethod(
          self.data(),
          [self, generation, checked, unreadable, total] {
            if (!self || generation != self->m_generation)
              return;
            self->m_checked = checked;
            self->m_unreadable = unreadable;
            emit self->filesChecked(unreadable, checked, total);
          },
          Qt::QueuedConnection);
    };
    auto last = std::chrono::steady_clock::now();
    for (std::int64_t item = 0; item < total && !*stop; ++item) {
      const QString file = QString::fromStdString(dataset->imagePathOf(item));
      const QFileInfo info(file);
      const bool ok =
          !file.isEmpty() && info.isFile() && info.isReadable() && QImageReader(file).canRead();
      unreadable += ok ? 0 : 1;
      ++checked;
      if (std::chrono::steady_clock::now() - last > std::chrono::milliseconds(200)) {
        report();
        last = std::chrono::steady_clock::now();
      }
    }
    if (!*stop)
      report();
  });
}

bool Thumbnailer::available() const {
  return m_dataset && (!m_dataset->thumbnails.empty() || m_dataset->imageColumn >= 0);
}

QImage Thumbnailer::thumbnail(std::int64_t item) {
  if (!m_dataset || item < 0 || item >= m_dataset->size())
    return {};
  const Thumbnails& held = m_dataset->thumbnails;
  if (!held.empty() && item < held.pixels.rows())
    return heldThumbnail(held, item);
  if (m_dataset->imageColumn < 0)
    return {};
  if (const QImage* cached = m_cache.object(item))
    return *cached;
  const std::string path = m_dataset->imagePathOf(item);
  if (path.empty())
    return placeholder();
  if (!m_pending.contains(item)) {
    m_pending.insert(item);
    const quint64 generation = m_generation;
    QPointer<Thumbnailer> self(this);
    const QString file = QString::fromStdString(path);
    std::shared_ptr<const ArtefactCache> disk = m_disk;
    m_pool.start([self, generation, item, file, disk] {
      bool fromDisk = false;
      const QImage image = loadThumbnail(file, disk.get(), fromDisk);
      QMetaObject::invokeMethod(
          self.data(),
          [self, generation, item, image, fromDisk] {
            if (self)
              self->deliver(generation, item, image, !image.isNull(), fromDisk);
          },
          Qt::QueuedConnection);
    });
  }
  return {};
}

void Thumbnailer::deliver(quint64 generation, qint64 item, const QImage& image, bool ok,
                          bool fromDisk) {
  if (generation != m_generation)
    return; // decoded for data no longer shown
  m_pending.remove(item);
  const QImage& shown = ok ? image : placeholder();
  m_cache.insert(item, new QImage(shown), std::max<qsizetype>(1, shown.sizeInBytes() / 1024));
  ++(ok ? m_loaded : m_failed);
  m_fromDisk += ok && fromDisk;
  emit countsChanged(m_loaded, m_failed);
  emit thumbnailReady(item);
}

const QImage& Thumbnailer::placeholder() {
  static const QImage image = [] {
    QImage p(64, 64, QImage::Format_ARGB32_Premultiplied);
    p.fill(QColor(225, 225, 225));
    QPainter painter(&p);
    painter.setPen(QPen(QColor(150, 150, 150), 3));
    painter.drawLine(18, 18, 46, 46);
    painter.drawLine(46, 18, 18, 46);
    return p;
  }();
  return image;
}

QIcon iconOf(const QImage& image, int size) {
  if (image.isNull())
    return {};
  return QIcon(QPixmap::fromImage(
      image.scaled(size, size, Qt::KeepAspectRatio,
                   image.width() < size ? Qt::FastTransformation : Qt::SmoothTransformation)));
}

} // namespace nearscape::ui
