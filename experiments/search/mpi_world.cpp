// SPDX-License-Identifier: Apache-2.0
#include "experiments/search/mpi_world.h"

#include <cstdlib>

#include "base/error.h"

#ifdef TESSERA_HAVE_MPI
#include <mpi.h>
#endif

namespace tessera::experiments::search {

#ifdef TESSERA_HAVE_MPI
namespace {

// OpenMPI's mpirun, or a PMI launcher (srun), sets these in each process it starts.
bool launched_by_mpirun() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (std::getenv(var) != nullptr) {
      return true;
    }
  }
  return false;
}

}  // namespace
#endif

bool launched_as_one_of_several() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && std::atoi(v) > 1) {
      return true;
    }
  }
  return false;
}

bool MpiWorld::available() {
#ifdef TESSERA_HAVE_MPI
  return true;
#else
  return false;
#endif
}

#ifdef TESSERA_HAVE_MPI

MpiWorld::MpiWorld(int& argc, char**& argv) {
  if (!launched_by_mpirun()) {
    return;
  }
  MPI_Init(&argc, &argv);
  started_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiWorld::~MpiWorld() {
  if (started_) {
    MPI_Finalize();
  }
}

std::vector<std::string> MpiWorld::gather(const std::string& mine) const {
  if (size_ == 1) {
    return {mine};
  }
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size_), 0);
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[r]);
  }
  std::string all(rank_ == 0 ? total : 0, '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  if (rank_ != 0) {
    return {};
  }
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    out.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return out;
}

#else

// Without MPI the world is this process alone, whoever launched it; a search launched as one
// of several (search_under_mpi) says so.
MpiWorld::MpiWorld(int& /*argc*/, char**& /*argv*/) {}

MpiWorld::~MpiWorld() = default;

std::vector<std::string> MpiWorld::gather(const std::string& mine) const {
  return {mine};
}

#endif

}  // namespace tessera::experiments::search
