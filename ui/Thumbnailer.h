#pragma once
// The thumbnails of a data set, wherever they come from: images held in the file (IDX), or image
// files named by a metadata column (image, path, file, filepath, image_path). Files are decoded
// in background threads at thumbnail size (QImageReader's scaled decoding), kept in a bounded
// least-recently-used memory cache and, when given one, in the artefact cache on disk (keyed by
// the file's path, size and time, so a changed file is decoded again), and reported when ready;
// a missing, unreadable or huge file gets a placeholder and is counted, never a stall. Files are
// only read as images.

#include "nearscape/core/Dataset.h"
#include "nearscape/io/ArtefactCache.h"

#include <QCache>
#include <QImage>
#include <QObject>
#include <QSet>
#include <QThreadPool>

#include <atomic>
#include <memory>

namespace nearscape::ui {

class Thumbnailer : public QObject {
  Q_OBJECT
public:
  /// Largest side of a decoded thumbnail, in pixels.
  static constexpr int kSize = 128;

  explicit Thumbnailer(QObject* parent = nullptr);
  ~Thumbnailer() override;

  /// The data whose thumbnails are asked for; pending decodes of the previous data are dropped.
  void setDataset(std::shared_ptr<const Dataset> dataset);
  /// Where decoded thumbnails are kept between runs (nullptr: memory only).
  void setDiskCache(std::shared_ptr<const ArtefactCache> cache) { m_disk = std::move(cache); }
  /// Whether the data has thumbnails at all (images in the file, or an image column).
  bool available() const;
  /// The thumbnail of `item`: at once when the file held it or it is cached; else a null image
  /// now, a decode queued, and thumbnailReady(item) once it is ready (or the placeholder).
  QImage thumbnail(std::int64_t item);
  /// Files decoded so far, and those that were missing or unreadable.
  int loaded() const { return m_loaded; }
  int failed() const { return m_failed; }
  /// Image files checked so far (of every item's, in a background pass started by setDataset:
  /// exists, is a readable file, and its header names an image format), and those that failed.
  /// A file whose header passes but whose pixels do not decode is counted by failed() alone.
  int checked() const { return m_checked; }
  int unreadable() const { return m_unreadable; }
  /// Of loaded(), those read back from the disk cache instead of decoded from their files.
  int fromDiskCache() const { return m_fromDisk; }
  /// Waits for the queued decodes (tests and shutdown).
  void waitForDone() { m_pool.waitForDone(); }
  /// The image shown for a file that could not be read.
  static const QImage& placeholder();

signals:
  void thumbnailReady(qint64 item);
  /// loaded() or failed() changed.
  void countsChanged(int loaded, int failed);
  /// checked() or unreadable() changed; `total`: the items with an image file.
  void filesChecked(int unreadable, int checked, int total);

private:
  /// Starts the background check of every item's image file (filesChecked).
  void checkFiles();
  void deliver(quint64 generation, qint64 item, const QImage& image, bool ok, bool fromDisk);

  std::shared_ptr<const Dataset> m_dataset;
  QThreadPool m_pool;
  QCache<qint64, QImage> m_cache; ///< cost in KiB
  QSet<qint64> m_pending;
  quint64 m_generation = 0;
  int m_loaded = 0, m_failed = 0, m_fromDisk = 0;
  int m_checked = 0, m_unreadable = 0;
  /// Set to stop the running file check (new data, or the end).
  std::shared_ptr<std::atomic<bool>> m_stopCheck;
  std::shared_ptr<const ArtefactCache> m_disk;
};

/// `image` scaled into a `size` square as an icon, or a null icon for a null image.
QIcon iconOf(const QImage& image, int size);

} // namespace nearscape::ui
