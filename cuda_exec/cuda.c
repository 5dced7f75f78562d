/*
 * cuda.c -- the CUDA backend: the kernels of cuda_gen.c compiled by NVRTC
 * into one CUBIN per plan (one kernel per group), loaded and launched
 * through the runtime API (cudaLibraryLoadData, cudaLibraryGetKernel,
 * cudaLaunchKernel: never the driver library, so a binary built here
 * starts on machines without a GPU driver).
 *
 * Memory: every tracked buffer is allocated stream-ordered from the
 * device's default pool (cudaMallocAsync / cudaFreeAsync) at the step the
 * schedule says, and a counter of the declared bytes gives the exact peak;
 * the pool's high-water marks (used, reserved) are reported beside it,
 * they include the pool's rounding.  Scratch slots (values staged between
 * phases, surrogate digests) come from cudaMalloc, outside the pool.
 * Time: a CUDA event pair around each group's launches.
 */
#include <cuda_runtime_api.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_exec/cuda.h"
#include "cuda_exec/cuda_gen.h"
#include "cuda_exec/schedule.h"
#include "model/util.h"

#define BLOCK 256
#define MAX_GRID 65535u

bool fp_exec_cuda_built(void) {
  return true;
}

fp_status fp_exec_cuda_available(fp_error *err) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n <= 0) {
    (void)cudaGetLastError(); /* clear the sticky error */
    return fp_error_set(err, FP_ENODEVICE, "exec: no usable CUDA device (%s)",
                        e != cudaSuccess ? cudaGetErrorString(e)
                                         : "no device found");
  }
  return FP_OK;
}

/* Copies the first line of the NVRTC log that says "error" (or the first
 * line) into err. */
static fp_status log_error(nvrtcProgram prog, const char *what, fp_error *err) {
  size_t n = 0;
  char *log = NULL;
  if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 0 &&
      (log = malloc(n)) && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) {
    char *line = strstr(log, "error");
    line = line ? line : log;
    size_t len = strcspn(line, "\n");
    fp_error_set(err, FP_EINTERNAL, "exec: NVRTC could not compile %s: %.*s",
                 what, (int)(len < 300 ? len : 300), line);
  } else {
    fp_error_set(err, FP_EINTERNAL, "exec: NVRTC could not compile %s", what);
  }
  free(log);
  return FP_EINTERNAL;
}

/* Compiles src with NVRTC for arch into a CUBIN (*cubin, malloc'ed). */
static fp_status compile(const char *src, const char *arch, char **cubin,
                         size_t *size, fp_error *err) {
  nvrtcProgram prog;
  char opt[64];
  *cubin = NULL;
  nvrtcResult r = nvrtcCreateProgram(&prog, src, "fuseplan.cu", 0, NULL, NULL);
  if (r != NVRTC_SUCCESS)
    return fp_error_set(err, FP_EINTERNAL, "exec: NVRTC: %s",
                        nvrtcGetErrorString(r));
  snprintf(opt, sizeof opt, "--gpu-architecture=%s", arch);
  /* No contraction into fused multiply-adds: the CPU backend computes
   * every product and sum separately. */
  const char *opts[] = {opt, "--fmad=false"};
  fp_status st = FP_OK;
  if (nvrtcCompileProgram(prog, 2, opts) != NVRTC_SUCCESS) {
    st = log_error(prog, "the kernels", err);
    goto done;
  }
  if (nvrtcGetCUBINSize(prog, size) != NVRTC_SUCCESS ||
      !(*cubin = malloc(*size)) ||
      nvrtcGetCUBIN(prog, *cubin) != NVRTC_SUCCESS) {
    free(*cubin);
    *cubin = NULL;
    st = fp_error_set(err, FP_EINTERNAL, "exec: NVRTC: no CUBIN for %s", arch);
  }
done:
  nvrtcDestroyProgram(&prog);
  return st;
}

fp_status fp_exec_cuda_compile_source(const char *src, const char *arch,
                                      uint64_t *cubin_bytes, fp_error *err) {
  char *cubin;
  size_t size = 0;
  if (!src || !arch || !cubin_bytes)
    return fp_error_set(err, FP_EARG, "exec: NULL argument");
  fp_status st = compile(src, arch, &cubin, &size, err);
  free(cubin);
  *cubin_bytes = size;
  return st;
}

/* The kernels of every group and their joint source (prelude once). */
typedef struct program {
  int32_t n;
  fx_kernel *k;
  char *src;
} program;

/* Frees the kernels and the joint source (a zeroed program too). */
static void program_free(program *P) {
  for (int32_t t = 0; P->k && t < P->n; t++)
    fx_kernel_free(&P->k[t]);
  free(P->k);
  free(P->src);
  memset(P, 0, sizeof *P);
}

/* Generates every group's kernel and the joint source; FP_ENOMEM (free
 * P either way). */
static fp_status program_build(const fx_sched *s, program *P, fp_error *err) {
  size_t len = 0;
  memset(P, 0, sizeof *P);
  P->k = calloc((size_t)s->steps + 1, sizeof *P->k);
  if (!P->k)
    return fp_error_set(err, FP_ENOMEM, "exec: out of memory");
  P->n = s->steps;
  FILE *f = open_memstream(&P->src, &len);
  if (!f)
    return fp_error_set(err, FP_ENOMEM, "exec: out of memory");
  fputs(fx_cuda_prelude(), f);
  fp_status st = FP_OK;
  for (int32_t t = 0; t < s->steps && st == FP_OK; t++)
    if ((st = fx_gen_kernel(s, t, &P->k[t], err)) == FP_OK)
      fputs(P->k[t].src, f);
  if (fclose(f) != 0 || !P->src)
    st = st != FP_OK ? st : fp_error_set(err, FP_ENOMEM, "exec: out of memory");
  return st;
}

fp_status fp_exec_cuda_compile_plan(const fp_graph *g, const fp_plan *p,
                                    const fp_exec_params *params,
                                    int32_t *kernels, uint64_t *cubin_bytes,
                                    double *seconds, fp_error *err) {
  fp_exec_params dflt;
  fx_sched s;
  program P;
  char *cubin = NULL;
  size_t size = 0;
  memset(&s, 0, sizeof s);
  memset(&P, 0, sizeof P);
  if (!params) {
    fp_exec_params_init(&dflt);
    params = &dflt;
  }
  if (!g || !p || !kernels || !cubin_bytes || !seconds)
    return fp_error_set(err, FP_EARG, "exec: NULL argument");
  fp_status st = fp_exec_params_check(params, err);
  if (st == FP_OK)
    st = fp_plan_check(g, p, 0, err);
  if (st == FP_OK)
    st = fx_sched_build(g, p, &s, err);
  double t0 = fp_clock_now();
  if (st == FP_OK)
    st = program_build(&s, &P, err);
  if (st == FP_OK)
    st = compile(P.src, params->arch, &cubin, &size, err);
  *seconds = fp_clock_now() - t0;
  *kernels = st == FP_OK ? P.n : 0;
  *cubin_bytes = size;
  free(cubin);
  program_free(&P);
  fx_sched_free(&s);
  return st;
}

/* ---- running ------------------------------------------------------------- */

typedef struct gpu_run {
  const fx_sched *s;
  cudaStream_t stream;
  cudaMemPool_t pool;
  cudaLibrary_t lib;
  cudaKernel_t *kern; /* per step */
  void **dev;         /* per buffer: device storage while allocated */
  cudaEvent_t *ev;    /* 2 per step */
  uint64_t live, peak;
} gpu_run;

/* Sets err from a CUDA error; returns FP_EINTERNAL. */
static fp_status cuda_fail(cudaError_t e, const char *what, fp_error *err) {
  (void)cudaGetLastError();
  return fp_error_set(err, FP_EINTERNAL, "exec: CUDA: %s: %s", what,
                      cudaGetErrorString(e));
}

#define CK(call, what)                                                         \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      st = cuda_fail(e_, what, err);                                           \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

/* Allocates buffer b from the pool, counting its declared bytes; inputs
 * get their values (the same as the CPU backend's). */
static fp_status dev_alloc(gpu_run *G, int32_t b, uint64_t seed,
                           fp_error *err) {
  uint64_t bytes = fp_graph_buffer(G->s->g, b)->bytes;
  size_t n = (size_t)((bytes + 3) / 4 * 4);
  fp_status st = FP_OK;
  unsigned char *host = NULL;
  void *d = NULL;
  CK(cudaMallocAsync(&d, n ? n : 4, G->stream), "cudaMallocAsync");
  G->dev[b] = d; /* only once it exists: teardown frees what is set */
  G->live += fx_alloc_bytes(G->s, b); /* 0: an in-place takeover */
  G->peak = G->live > G->peak ? G->live : G->peak;
  if (G->s->alloc_at[b] < 0) {
    if (!(host = malloc(n ? n : 4)))
      return fp_error_set(err, FP_ENOMEM, "exec: out of memory");
    fx_fill_input(host, bytes, seed, b);
    /* On the allocating stream (the memory exists in its order only),
     * then wait: the host buffer is freed below. */
    CK(cudaMemcpyAsync(G->dev[b], host, n ? n : 4, cudaMemcpyHostToDevice,
                       G->stream),
       "cudaMemcpyAsync");
    CK(cudaStreamSynchronize(G->stream), "cudaStreamSynchronize");
  }
fail:
  free(host);
  return st;
}

/* Frees buffer b stream-ordered and uncounts its declared bytes. */
static fp_status dev_free(gpu_run *G, int32_t b, fp_error *err) {
  fp_status st = FP_OK;
  CK(cudaFreeAsync(G->dev[b], G->stream), "cudaFreeAsync");
  G->dev[b] = NULL;
  G->live -= fx_free_bytes(G->s, b);
fail:
  return st;
}

/* Allocates group t's workspace (docs/cost-model.md#workspaces: the
 * temporaries its kernels hold during the call) stream-ordered around
 * the launches and counts it at the step's peak. */
static fp_status dev_workspace(gpu_run *G, int32_t t, void **d, fp_error *err) {
  const fx_sched *s = G->s;
  uint64_t ws = fp_graph_group_workspace(s->g, s->gnodes + s->goff[t],
                                         s->goff[t + 1] - s->goff[t]);
  fp_status st = FP_OK;
  *d = NULL;
  if (ws == 0)
    return FP_OK;
  CK(cudaMallocAsync(d, (size_t)ws, G->stream), "cudaMallocAsync");
  G->peak = G->live + ws > G->peak ? G->live + ws : G->peak;
fail:
  return st;
}

/* Launches every phase of group t's kernel; scratch slots are allocated
 * (zeroed) around it. */
static fp_status launch_group(gpu_run *G, int32_t t, const fx_kernel *k,
                              fp_error *err) {
  fp_status st = FP_OK;
  size_t na = (size_t)k->n_args + 1;
  void **ptr = calloc(na, sizeof *ptr), **args = calloc(na + 1, sizeof *args);
  void **scr = calloc((size_t)k->n_scratch + 1, sizeof *scr);
  int phase = 0;
  if (!ptr || !args || !scr) {
    st = fp_error_set(err, FP_ENOMEM, "exec: out of memory");
    goto fail;
  }
  for (int32_t i = 0; i < k->n_scratch; i++) {
    size_t n = (size_t)((k->scratch_bytes[i] + 3) / 4 * 4);
    CK(cudaMalloc(&scr[i], n ? n : 4), "cudaMalloc (scratch)");
    CK(cudaMemsetAsync(scr[i], 0, n ? n : 4, G->stream), "cudaMemsetAsync");
  }
  args[0] = &phase;
  for (int32_t a = 0; a < k->n_args; a++) {
    int32_t b = k->arg_buf[a];
    ptr[a] = b >= 0 ? G->dev[b] : scr[-1 - b];
    args[a + 1] = &ptr[a];
  }
  CK(cudaEventRecord(G->ev[2 * t], G->stream), "cudaEventRecord");
  for (int32_t l = 0; l < k->n_launch; l++) {
    uint64_t blocks = (k->launch[l].threads + BLOCK - 1) / BLOCK;
    dim3 grid = {(unsigned)(blocks < MAX_GRID ? blocks : MAX_GRID), 1, 1};
    dim3 block = {BLOCK, 1, 1};
    phase = k->launch[l].phase;
    CK(cudaLaunchKernel((const void *)G->kern[t], grid, block, args, 0,
                        G->stream),
       "cudaLaunchKernel");
  }
  CK(cudaEventRecord(G->ev[2 * t + 1], G->stream), "cudaEventRecord");
fail:
  /* cudaFree waits for the device, so the launches above are done. */
  for (int32_t i = 0; scr && i < k->n_scratch; i++)
    if (scr[i])
      cudaFree(scr[i]);
  free(ptr);
  free(args);
  free(scr);
  return st;
}

/* Loads the CUBIN and looks up every group's kernel. */
static fp_status load_program(gpu_run *G, const program *P, const char *cubin,
                              fp_error *err) {
  fp_status st = FP_OK;
  CK(cudaLibraryLoadData(&G->lib, cubin, NULL, NULL, 0, NULL, NULL, 0),
     "cudaLibraryLoadData");
  for (int32_t t = 0; t < P->n; t++)
    CK(cudaLibraryGetKernel(&G->kern[t], G->lib, P->k[t].name),
       "cudaLibraryGetKernel");
fail:
  return st;
}

/* Stream, pool (high-water marks reset, memory kept between frees),
 * events. */
static fp_status setup(gpu_run *G, fp_error *err) {
  fp_status st = FP_OK;
  uint64_t zero = 0, keep = UINT64_MAX;
  CK(cudaSetDevice(0), "cudaSetDevice");
  CK(cudaStreamCreate(&G->stream), "cudaStreamCreate");
  CK(cudaDeviceGetDefaultMemPool(&G->pool, 0), "cudaDeviceGetDefaultMemPool");
  CK(cudaMemPoolSetAttribute(G->pool, cudaMemPoolAttrReleaseThreshold, &keep),
     "cudaMemPoolSetAttribute");
  CK(cudaMemPoolTrimTo(G->pool, 0), "cudaMemPoolTrimTo");
  CK(cudaMemPoolSetAttribute(G->pool, cudaMemPoolAttrUsedMemHigh, &zero),
     "cudaMemPoolSetAttribute");
  CK(cudaMemPoolSetAttribute(G->pool, cudaMemPoolAttrReservedMemHigh, &zero),
     "cudaMemPoolSetAttribute");
  for (int32_t i = 0; i < 2 * G->s->steps; i++)
    CK(cudaEventCreate(&G->ev[i]), "cudaEventCreate");
fail:
  return st;
}

/* Runs every step: allocations, the group's launches, frees. */
static fp_status run_steps(gpu_run *G, const program *P,
                           const fp_exec_params *prm, fx_result *r,
                           fp_error *err) {
  const fx_sched *s = G->s;
  fp_status st = FP_OK;
  for (int32_t t = 0; t < s->steps && st == FP_OK; t++) {
    for (int32_t i = s->aoff[t]; i < s->aoff[t + 1] && st == FP_OK; i++)
      st = dev_alloc(G, s->alloc_list[i], prm->seed, err);
    void *ws = NULL;
    if (st == FP_OK)
      st = dev_workspace(G, t, &ws, err);
    if (st == FP_OK)
      st = launch_group(G, t, &P->k[t], err);
    cudaError_t fe = ws ? cudaFreeAsync(ws, G->stream) : cudaSuccess;
    if (fe != cudaSuccess && st == FP_OK)
      st = cuda_fail(fe, "cudaFreeAsync", err);
    for (int32_t i = s->foff[t]; i < s->foff[t + 1] && st == FP_OK; i++)
      st = dev_free(G, s->free_list[i], err);
    uint64_t scratch = 0;
    for (int32_t i = 0; i < P->k[t].n_scratch; i++)
      scratch += P->k[t].scratch_bytes[i];
    r->scratch_bytes = scratch > r->scratch_bytes ? scratch : r->scratch_bytes;
    r->launches += P->k[t].n_launch;
  }
  if (st == FP_OK && s->steps == 0)
    for (int32_t i = s->aoff[0]; i < s->aoff[1] && st == FP_OK; i++)
      st = dev_alloc(G, s->alloc_list[i], prm->seed, err);
  return st;
}

/* Times, traffic, pool marks and (if asked) the outputs of a finished
 * run. */
static fp_status collect(gpu_run *G, bool keep, fx_result *r, fp_error *err) {
  const fx_sched *s = G->s;
  fp_status st = FP_OK;
  fx_reads reads;
  if (fx_reads_init(&reads, s->buffers) != 0) {
    st = fp_error_set(err, FP_ENOMEM, "exec: out of memory");
    goto fail;
  }
  CK(cudaStreamSynchronize(G->stream), "kernel execution");
  for (int32_t t = 0; t < s->steps; t++) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, G->ev[2 * t], G->ev[2 * t + 1]),
       "cudaEventElapsedTime");
    r->group_time_s[t] = 1e-3 * ms;
    r->time_s += r->group_time_s[t];
    fx_kernel_traffic(s, t, &reads, &r->write_bytes);
  }
  r->read_bytes = reads.total;
  r->peak_bytes = G->peak;
  CK(cudaMemPoolGetAttribute(G->pool, cudaMemPoolAttrUsedMemHigh,
                             &r->pool_used_high),
     "cudaMemPoolGetAttribute");
  CK(cudaMemPoolGetAttribute(G->pool, cudaMemPoolAttrReservedMemHigh,
                             &r->pool_reserved_high),
     "cudaMemPoolGetAttribute");
  int32_t n_out = fp_graph_output_count(s->g);
  if (keep && !(r->outputs = calloc((size_t)n_out + 1, sizeof *r->outputs))) {
    st = fp_error_set(err, FP_ENOMEM, "exec: out of memory");
    goto fail;
  }
  for (int32_t i = 0; keep && i < n_out; i++) {
    int32_t b = fp_graph_output(s->g, i);
    uint64_t bytes = fp_graph_buffer(s->g, b)->bytes;
    if (!(r->outputs[i] = malloc((size_t)bytes + 4))) {
      st = fp_error_set(err, FP_ENOMEM, "exec: out of memory");
      goto fail;
    }
    CK(cudaMemcpy(r->outputs[i], G->dev[b], (size_t)bytes,
                  cudaMemcpyDeviceToHost),
       "cudaMemcpy");
  }
fail:
  fx_reads_free(&reads);
  return st;
}

/* Releases everything a run holds (also after a failure). */
static void teardown(gpu_run *G) {
  const fx_sched *s = G->s;
  if (G->stream)
    cudaStreamSynchronize(G->stream);
  for (int32_t b = 0; G->dev && b < s->buffers; b++)
    if (G->dev[b])
      cudaFreeAsync(G->dev[b], G->stream);
  for (int32_t i = 0; G->ev && i < 2 * s->steps; i++)
    if (G->ev[i])
      cudaEventDestroy(G->ev[i]);
  if (G->stream) {
    cudaStreamSynchronize(G->stream);
    cudaStreamDestroy(G->stream);
  }
  if (G->lib)
    cudaLibraryUnload(G->lib);
  if (G->pool)
    cudaMemPoolTrimTo(G->pool, 0);
  (void)cudaGetLastError();
  free(G->dev);
  free(G->ev);
  free(G->kern);
}

struct fx_compiled {
  program P;
  char *cubin;
};

void fx_compiled_free(fx_compiled *c) {
  if (!c)
    return;
  program_free(&c->P);
  free(c->cubin);
  free(c);
}

/* Generates and compiles the kernels of s into a new fx_compiled. */
static fp_status compile_sched(const fx_sched *s, const char *arch,
                               fx_compiled **out, fp_error *err) {
  size_t size = 0;
  fx_compiled *c = calloc(1, sizeof *c);
  if (!c)
    return fp_error_set(err, FP_ENOMEM, "exec: out of memory");
  fp_status st = program_build(s, &c->P, err);
  if (st == FP_OK)
    st = compile(c->P.src, arch, &c->cubin, &size, err);
  if (st != FP_OK) {
    fx_compiled_free(c);
    return st;
  }
  *out = c;
  return FP_OK;
}

fp_status fx_cuda_run(const fx_sched *s, const fp_exec_params *prm,
                      bool keep_outputs, fx_result *r, fx_compiled **cc,
                      double *compile_s, fp_error *err) {
  gpu_run G;
  memset(&G, 0, sizeof G);
  memset(r, 0, sizeof *r);
  G.s = s;
  /* Counted, never allocated: the bytes another owner holds (cpu.c). */
  G.live = G.peak = fp_graph_outside_live_bytes(s->g);
  G.dev = calloc((size_t)s->buffers + 1, sizeof *G.dev);
  G.ev = calloc(2 * (size_t)s->steps + 1, sizeof *G.ev);
  G.kern = calloc((size_t)s->steps + 1, sizeof *G.kern);
  r->group_time_s = calloc((size_t)s->steps + 1, sizeof *r->group_time_s);
  fp_status st = FP_OK;
  if (!G.dev || !G.ev || !G.kern || !r->group_time_s)
    st = fp_error_set(err, FP_ENOMEM, "exec: out of memory");
  double t0 = fp_clock_now();
  if (st == FP_OK && !*cc) {
    st = compile_sched(s, prm->arch, cc, err);
    *compile_s = fp_clock_now() - t0;
  }
  if (st == FP_OK)
    st = setup(&G, err);
  if (st == FP_OK)
    st = load_program(&G, &(*cc)->P, (*cc)->cubin, err);
  if (st == FP_OK)
    st = run_steps(&G, &(*cc)->P, prm, r, err);
  if (st == FP_OK)
    st = collect(&G, keep_outputs, r, err);
  teardown(&G);
  return st;
}
