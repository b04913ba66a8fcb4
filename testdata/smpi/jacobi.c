/* 1-D Jacobi with per-iteration load imbalance that drifts, halo exchange
 * and a periodic allreduce: idle time comes in waves. */
#include <mpi.h>
#include <stdlib.h>
#include <math.h>

static unsigned long long lcg;
static double unif(void) { lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL; return ((lcg >> 11) & ((1ULL<<53)-1)) / (double)(1ULL<<53); }

int main(int argc, char **argv) {
  int rank, n, iters = argc > 1 ? atoi(argv[1]) : 800;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  lcg = 777 + rank * 1000003ULL;
  static double halo[4096], in[4096];
  for (int it = 0; it < iters; it++) {
    double drift = 1 + 0.8 * sin(2 * M_PI * (it / 150.0 + rank / (double)n));
    smpi_execute_flops(4e6 * drift * (0.7 + 0.6 * unif()));
    MPI_Request rq[4]; int k = 0;
    if (rank > 0) { MPI_Isend(halo, 4096, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, &rq[k++]); MPI_Irecv(in, 4096, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, &rq[k++]); }
    if (rank < n - 1) { MPI_Isend(halo, 4096, MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD, &rq[k++]); MPI_Irecv(in, 4096, MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD, &rq[k++]); }
    MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
    if (it % 10 == 9) { double r = unif(), s; MPI_Allreduce(&r, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }
  }
  MPI_Finalize();
  return 0;
}
