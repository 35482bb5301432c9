#pragma once
// nearscape-cli as one rank of an MPI job (mpirun -np N nearscape-cli knn|layout|path …).

#include "nearscape/knn/Distributed.h"

#include <memory>

namespace nearscape::cli {

/// The job this process is a rank of when an MPI launcher started it (mpirun sets
/// OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), after MPI_Init; else null. Destroying it
/// finalises MPI. Built without MPI (NEARSCAPE_WITH_MPI=OFF), a launch of several processes is
/// refused: each would build the whole graph and write the same files. Throws InvalidArgument.
std::unique_ptr<Ranks> joinRanks(int& argc, char**& argv);

} // namespace nearscape::cli
