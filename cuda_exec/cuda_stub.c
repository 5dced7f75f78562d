/*
 * cuda_stub.c -- the CUDA entry points of a build without the CUDA
 * toolkit: every one says so with FP_ENOTBUILT, so callers (the CLI, the
 * tests) can tell "not built" from "no device" and from a failure.
 */
#include <stdlib.h>

#include "cuda_exec/cuda.h"
#include "cuda_exec/schedule.h"

bool fp_exec_cuda_built(void) {
  return false;
}

fp_status fp_exec_cuda_available(fp_error *err) {
  return fp_error_set(err, FP_ENOTBUILT,
                      "exec: this fuseplan was built without CUDA "
                      "(configure --with-cuda)");
}

void fx_compiled_free(fx_compiled *c) {
  (void)c;
}

fp_status fx_cuda_run(const fx_sched *s, const fp_exec_params *prm,
                      bool keep_outputs, fx_result *r, fx_compiled **cc,
                      double *compile_s, fp_error *err) {
  (void)cc;
  (void)s;
  (void)prm;
  (void)keep_outputs;
  (void)r;
  (void)compile_s;
  return fp_exec_cuda_available(err);
}

fp_status fp_exec_cuda_compile_plan(const fp_graph *g, const fp_plan *p,
                                    const fp_exec_params *params,
                                    int32_t *kernels, uint64_t *cubin_bytes,
                                    double *seconds, fp_error *err) {
  (void)g;
  (void)p;
  (void)params;
  (void)kernels;
  (void)cubin_bytes;
  (void)seconds;
  return fp_exec_cuda_available(err);
}

fp_status fp_exec_cuda_compile_source(const char *src, const char *arch,
                                      uint64_t *cubin_bytes, fp_error *err) {
  (void)src;
  (void)arch;
  (void)cubin_bytes;
  return fp_exec_cuda_available(err);
}
