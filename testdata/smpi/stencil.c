/* stencil.c - 1-D Jacobi stencil with halo exchange and global residual.
 *
 * Every rank owns LOCAL_N cells. Each iteration exchanges one halo cell
 * with each existing neighbour (non-periodic) using MPI_Isend/MPI_Irecv +
 * MPI_Waitall, relaxes its cells, and computes the global residual with
 * MPI_Allreduce. The two end ranks get less work and the rank in the
 * middle gets more, so the others wait in the collective.
 *
 * Note: MPI_Sendrecv is deliberately not used: SimGrid 3.32 writes
 * mismatched link keys for it, and pj_dump rejects such traces.
 */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>

#define ITERS 4
#define LOCAL_N 64

int main(int argc, char *argv[])
{
  int rank, size;
  double u[LOCAL_N + 2], v[LOCAL_N + 2];

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

  for (int i = 0; i < LOCAL_N + 2; i++)
    u[i] = (rank == 0 && i == 0) ? 1.0 : 0.0;

  double res = 0.0;
  for (int it = 0; it < ITERS; it++) {
    MPI_Request reqs[4];
    int nreq = 0;
    if (left != MPI_PROC_NULL) {
      MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &reqs[nreq++]);
      MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &reqs[nreq++]);
    }
    if (right != MPI_PROC_NULL) {
      MPI_Irecv(&u[LOCAL_N + 1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &reqs[nreq++]);
      MPI_Isend(&u[LOCAL_N], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &reqs[nreq++]);
    }
    MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    if (rank == 0)
      u[0] = 1.0;

    double local = 0.0;
    for (int i = 1; i <= LOCAL_N; i++) {
      v[i] = 0.5 * (u[i - 1] + u[i + 1]);
      local += (v[i] - u[i]) * (v[i] - u[i]);
    }
    for (int i = 1; i <= LOCAL_N; i++)
      u[i] = v[i];

    double work = 3e6;
    if (left == MPI_PROC_NULL || right == MPI_PROC_NULL)
      work = 1.5e6;
    if (rank == size / 2)
      work = 6e6;
    smpi_execute_flops(work);

    MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  if (rank == 0)
    printf("stencil: residual %.6e after %d iterations on %d ranks\n", res, ITERS, size);
  MPI_Finalize();
  return 0;
}
