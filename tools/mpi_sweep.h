// Distributed sweeps: `mpirun -np K wiresim sweep ...` splits the layouts across K processes
// and gathers the results on rank 0, which prints exactly what one process would. Built only
// where CMake finds MPI (WIRESIM_MPI); elsewhere, and outside mpirun, it is one process.
//
//   MpiSession mpi(&argc, &argv);            // in main: MPI_Init only under mpirun
//   auto all = gather_sweep(local_rows, mpi); // rank 0: every row; other ranks: none
#pragma once

#include <vector>

#include "scenarios/sweep.h"

namespace wiresim::tools {

class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  static int rank();
  static int size();
};

// Rows of every rank, on rank 0 (unranked); an empty vector elsewhere.
std::vector<scenarios::SweepRow> gather_sweep(const std::vector<scenarios::SweepRow>& local);

}  // namespace wiresim::tools
