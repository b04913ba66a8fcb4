/* Dynamic task farm: rank 0 hands out tasks on demand; task costs are
 * heavy-tailed and come in phases, so idle capacity varies over time. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

static unsigned long long lcg = 12345;
static double unif(void) { lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL; return ((lcg >> 11) & ((1ULL<<53)-1)) / (double)(1ULL<<53); }

int main(int argc, char **argv) {
  int rank, n, ntasks = argc > 1 ? atoi(argv[1]) : 3000;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (rank == 0) {
    int sent = 0, done = 0; double task[2];
    MPI_Status st;
    for (int w = 1; w < n && sent < ntasks; w++, sent++) {
      task[0] = 1e6 * (1 + 20 * pow(unif(), 3)); task[1] = sent;
      MPI_Send(task, 2, MPI_DOUBLE, w, 1, MPI_COMM_WORLD);
    }
    while (done < sent) {
      double res;
      MPI_Recv(&res, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
      done++;
      /* phases: every 500 tasks the master pauses (a serial section) */
      if (sent % 500 == 0 && sent > 0) smpi_execute_flops(2e7 + 3e7 * unif());
      if (sent < ntasks) {
        double phase = (sent / 250) % 3;
        task[0] = 1e6 * (1 + (5 + 10 * phase) * pow(unif(), 2)); task[1] = sent;
        MPI_Send(task, 2, MPI_DOUBLE, st.MPI_SOURCE, 1, MPI_COMM_WORLD);
        sent++;
      } else {
        task[0] = -1;
        MPI_Send(task, 2, MPI_DOUBLE, st.MPI_SOURCE, 1, MPI_COMM_WORLD);
      }
    }
    for (int w = 1; w < n; w++) { /* workers not yet stopped */ }
  } else {
    double task[2];
    for (;;) {
      MPI_Recv(task, 2, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (task[0] < 0) break;
      smpi_execute_flops(task[0]);
      double res = task[1];
      MPI_Send(&res, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
