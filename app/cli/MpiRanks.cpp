// nearscape-cli as a rank of an MPI job: the engine's Ranks over MPI_COMM_WORLD.
#include "Ranks.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace nearscape::cli {
namespace {

// MPI counts are int: larger messages go in pieces of at most 1 GiB.
constexpr std::size_t kPiece = std::size_t(1) << 30;

class MpiRanks final : public Ranks {
public:
  MpiRanks() {
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m_size);
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_size(host, &m_onThisHost);
    MPI_Comm_rank(host, &m_rankOnHost);
    MPI_Comm_free(&host);
  }
  ~MpiRanks() override { MPI_Finalize(); }

  int rank() const override { return m_rank; }
  int size() const override { return m_size; }
  int ranksOnThisHost() const override { return m_onThisHost; }
  int rankOnThisHost() const override { return m_rankOnHost; }

  void send(int to, std::span<const std::byte> bytes) override {
    for (std::size_t at = 0; at < bytes.size() || at == 0; at += kPiece) {
      const int count = int(std::min(kPiece, bytes.size() - at));
      MPI_Send(bytes.data() + at, count, MPI_BYTE, to, 0, MPI_COMM_WORLD);
      if (bytes.empty())
        break;
    }
  }

  void receive(int from, std::span<std::byte> bytes) override {
    for (std::size_t at = 0; at < bytes.size() || at == 0; at += kPiece) {
      const int count = int(std::min(kPiece, bytes.size() - at));
      MPI_Recv(bytes.data() + at, count, MPI_BYTE, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (bytes.empty())
        break;
    }
  }

  void exchange(int to, std::span<const std::byte> out, int from,
                std::span<std::byte> in) override {
    const std::size_t pieces = std::max<std::size_t>(
        1, std::max((out.size() + kPiece - 1) / kPiece, (in.size() + kPiece - 1) / kPiece));
    for (std::size_t p = 0; p < pieces; ++p) {
      const std::size_t at = p * kPiece;
      const int sendCount = at < out.size() ? int(std::min(kPiece, out.size() - at)) : 0;
      const int receiveCount = at < in.size() ? int(std::min(kPiece, in.size() - at)) : 0;
      MPI_Sendrecv(out.data() + (sendCount ? at : 0), sendCount, MPI_BYTE, to, 1,
                   in.data() + (receiveCount ? at : 0), receiveCount, MPI_BYTE, from, 1,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }

  std::optional<RankFailure> agree(const std::string& error) override {
    const int mine = error.empty() ? INT_MAX : m_rank;
    int first = INT_MAX;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == INT_MAX)
      return std::nullopt;
    char message[2048] = {};
    if (first == m_rank)
      std::strncpy(message, error.c_str(), sizeof message - 1);
    MPI_Bcast(message, int(sizeof message), MPI_CHAR, first, MPI_COMM_WORLD);
    return RankFailure{first, message};
  }

private:
  int m_rank = 0, m_size = 1, m_onThisHost = 1, m_rankOnHost = 0;
};

bool launchedByMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name))
      return true;
  return false;
}

} // namespace

std::unique_ptr<Ranks> joinRanks(int& argc, char**& argv) {
  if (!launchedByMpi())
    return nullptr;
  // Only the main thread calls MPI (OpenMP's threads compute between the calls).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  return std::make_unique<MpiRanks>();
}

} // namespace nearscape::cli
