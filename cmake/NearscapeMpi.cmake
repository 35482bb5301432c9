# Decides whether nearscape-cli is built to run under mpirun (app/cli/MpiRanks.cpp).
# NEARSCAPE_WITH_MPI defaults to ON when MPI's C bindings are found (Debian: libopenmpi-dev).
# Only the CLI links MPI; the engine talks to other ranks through its own `Ranks` interface.
find_package(MPI COMPONENTS C QUIET)
set(_nearscape_mpi_default OFF)
if(MPI_C_FOUND)
  set(_nearscape_mpi_default ON)
endif()
option(NEARSCAPE_WITH_MPI "Build nearscape-cli for mpirun (distributed kNN graphs)"
  ${_nearscape_mpi_default})
if(NEARSCAPE_WITH_MPI)
  if(NOT MPI_C_FOUND)
    message(FATAL_ERROR "NEARSCAPE_WITH_MPI=ON but no MPI was found (Debian: libopenmpi-dev)")
  endif()
  message(STATUS "Nearscape: MPI ON (${MPI_C_LIBRARIES}; mpiexec ${MPIEXEC_EXECUTABLE})")
else()
  message(STATUS "Nearscape: MPI OFF (nearscape-cli runs as one process)")
endif()
