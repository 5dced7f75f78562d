/*
 * cuda_gen.h -- the CUDA source generator (cuda_gen.c; plain C, always
 * built): one kernel per group of a schedule, which the CUDA backend
 * (cuda.c) compiles with NVRTC and the emulation test runs on the CPU.
 */
#ifndef FP_EXEC_CUDA_GEN_H
#define FP_EXEC_CUDA_GEN_H

#include <stdint.h>

#include "cuda_exec/schedule.h"

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

#endif /* FP_EXEC_CUDA_GEN_H */
