/*
 * exec_internal.h -- the executor's backends as the driver (exec.c) calls
 * them: the CPU run (cpu.c), the CUDA run (cuda.c, or cuda_stub.c in a
 * build without CUDA), and the CUDA source generator (cuda_gen.c) that
 * cuda.c uses.  What they share lies below them, in schedule.h.
 */
#ifndef FP_EXEC_INTERNAL_H
#define FP_EXEC_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda_exec/exec.h"
#include "cuda_exec/schedule.h"

/* Runs the schedule on the CPU.  keep_outputs: copy the graph's outputs
 * into r->outputs.  FP_ENOMEM. */
fp_status fx_cpu_run(const fx_sched *s, const fp_exec_params *prm,
                     bool keep_outputs, fx_result *r, fp_error *err);

/* A schedule's kernels, compiled once and reused by repeated runs. */
typedef struct fx_compiled fx_compiled;

/* Frees compiled kernels (NULL is a no-op). */
void fx_compiled_free(fx_compiled *c);

/* Runs the schedule on the GPU (cuda.c; cuda_stub.c: FP_ENOTBUILT).  When
 * *cc is NULL the kernels are generated and compiled (the time goes to
 * *compile_s) and kept in *cc for the next run; the caller frees it. */
fp_status fx_cuda_run(const fx_sched *s, const fp_exec_params *prm,
                      bool keep_outputs, fx_result *r, fx_compiled **cc,
                      double *compile_s, fp_error *err);

/* ---- CUDA source generation (cuda_gen.c; plain C, always built) ------- */

/* One launch of a group's kernel: phase `phase` over `threads` work
 * items. */
typedef struct fx_launch {
  int32_t phase;
  uint64_t threads;
} fx_launch;

/* The generated kernel of one group. */
typedef struct fx_kernel {
  char *src;        /* CUDA C source (owned) */
  char name[32];    /* extern "C" kernel name */
  int32_t n_launch; /* launches, in order */
  fx_launch *launch;
  int32_t n_args;   /* kernel arguments: buffer pointers, in order ... */
  int32_t *arg_buf; /* ... graph buffer (>= 0) or -1 - scratch slot */
  int32_t n_scratch;
  uint64_t *scratch_bytes; /* per scratch slot */
} fx_kernel;

/* The definitions every kernel source needs once, before it (types, the
 * hash of the surrogates, the grid-stride loop). */
const char *fx_cuda_prelude(void);

/* Generates the kernel of group t (its source without the prelude).
 * FP_ENOMEM. */
fp_status fx_gen_kernel(const fx_sched *s, int32_t t, fx_kernel *k,
                        fp_error *err);

/* Adds the bytes group t's generated kernel loads to `reads` and the
 * bytes it stores to *write_bytes (see cuda_gen.c). */
void fx_kernel_traffic(const fx_sched *s, int32_t t, fx_reads *reads,
                       uint64_t *write_bytes);

/* Frees a generated kernel. */
void fx_kernel_free(fx_kernel *k);

#endif /* FP_EXEC_INTERNAL_H */
