// nearscape-cli built without MPI: one process; several started by a launcher are refused.
#include "Ranks.h"

#include <cstdlib>
#include <string>

namespace nearscape::cli {

std::unique_ptr<Ranks> joinRanks(int&, char**&) {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (const char* size = std::getenv(name); size && std::atoi(size) > 1)
      throw InvalidArgument("started as one of " + std::string(size) +
                            " MPI processes, but this nearscape-cli was built without MPI "
                            "(NEARSCAPE_WITH_MPI=OFF); rebuild it where libopenmpi-dev is "
                            "installed, or run one process");
  return nullptr;
}

} // namespace nearscape::cli
