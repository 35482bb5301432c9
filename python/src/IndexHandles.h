#pragma once
// The Python index classes' state: the engine's index, the base it searches (kept alive with it,
// read in place), a guard that notices the base being overwritten, and their pickled form.
#include "Bindings.h"

#include <cstdint>
#include <memory>
#include <string>

namespace nearscape::python {

/// A checksum of a few rows of the base, taken when an index is made and compared before each
/// search: the index reads the caller's array in place (no copy), and an array written to
/// afterwards would give neighbours of rows that no longer exist. Sampled, so that a search of
/// one query stays cheap: 64 rows spread over the array (first and last included); a change to
/// other rows alone goes unseen.
class BaseGuard {
public:
  BaseGuard() = default;
  explicit BaseGuard(const MatrixView<float>& base) : m_base(base), m_sum(checksum(base)) {}
  /// Throws InvalidArgument when the sampled rows changed since the guard was made.
  void check() const;

private:
  static std::uint64_t checksum(const MatrixView<float>& base);
  MatrixView<float> m_base;
  std::uint64_t m_sum = 0;
};

/// An exact index: the base kept ready (packed on the CPU, resident on a GPU) for many searches.
struct ExactIndexHandle {
  FloatRows base;
  BaseGuard guard;
  Metric metric = Metric::L2;
  std::string backend = "auto"; ///< as asked for (a pickle asks for it again)
  std::unique_ptr<ExactKnnIndex> index;
};

/// An ANN index and the base it searches (kept alive with it).
struct IndexHandle {
  FloatRows base;
  BaseGuard guard;
  std::unique_ptr<AnnIndex> index;
  Context context;
};
struct GraphIndexHandle : IndexHandle {};
struct IvfIndexHandle : IndexHandle {};

/// The bytes of `index` as AnnIndex::save writes them (through a temporary file, removed).
/// Throws IoError.
py::bytes indexBytes(const IndexHandle& h);
/// Fills `h` (whose base and context are set) from bytes of indexBytes; checks the kind.
/// Throws FormatError, InvalidArgument (another kind).
void loadIndexBytes(IndexHandle& h, const py::bytes& bytes, std::string_view kind);

/// The state pickle keeps: (1, base, index bytes, backend, threads, seed); the base goes whole
/// so that a pickle opens anywhere (a subprocess, joblib's workers).
py::tuple indexState(const IndexHandle& h);
/// The handle of a state from indexState. Throws InvalidArgument for a state of another form.
template <typename Handle>
std::unique_ptr<Handle> indexFromState(const py::tuple& state, std::string_view kind);

/// "GraphIndex(n=…, dim=…, metric='l2', degree=…, build_k=…, backend='cpu')".
std::string indexRepr(const IndexHandle& h, const char* className);

} // namespace nearscape::python
