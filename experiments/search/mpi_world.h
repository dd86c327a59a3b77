// SPDX-License-Identifier: Apache-2.0
// The processes of an `mpirun -n R tessera search ...` launch (OpenMPI), for a search sharded
// over MPI ranks: rank r searches shard r/R and rank 0 gathers every rank's points. MPI is
// optional at build time (TESSERA_HAVE_MPI); without it, or outside mpirun, the world is one
// process.
#pragma once

#include <string>
#include <vector>

namespace tessera::experiments::search {

class MpiWorld {
 public:
  // Starts MPI when the process was launched by mpirun (its environment says so); finalizes on
  // destruction.
  MpiWorld(int& argc, char**& argv);
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  // At rank 0, every rank's `mine` in rank order; elsewhere empty. Every rank must call it.
  [[nodiscard]] std::vector<std::string> gather(const std::string& mine) const;

  // Whether this build can run under MPI.
  static bool available();

 private:
  int rank_ = 0;
  int size_ = 1;
  bool started_ = false;
};

// Whether the environment says this process is one of several an MPI launcher started (what a
// build without MPI cannot join).
bool launched_as_one_of_several();

}  // namespace tessera::experiments::search
