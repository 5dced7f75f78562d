/*
 * cuda.h -- the CUDA backend as the driver (driver.c) calls it: cuda.c with
 * the toolkit, cuda_stub.c (FP_ENOTBUILT) without it.  Not the toolkit's
 * cuda.h: it is always included with its folder, "cuda_exec/cuda.h".
 */
#ifndef FP_EXEC_CUDA_H
#define FP_EXEC_CUDA_H

#include <stdbool.h>

#include "cuda_exec/exec.h"
#include "cuda_exec/schedule.h"

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

#endif /* FP_EXEC_CUDA_H */
