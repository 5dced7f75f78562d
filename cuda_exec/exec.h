/*
 * exec.h -- runs a plan and measures it: a CPU reference backend (always
 * built) and a CUDA backend (built when the toolkit is found; NVRTC kernels
 * launched through the runtime API).  See docs/executor.md.
 *
 * A run executes the plan group by group; every group is one kernel.
 * Materialized buffers live in a tracking allocator that counts the graph's
 * declared bytes exactly, so the measured peak and traffic can be held to
 * the evaluator's figures (fp_plan_eval) to the byte.  Nodes with an `op`
 * compute float32 values (docs/ops.md); nodes without one run surrogate
 * kernels that read exactly their declared bytes and write their outputs.
 * With params.check, the graph's outputs are compared with the eager
 * program's (CPU: bitwise; CUDA: against the CPU run, within a tolerance).
 *
 * CUDA headers are included only by files under cuda_exec/.
 */
#ifndef FP_EXEC_H
#define FP_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/eval.h"
#include "../model/graph.h"
#include "../model/plan.h"
#include "../model/status.h"

typedef enum fp_backend { FP_BACKEND_CPU = 0, FP_BACKEND_CUDA = 1 } fp_backend;

/* Outcome of the numerical check. */
typedef enum fp_check {
  FP_CHECK_SKIPPED = 0, /* params.check was false */
  FP_CHECK_PASS = 1,
  FP_CHECK_FAIL = 2
} fp_check;

#define FP_EXEC_DEFAULT_REPEAT 1
#define FP_EXEC_MAX_REPEAT 1000
#define FP_EXEC_DEFAULT_SEED 1
/* CUDA against CPU: |cuda - cpu| <= atol + rtol * |cpu| per element. */
#define FP_EXEC_DEFAULT_RTOL 1e-3
#define FP_EXEC_DEFAULT_ATOL 1e-5
/* Refuse runs whose predicted peak (plus, with a check, the eager
 * reference run) would need more host or device memory than this. */
#define FP_EXEC_DEFAULT_MEMORY_LIMIT ((uint64_t)16 << 30)
#define FP_EXEC_DEFAULT_ARCH "sm_90"
#define FP_EXEC_ARCH_MAX 32

/* Parameters of fp_exec_run: fill with fp_exec_params_init, then change
 * what you need (in the manner of glp_init_iocp). */
typedef struct fp_exec_params {
  fp_backend backend;    /* default FP_BACKEND_CPU */
  int32_t repeat;        /* runs of the plan, 1..FP_EXEC_MAX_REPEAT; the
                            reported times are the fastest run's */
  uint64_t seed;         /* input values */
  bool check;            /* compare outputs with the eager run (default) */
  double rtol, atol;     /* CUDA tolerance, finite, >= 0 */
  uint64_t memory_limit; /* bytes, >= 1 */
  char arch[FP_EXEC_ARCH_MAX]; /* NVRTC target, "sm_NN" */
} fp_exec_params;

/* What a run measured.  Free with fp_exec_report_free. */
typedef struct fp_exec_report {
  fp_metrics predicted;    /* the evaluator's figures for the plan */
  uint64_t peak_bytes;     /* tracking allocator: max bytes live */
  uint64_t read_bytes;     /* bytes kernels loaded from materialized/input
                              buffers (each buffer once per kernel, at the
                              largest extent its loads reached) */
  uint64_t write_bytes;    /* bytes kernels stored to materialized buffers */
  uint64_t traffic_bytes;  /* read + write */
  uint64_t scratch_bytes;  /* most kernel-local bytes one group used for
                              values that are not materialized (CPU: the
                              kernel's temporaries; CUDA: cross-phase
                              staging); outside the tracked peak */
  uint64_t pool_used_high; /* CUDA: stream-ordered pool high-water
                              mark of used bytes (0 on CPU) */
  uint64_t pool_reserved_high; /* CUDA: same, reserved bytes */
  int32_t kernels;             /* groups run (CUDA: launches may be more) */
  int32_t launches;            /* kernel launches of one run */
  int32_t surrogate_nodes;     /* nodes run as surrogate kernels */
  double time_s;               /* fastest run, all kernels */
  double *group_time_s;        /* per group, from the fastest run */
  fp_check check;
  uint64_t compared;   /* output values compared */
  uint64_t mismatches; /* of those, outside the tolerance */
  double max_abs_err, max_rel_err;
  uint32_t output_digest; /* with a check: a digest of the run's output
                             bytes (equal digests: equal outputs) */
  double compile_s;       /* CUDA: NVRTC time for all kernels */
} fp_exec_report;

/* Fills `p` with the defaults above. */
void fp_exec_params_init(fp_exec_params *p);

/* Checks parameters; FP_EARG with a message naming the field. */
fp_status fp_exec_params_check(const fp_exec_params *p, fp_error *err);

/* Releases what a report owns and zeroes it.  NULL is a no-op. */
void fp_exec_report_free(fp_exec_report *r);

/* Runs plan p of graph g on params->backend (NULL params = defaults) and
 * fills *out (zeroed first; free it with fp_exec_report_free, also after
 * a failure).  A failed numerical check is not an error: the call returns
 * FP_OK with out->check == FP_CHECK_FAIL.  Fails with FP_EARG (bad
 * params, NULL g/p/out), FP_EILLEGAL (the plan does not verify),
 * FP_ELIMIT (over params->memory_limit), FP_ENOMEM, FP_ENOTBUILT (CUDA
 * asked of a build without it), FP_ENODEVICE (no usable GPU), or
 * FP_EINTERNAL (a CUDA or NVRTC error, with its message). */
fp_status fp_exec_run(const fp_graph *g, const fp_plan *p,
                      const fp_exec_params *params, fp_exec_report *out,
                      fp_error *err);

/* Whether this build has the CUDA backend. */
bool fp_exec_cuda_built(void);

/* FP_OK when a CUDA device can be used; FP_ENOTBUILT or FP_ENODEVICE
 * (message: the CUDA error) otherwise.  Never fails hard. */
fp_status fp_exec_cuda_available(fp_error *err);

/* Generates the CUDA C source of every group of the legal plan p (one
 * kernel per group) and compiles each with NVRTC for params->arch,
 * without a GPU.  *kernels gets the number compiled, *cubin_bytes their
 * total size, *seconds the compile time.  FP_EILLEGAL, FP_EARG,
 * FP_ENOTBUILT, FP_ENOMEM, or FP_EINTERNAL with the NVRTC log's first
 * line when a kernel does not compile. */
fp_status fp_exec_cuda_compile_plan(const fp_graph *g, const fp_plan *p,
                                    const fp_exec_params *params,
                                    int32_t *kernels, uint64_t *cubin_bytes,
                                    double *seconds, fp_error *err);

/* Compiles one CUDA C source text with NVRTC (for tests of the error
 * path): FP_OK and *cubin_bytes, or FP_EINTERNAL with the log's first
 * error line; FP_ENOTBUILT without CUDA. */
fp_status fp_exec_cuda_compile_source(const char *src, const char *arch,
                                      uint64_t *cubin_bytes, fp_error *err);

#endif /* FP_EXEC_H */
