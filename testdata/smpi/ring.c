/* ring.c - token ring with uneven compute phases.
 *
 * A token (an int counter) travels ROUNDS times around the ring of ranks.
 * Before forwarding it, every rank "computes" for a rank-dependent amount
 * of flops, so ranks downstream of a slow rank sit idle in MPI_Recv.
 * Every round ends with an MPI_Barrier.
 *
 * Computation is injected with smpi_execute_flops() so that the simulated
 * timings are deterministic (run with --cfg=smpi/simulate-computation:no).
 */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>

#define ROUNDS 3

int main(int argc, char *argv[])
{
  int rank, size, token = 0;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int next = (rank + 1) % size;
  int prev = (rank + size - 1) % size;

  for (int round = 0; round < ROUNDS; round++) {
    if (rank != 0)
      MPI_Recv(&token, 1, MPI_INT, prev, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    /* every third rank is "slow" */
    smpi_execute_flops(1e6 * (1 + (rank % 3 == 2 ? 4 : 0) + round));
    token++;

    MPI_Send(&token, 1, MPI_INT, next, round, MPI_COMM_WORLD);
    if (rank == 0)
      MPI_Recv(&token, 1, MPI_INT, prev, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    MPI_Barrier(MPI_COMM_WORLD);
  }

  if (rank == 0)
    printf("ring: token=%d after %d rounds on %d ranks\n", token, ROUNDS, size);
  MPI_Finalize();
  return 0;
}
