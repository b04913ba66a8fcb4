/* farm.c - master/worker task farm with non-blocking communication.
 *
 * Rank 0 is the master. In each of ROUNDS rounds it posts one MPI_Isend
 * (a task descriptor) and one MPI_Irecv (the result) per worker, then
 * waits for all of them with MPI_Waitall. Workers receive with MPI_Irecv +
 * MPI_Wait, compute for a pseudo-random number of flops (fixed LCG seeded
 * by rank, so runs are reproducible) and send the result back with
 * MPI_Isend + MPI_Wait. The imbalance leaves fast workers and the master
 * idle. A final MPI_Reduce collects per-worker totals.
 */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 3
#define TASK_DOUBLES 1024 /* 8 KiB task payload */

static unsigned lcg(unsigned *s)
{
  *s = *s * 1103515245u + 12345u;
  return (*s >> 16) & 0x7fff;
}

int main(int argc, char *argv[])
{
  int rank, size;
  static double task[TASK_DOUBLES];

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  double done = 0.0, total = 0.0;

  if (rank == 0) {
    int nw = size - 1;
    MPI_Request *reqs = malloc(2 * nw * sizeof(MPI_Request));
    double *results = malloc(nw * sizeof(double));
    for (int round = 0; round < ROUNDS; round++) {
      for (int i = 0; i < TASK_DOUBLES; i++)
        task[i] = round + i;
      for (int w = 1; w <= nw; w++) {
        MPI_Isend(task, TASK_DOUBLES, MPI_DOUBLE, w, 1, MPI_COMM_WORLD, &reqs[w - 1]);
        MPI_Irecv(&results[w - 1], 1, MPI_DOUBLE, w, 2, MPI_COMM_WORLD, &reqs[nw + w - 1]);
      }
      MPI_Waitall(2 * nw, reqs, MPI_STATUSES_IGNORE);
      smpi_execute_flops(2e6); /* master merges results */
    }
    free(reqs);
    free(results);
  } else {
    unsigned seed = 42u + 7u * (unsigned)rank;
    MPI_Request req;
    for (int round = 0; round < ROUNDS; round++) {
      MPI_Irecv(task, TASK_DOUBLES, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      double flops = 1e6 + 1e3 * (lcg(&seed) % 8000); /* 1..9 Mflop */
      smpi_execute_flops(flops);
      done += flops;
      MPI_Isend(&done, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
  }

  MPI_Reduce(&done, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("farm: %.0f flops done by %d workers\n", total, size - 1);
  MPI_Finalize();
  return 0;
}
