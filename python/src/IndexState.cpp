// The indexes' base guard and pickled state (see IndexHandles.h).
#include "IndexHandles.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace nearscape::python {
namespace {

constexpr std::int64_t kGuardRows = 64;

/// A file name of its own in the temporary folder, removed when this goes.
struct TemporaryFile {
  std::filesystem::path path;
  TemporaryFile() {
    static std::atomic<std::uint64_t> counter{0};
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    path = std::filesystem::temp_directory_path() /
           ("nearscape-index-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
            "-" + std::to_string(now) + ".nsi");
  }
  ~TemporaryFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

} // namespace

std::uint64_t BaseGuard::checksum(const MatrixView<float>& base) {
  std::uint64_t sum = 0x9e3779b97f4a7c15ull;
  const std::int64_t rows = std::min(base.rows, kGuardRows);
  for (std::int64_t s = 0; s < rows; ++s) {
    const std::int64_t r = rows == 1 ? 0 : s * (base.rows - 1) / (rows - 1);
    const float* row = base.row(r);
    for (std::int64_t j = 0; j < base.cols; ++j) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, row + j, sizeof bits);
      sum = (sum ^ bits) * 0x100000001b3ull; // FNV-1a over 32-bit words
    }
  }
  return sum;
}

void BaseGuard::check() const {
  if (m_base.data && checksum(m_base) != m_sum)
    throw InvalidArgument(
        "the base array was changed after the index was built: the index reads it in place (no "
        "copy) and would return neighbours of rows that are no longer there. Build the index "
        "again, or build it on a copy (base.copy()) to change the array freely");
}

py::bytes indexBytes(const IndexHandle& h) {
  TemporaryFile file;
  {
    py::gil_scoped_release unlocked;
    h.index->save(file.path, contentHash(h.base.view));
  }
  std::ifstream in(file.path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in && !in.eof())
    throw IoError("could not read the index back from " + file.path.string());
  return py::bytes(bytes.str());
}

void loadIndexBytes(IndexHandle& h, const py::bytes& bytes, std::string_view kind) {
  TemporaryFile file;
  {
    std::ofstream out(file.path, std::ios::binary);
    const std::string_view data = bytes;
    out.write(data.data(), std::streamsize(data.size()));
    if (!out)
      throw IoError("could not write " + file.path.string() + " to unpickle an index");
  }
  {
    py::gil_scoped_release unlocked;
    h.index = loadIndex(file.path, h.base.view, contentHash(h.base.view), h.context);
  }
  if (h.index->kind() != kind)
    throw InvalidArgument("the pickle holds a " + std::string(h.index->kind()) + " index, not a " +
                          std::string(kind) + " one");
  h.guard = BaseGuard(h.base.view);
}

py::tuple indexState(const IndexHandle& h) {
  h.guard.check(); // never pickle an index over a base that changed under it
  return py::make_tuple(1, h.base.owner, indexBytes(h), std::string(backendName(h.context.backend)),
                        h.context.threads, h.context.seed);
}

template <typename Handle>
std::unique_ptr<Handle> indexFromState(const py::tuple& state, std::string_view kind) {
  if (state.size() != 6 || state[0].cast<int>() != 1)
    throw InvalidArgument("not the pickled state of a nearscape " + std::string(kind) + " index");
  auto h = std::make_unique<Handle>();
  h->base = floatRows(state[1], "base");
  // As many threads as it had, where this machine allows them.
  const int threads = std::min(state[4].cast<int>(), threadLimit().threads);
  h->context = makeContext(state[3].cast<std::string>(), py::none(), threads,
                           state[5].cast<std::uint64_t>());
  loadIndexBytes(*h, state[2].cast<py::bytes>(), kind);
  return h;
}
template std::unique_ptr<GraphIndexHandle> indexFromState(const py::tuple&, std::string_view);
template std::unique_ptr<IvfIndexHandle> indexFromState(const py::tuple&, std::string_view);

std::string indexRepr(const IndexHandle& h, const char* className) {
  std::string out = std::string(className) + "(n=" + std::to_string(h.index->size()) +
                    ", dim=" + std::to_string(h.index->dim()) + ", metric='" +
                    std::string(metricName(h.index->metric())) + "'";
  for (const auto& [name, value] : h.index->buildValues()) {
    std::ostringstream number;
    number << value;
    out += ", " + name + "=" + number.str();
  }
  return out + ", backend='" + std::string(backendName(h.index->backend())) + "')";
}

} // namespace nearscape::python
