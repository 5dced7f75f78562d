/*
 * mpi.h -- `mpirun -np N fuseplan batch ...` (built with configure
 * --with-mpi; HAVE_MPI): one batch over the ranks of an MPI job.  Rank 0
 * expands nothing more than the other ranks (every rank reads the same
 * command line into the same items), takes DIR's lock, hands the items
 * out one at a time, largest expected cost first (nodes x time limit),
 * to whichever worker asks, and is the only writer of DIR's dataset
 * files; the workers (ranks 1..N-1) run each item in a child process of
 * their own (fp_batch_run_one) and write its files in DIR, which must be
 * on a filesystem every rank shares.
 *
 * This header does not include <mpi.h>: only mpi.c is compiled with
 * MPI's flags.
 */
#ifndef FP_BATCH_MPI_H
#define FP_BATCH_MPI_H

#include "batch/batch.h"

/* Whether this process was started by an MPI launcher (mpirun) in a job
 * of more than one rank (its environment says so). */
bool fp_batch_mpi_launched(void);

/* MPI_Init; *rank and *size of this process.  FP_EINTERNAL when MPI
 * cannot start. */
fp_status fp_batch_mpi_init(int *argc, char ***argv, int *rank, int *size,
                            fp_error *err);

/* Whether the job outlives a dead rank (mpirun --enable-recovery: Open
 * MPI tells its processes so in their environment). */
bool fp_batch_mpi_recovery(void);

/* MPI_Finalize, then returns `code`.  Under fp_batch_mpi_recovery() it
 * flushes stdio and _exits with `code` instead, never returning: Open
 * MPI 4.1's MPI_Finalize fences every rank, and with a rank dead that
 * fence may never end, while such a job takes an exit without
 * MPI_Finalize for a normal one.  The caller has closed its files (what
 * is written is already atomic). */
int fp_batch_mpi_finalize(int code);

/* Aborts the whole MPI job with exit code `code` (a failure on rank 0
 * that the workers cannot see). */
void fp_batch_mpi_abort(int code);

/* A worker rank sends rank 0 a word this often while it solves, and is
 * taken for lost after this long without one (docs/cluster.md). */
#define FP_BATCH_MPI_HEARTBEAT_S 1.0
#define FP_BATCH_MPI_LOST_AFTER_S 10.0

/* The result of an MPI batch on rank 0. */
typedef struct fp_batch_mpi_counts {
  int32_t size;        /* ranks */
  int32_t *per_rank;   /* items each rank ran ([0]: 0), size of them; free() */
  bool *rank_lost;     /* the ranks lost in this run, size of them; free() */
  int32_t n_lost;      /* items in flight on a rank when the last MPI run over
                          DIR died (found at the start of this one) */
  char lost[1024];     /* them: "id-prefix (rank R: source)", "; "-joined */
  int32_t n_lost_now;  /* items whose worker rank was lost in this run (the
                          job survived it: mpirun --enable-recovery) */
  char lost_now[1024]; /* them: the error recorded for each, "; "-joined */
} fp_batch_mpi_counts;

/* Runs the batch of items[0..n) over every rank (each rank calls it,
 * with the same items).  On rank 0 (which must hold DIR's lock) it
 * behaves as fp_batch_run, with progress and cancellation, and fills
 * *last and *counts; on the workers it returns when rank 0 says there is
 * nothing more (FP_OK), and *last and *counts are untouched.  A worker
 * rank silent for FP_BATCH_MPI_LOST_AFTER_S, or that a send to fails, is
 * lost: its item is recorded as an error item (fp_batch_item_lost), it
 * is sent nothing more, and the others finish the batch.  A cancelled
 * rank 0, or one left without workers, fails with FP_EINTERNAL naming
 * the items in flight or not run, and assembles what finished.  A worker
 * that hears nothing from rank 0 for FP_BATCH_MPI_LOST_AFTER_S once it
 * has had an item fails with FP_EINTERNAL.  FP_EIO, FP_ENOMEM,
 * FP_EINTERNAL. */
fp_status fp_batch_mpi_run(const fp_batch_item *items, int32_t n,
                           const fp_batch_options *o, fp_batch_progress *last,
                           fp_batch_mpi_counts *counts, fp_error *err);

#endif /* FP_BATCH_MPI_H */
